"""What other devices send to Ferry's device: Olm messages decrypted (a new session a peer starts
is the one Ferry's next room keys go over), a wedged session repaired with m.dummy, and room-key
requests answered only for the person's own verified devices.

The other devices are driven by hand (olmdevice.py) with libolm or vodozemac, never Ferry's code:
they lose sessions, start new ones and send requests as clients do. Ferry reads what was sent to
it with the sync it makes before each encrypted event, so each step is followed by a share.
"""

from __future__ import annotations

import base64
import os

import pytest

from cryptopeers import PEERS, Vodozemac
from ferryenv import EX_OK
from matrixflow import sign_in
from olmdevice import OlmDevice
from secretstorage import bootstrap

MEGOLM = "m.megolm.v1.aes-sha2"


@pytest.fixture
def ferry(new_session, homeserver, matrix_user):
    """(session, me, device id, friend)."""
    me, friend = matrix_user("todevice"), matrix_user("friend")
    session = new_session()
    account = sign_in(session, homeserver, me)
    yield session, me, account["device-id"], friend
    session.stop()


def encrypted_room(homeserver, owner, friend) -> str:
    room = homeserver.create_room(owner.token, name="Keys", encrypted=True, invite=[friend.user_id])
    homeserver.join(friend.token, room)
    return room


def share_text(session, text: str, room: str) -> None:
    done = session.ferry("text", text, "--to", room, timeout=120)
    assert done.returncode == EX_OK, done.stderr


def room_keys(payloads: list[dict]) -> dict[str, dict]:
    """The room keys among decrypted payloads, by room id."""
    return {p["content"]["room_id"]: p for p in payloads if p.get("type") == "m.room_key"}


@pytest.mark.parametrize("peer", PEERS, ids=lambda peer: peer.name)
def test_a_device_that_lost_its_session_starts_a_new_one_and_gets_the_rooms_key_again_over_it(
        ferry, homeserver, peer):
    session, me, device, friend = ferry
    room, other_room = encrypted_room(homeserver, me, friend), encrypted_room(homeserver, me, friend)
    reader = OlmDevice(homeserver, friend, peer())

    # Given a device that read Ferry's room key, then lost its Olm session with Ferry
    share_text(session, "first", room)
    first = room_keys(reader.payloads())[room]
    reader.lose_session()
    # (so a key over the old session is lost on it: wedged)
    share_text(session, "elsewhere", other_room)
    assert [p.get("type") for p in reader.payloads()] == [None], "undecryptable on the lost session"

    # When it starts a new session with Ferry's device and says so with m.dummy
    reader.start_session(me.user_id, device)
    reader.send_olm(me.user_id, device, "m.dummy", {})

    # Then Ferry's next event in the room gives it the room's current key again, over that session
    share_text(session, "second", room)
    payloads = reader.payloads()
    assert [p.get("error") for p in payloads] == [None] * len(payloads), payloads
    again = room_keys(payloads)[room]
    assert again["content"]["session_id"] == first["content"]["session_id"]
    assert (again["sender"], again["recipient"]) == (me.user_id, friend.user_id)


def test_a_message_ferry_cannot_decrypt_gets_its_sender_a_new_session_and_m_dummy_once_an_hour(ferry, homeserver):
    session, me, device, friend = ferry
    room = encrypted_room(homeserver, me, friend)
    peer = OlmDevice(homeserver, friend, Vodozemac())

    # Given a device Ferry holds a session with (it sent it the room's key)
    share_text(session, "before", room)
    assert [p["type"] for p in peer.payloads()] == ["m.room_key"]
    # And an Olm message from it that Ferry cannot decrypt (a session Ferry does not have)
    junk = {"type": 1, "body": base64.b64encode(b"\x03" + os.urandom(80)).decode().rstrip("=")}
    ferry_curve = peer.keys_of(me.user_id, device)["curve25519"]
    content = {"algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": peer.peer.curve25519,
               "ciphertext": {ferry_curve: junk}}
    peer.send(me.user_id, device, "m.room.encrypted", content)

    # When Ferry next syncs (before an encrypted share)
    share_text(session, "after the junk", room)

    # Then the device gets m.dummy from Ferry over a new session it can start from the pre-key
    # message, and the room's key again over the same session
    payloads = peer.payloads()
    assert [p.get("error") for p in payloads] == [None] * len(payloads), payloads
    assert [p["type"] for p in payloads] == ["m.dummy", "m.room_key"], payloads
    dummy = payloads[0]
    assert (dummy["sender"], dummy["recipient"]) == (me.user_id, friend.user_id)
    assert dummy["recipient_keys"] == {"ed25519": peer.peer.ed25519}

    # When it happens again within the hour (another message: the same one again is known and dropped)
    other_junk = {"type": 1, "body": base64.b64encode(b"\x03" + os.urandom(80)).decode().rstrip("=")}
    peer.send(me.user_id, device, "m.room.encrypted", {**content, "ciphertext": {ferry_curve: other_junk}})
    share_text(session, "more junk", room)

    # Then no second m.dummy: a device gets one new session an hour (and Ferry says why)
    assert [p.get("type") for p in peer.payloads()] == []
    assert "given a new session less than an hour ago" in session.log_tail(400)


def test_room_key_requests_are_answered_for_the_persons_own_verified_devices_only(ferry, homeserver, matrix_user):
    session, me, device, friend = ferry
    # Given Ferry verified with the recovery key, and a text it sent into an encrypted room
    identity, storage = bootstrap(homeserver, me)
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)
    assert done.returncode == EX_OK, done.stderr
    room, other_room = encrypted_room(homeserver, me, friend), encrypted_room(homeserver, me, friend)
    share_text(session, "Asked for later", room)
    [event] = [e for e in homeserver.call("GET", f"/_matrix/client/v3/rooms/{room}/messages", me.token,
                                          query={"dir": "b", "limit": 10})["chunk"]
               if e["type"] == "m.room.encrypted" and e["sender"] == me.user_id]

    # And, added after it, a device of the person's that they verified, one they did not, and a
    # friend's device: each asks Ferry's device for the room's key
    verified, unverified, strangers = (OlmDevice(homeserver, me, Vodozemac()), OlmDevice(homeserver, me, Vodozemac()),
                                       OlmDevice(homeserver, friend, Vodozemac()))
    identity.verify_device(homeserver, me.token, verified.device_id)
    for asking in (verified, unverified, strangers):
        asking.send(me.user_id, device, "m.room_key_request", {
            "action": "request", "request_id": f"req-{asking.device_id}", "requesting_device_id": asking.device_id,
            "body": {"algorithm": MEGOLM, "room_id": room, "session_id": event["content"]["session_id"],
                     "sender_key": event["content"]["sender_key"]}})

    # When Ferry next syncs (before an encrypted share elsewhere)
    share_text(session, "Elsewhere", other_room)

    # Then only the verified device is forwarded the key, and reads the text with it
    forwarded = {d: [p for p in d.payloads() if p.get("type") == "m.forwarded_room_key"]
                 for d in (verified, unverified, strangers)}
    assert forwarded[unverified] == [] and forwarded[strangers] == []
    [key] = forwarded[verified]
    content = key["content"]
    assert (content["room_id"], content["session_id"], content["algorithm"]) == (
        room, event["content"]["session_id"], MEGOLM)
    assert content["forwarding_curve25519_key_chain"] == []
    restored = Vodozemac.group_import(content["session_key"])
    plaintext, index = restored.decrypt(event["content"]["ciphertext"])
    assert index == 0 and b"Asked for later" in plaintext
