"""Shares into end-to-end encrypted rooms, read by clients we did not write.

Ferry signs in to a real Synapse, makes its device and sends; readers are matrix-nio 0.25 (over
libolm) and matrix-nio 0.26 (over vodozemac), each a device of its own that decrypts with its own
code (nioreaders). What is checked: every share kind arrives decryptable and the same as sent
(attachments by SHA-256 of the decrypted bytes), nothing of Ferry's reaches an encrypted room as a
plain m.room.message, a device added later gets the key of the next message, a member who left
does not get the new one, and neither a kill -9 nor a revoked sign-in makes a second message.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import urllib.parse

import pytest

from crosssigning import CrossSigningIdentity
from cryptopeers import Vodozemac, device_keys, signed
from ferryenv import EX_OK, file_uri, wait_for
from hostileproxy import HostileProxy
from matrixflow import new_share_id, png_of_size, sign_in, sign_in_call, wait_for_state
from nioreaders import READERS

MEGOLM = "m.megolm.v1.aes-sha2"


@pytest.fixture(scope="module")
def ferry(new_session, homeserver):
    """(session, user, device id): a Ferry signed in as a user of its own on the shared server."""
    user = homeserver.new_user("e2ee")
    session = new_session()
    account = sign_in(session, homeserver, user)
    yield session, user, account["device-id"]
    session.stop()


def encrypted_room(homeserver, owner, *members, name: str = "Secret") -> str:
    room = homeserver.create_room(owner.token, name=name, encrypted=True, invite=[m.user_id for m in members])
    for member in members:
        homeserver.join(member.token, room)
    return room


def plain_messages_from(homeserver, token: str, room: str, sender: str) -> list[dict]:
    """Ferry's m.room.message events in the room, read over plain HTTP: must stay empty."""
    return [e for e in homeserver.messages(token, room) if e["sender"] == sender]


def decrypted(reader, room: str, sender: str) -> list[dict]:
    """The reader's view of the sender's encrypted events, oldest first."""
    return [e for e in reader.encrypted_messages(room) if e["sender"] == sender]


@pytest.mark.parametrize("kind", READERS)
def test_a_text_arrives_encrypted_and_the_reader_decrypts_it(ferry, homeserver, matrix_user, nio_reader, kind):
    session, me, device = ferry
    # Given a reader on a device of its own in an encrypted room with Ferry's person
    friend = matrix_user("reader")
    reader = nio_reader(kind, friend)
    room = encrypted_room(homeserver, me, friend)

    # When a text is shared there with the CLI (which waits until it is sent)
    done = session.ferry("text", "Only for us ✓", "--to", room)
    assert done.returncode == EX_OK, done.stderr

    # Then the reader decrypts exactly that text, from Ferry's device, by Megolm
    [event] = decrypted(reader, room, me.user_id)
    assert event["decrypted"], event
    assert event["decrypted_type"] == "m.room.message" and event["plaintext_room_id"] == room
    assert (event["content"]["msgtype"], event["content"]["body"]) == ("m.text", "Only for us ✓")
    assert event["algorithm"] == MEGOLM
    assert event["sender_device"] == device
    # And nothing of Ferry's is in the room as a plain message
    assert plain_messages_from(homeserver, friend.token, room, me.user_id) == []


@pytest.mark.parametrize("kind", READERS)
def test_a_link_with_a_message_is_one_encrypted_event_and_a_picture_is_one_with_its_message_as_caption(
        ferry, homeserver, matrix_user, nio_reader, kind):
    session, me, _ = ferry
    friend = matrix_user("reader")
    reader = nio_reader(kind, friend)
    room = encrypted_room(homeserver, me, friend)

    # When a link with a message is shared, and then a picture with a message
    link = session.share_ok(text="https://example.org/secret-plans", message="Look", destinations=[room])
    wait_for_state(session, link, "sent")
    photo = session.files / "private.png"
    picture = png_of_size(64, 48, seed=9)
    photo.write_bytes(picture)
    share_id = session.share_ok(uris=[file_uri(photo)], message="Our photo", destinations=[room])
    wait_for_state(session, share_id, "sent")

    # Then the reader decrypts two events: the link and message as one, the picture captioned
    # with its message (Matrix 1.10: the caption is the body, the file's name its filename)
    events = decrypted(reader, room, me.user_id)
    assert all(e["decrypted"] for e in events), events
    first, image = (e["content"] for e in events)
    assert "Look" in first["body"] and "https://example.org/secret-plans" in first["body"]
    assert (image["msgtype"], image["body"], image["filename"]) == ("m.image", "Our photo", "private.png")
    assert first["m.mentions"] == {} and image["m.mentions"] == {}
    assert image["info"]["mimetype"] == "image/png" and (image["info"]["w"], image["info"]["h"]) == (64, 48)
    # And the picture is an encrypted attachment: a `file` with its key in place of a `url`
    assert "url" not in image
    file = image["file"]
    assert file["v"] == "v2" and file["key"]["alg"] == "A256CTR" and file["key"]["kty"] == "oct"
    assert set(file["key"]["key_ops"]) == {"encrypt", "decrypt"} and file["key"]["ext"] is True
    got = reader.download(file)
    assert (got["sha256"], got["size"]) == (hashlib.sha256(picture).hexdigest(), len(picture))
    # And what the server keeps is not the picture: no name, no type, other bytes
    raw = homeserver.download(friend.token, file["url"])
    assert raw != picture and hashlib.sha256(raw).hexdigest() != got["sha256"] and len(raw) == len(picture)
    assert plain_messages_from(homeserver, friend.token, room, me.user_id) == []


def test_one_share_to_a_plain_and_an_encrypted_room_is_plain_in_one_and_encrypted_in_the_other(
        ferry, homeserver, matrix_user, nio_reader):
    session, me, _ = ferry
    friend = matrix_user("reader")
    reader = nio_reader(READERS[-1], friend)
    secret = encrypted_room(homeserver, me, friend)
    plain = homeserver.create_room(me.token, name="Plain")

    done = session.ferry("text", "To both", "--to", plain, "--to", secret)
    assert done.returncode == EX_OK, done.stderr

    assert [e["content"]["body"] for e in homeserver.messages(me.token, plain)] == ["To both"]
    [event] = decrypted(reader, secret, me.user_id)
    assert event["content"]["body"] == "To both"
    assert plain_messages_from(homeserver, friend.token, secret, me.user_id) == []


@pytest.mark.parametrize("kind", READERS)
def test_a_device_added_after_the_first_message_gets_the_key_of_the_next(ferry, homeserver, matrix_user, nio_reader, kind):
    session, me, _ = ferry
    friend = matrix_user("reader")
    phone = nio_reader(kind, friend)
    room = encrypted_room(homeserver, me, friend)
    assert session.ferry("text", "First", "--to", room).returncode == EX_OK

    # When the friend signs in on a second device, and Ferry sends again
    laptop = nio_reader(kind, friend)
    assert session.ferry("text", "Second", "--to", room).returncode == EX_OK

    # Then the new device reads the second message (the session's key was shared with it) and
    # not the first, which went out before it existed; the first device reads both
    first, second = decrypted(laptop, room, me.user_id)
    assert not first["decrypted"] and second["decrypted"] and second["content"]["body"] == "Second"
    assert [e["content"]["body"] for e in decrypted(phone, room, me.user_id)] == ["First", "Second"]
    # And it was the same session (a new device is no reason for a new one)
    assert first["session_id"] == second["session_id"]


@pytest.mark.parametrize("kind", READERS)
def test_a_member_who_left_does_not_get_the_next_session(ferry, homeserver, matrix_user, nio_reader, kind):
    session, me, _ = ferry
    stays, leaves = matrix_user("stays"), matrix_user("leaves")
    staying, leaving = nio_reader(kind, stays), nio_reader(kind, leaves)
    room = encrypted_room(homeserver, me, stays, leaves)
    assert session.ferry("text", "Before", "--to", room).returncode == EX_OK
    assert [e["content"]["body"] for e in decrypted(leaving, room, me.user_id)] == ["Before"]

    # When one member leaves and Ferry sends again
    homeserver.call("POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/leave", leaves.token, json_body={})
    assert session.ferry("text", "After", "--to", room).returncode == EX_OK

    # Then the one who stayed reads it, in a new session
    before, after = decrypted(staying, room, me.user_id)
    assert after["decrypted"] and after["content"]["body"] == "After"
    assert before["session_id"] != after["session_id"]
    # And the one who left, let back in, cannot: the new session's key never reached them
    homeserver.invite(me.token, room, leaves.user_id)
    leaving.join(room)
    seen = {e["event_id"]: e for e in decrypted(leaving, room, me.user_id)}
    assert not seen[after["event_id"]]["decrypted"], seen[after["event_id"]]


KILL_POINTS = {
    # The room key's to-device request is on the server, its answer held: the key is on its way to
    # the reader, the event not sent.
    "after-the-room-key": r"/_matrix/client/v3/sendToDevice/m\.room\.encrypted/.*",
    # The encrypted event is on the server, its answer held.
    "after-the-event": r"/_matrix/client/v3/rooms/[^/]+/send/m\.room\.encrypted/.*",
}


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_kill_while_sending_encrypted_sends_the_text_once_and_readable(
        new_session, homeserver, matrix_user, nio_reader, kind, point):
    proxy = HostileProxy(homeserver).start()
    me, friend = matrix_user("killed"), matrix_user("reader")
    reader = nio_reader(kind, friend)
    room = encrypted_room(homeserver, me, friend)
    session = new_session()
    sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()
    # Given a server that holds its answer at that point
    release = threading.Event()
    held = proxy.answer("PUT", KILL_POINTS[point], passthrough=True, hold_answer=release, times=1)

    # When the service is killed while the answer is held, and started again
    done = session.ferry("text", f"Exactly once, {point}", "--to", room, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    wait_for(lambda: held.done == 1, timeout=30, what=f"the request {point} on the server, its answer held")
    session.kill_service(signal.SIGKILL)
    release.set()
    session.get_share(share_id)
    wait_for_state(session, share_id, "sent", timeout=60)

    # Then the room holds the text once (after the event: the same ciphertext went again under the
    # same transaction id) and the reader decrypts it
    assert len([e for e in homeserver.events(friend.token, room, "m.room.encrypted") if e["sender"] == me.user_id]) == 1
    [event] = decrypted(reader, room, me.user_id)
    assert event["decrypted"] and event["content"]["body"] == f"Exactly once, {point}"
    assert plain_messages_from(homeserver, friend.token, room, me.user_id) == []
    session.stop()
    proxy.stop()


def test_a_revoked_sign_in_mid_share_goes_on_after_signing_in_again(new_session, homeserver, matrix_user, nio_reader):
    me, friend = matrix_user("revoked"), matrix_user("reader")
    reader = nio_reader(READERS[-1], friend)
    room = encrypted_room(homeserver, me, friend)
    session = new_session()
    account = sign_in(session, homeserver, me)
    assert session.ferry("text", "Before", "--to", room).returncode == EX_OK

    # When the server admin deletes Ferry's device (its token with it) and a share is made
    homeserver.revoke_device(me.user_id, account["device-id"])
    share_id = session.share_ok(text="After", destinations=[room])
    wait_for_state(session, share_id, "awaiting-sign-in", timeout=60)

    # Then after signing in again (the same device, its keys uploaded again) it is delivered, and
    # the reader decrypts both
    assert sign_in(session, homeserver, me)["device-id"] == account["device-id"]
    wait_for_state(session, share_id, "sent", timeout=60)
    assert [e["content"]["body"] for e in decrypted(reader, room, me.user_id)] == ["Before", "After"]
    assert plain_messages_from(homeserver, friend.token, room, me.user_id) == []


def test_an_encrypted_event_whose_answer_was_lost_before_a_revocation_is_found_not_sent_again(
        new_session, homeserver, matrix_user, nio_reader):
    # Given a server that takes Ferry's first encrypted event but whose answer never arrives, and
    # that holds the retry while the admin deletes Ferry's device (its transaction ids with it)
    proxy = HostileProxy(homeserver).start()
    me, friend = matrix_user("lost"), matrix_user("reader")
    reader = nio_reader(READERS[-1], friend)
    room = encrypted_room(homeserver, me, friend)
    session = new_session()
    account = sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()
    puts = []
    revoked = threading.Event()

    def chaos(method: str, path: str):
        if method == "PUT" and "/send/m.room.encrypted/" in path:
            puts.append(path)
            if len(puts) == 1:
                return "drop-after"
            if len(puts) == 2:
                revoked.wait(30)
        return None

    proxy.chaos = chaos
    share_id = session.share_ok(text="Sent once, found again", destinations=[room])
    wait_for(lambda: len(puts) >= 2, timeout=60, what="the retry of the encrypted event")
    homeserver.revoke_device(me.user_id, account["device-id"])
    revoked.set()
    wait_for_state(session, share_id, "awaiting-sign-in", timeout=60)

    # When the person signs in again on a new device (whose transaction ids mean nothing to the
    # server: Synapse would dedupe a repeat from the old device id even after its deletion)
    proxy.chaos = None
    token, _ = homeserver.login(me.user_id, me.password)
    sign_in_call(session, homeserver=proxy.base_url, access_token=token).expect_ok()

    # Then Ferry finds the event it sent by its tag instead of sending it again
    wait_for_state(session, share_id, "sent", timeout=60)
    mine = [e for e in homeserver.events(friend.token, room, "m.room.encrypted") if e["sender"] == me.user_id]
    assert len(mine) == 1, mine
    # And the tag says nothing anyone else can read: not the share's id
    tag = mine[0]["content"]["io.github.ferryshare.transaction"]
    assert share_id not in tag and "ferry." not in tag
    [event] = decrypted(reader, room, me.user_id)
    assert event["content"]["body"] == "Sent once, found again"
    session.stop()
    proxy.stop()


def raw_device(homeserver, user, peer) -> tuple[str, str]:
    """A device of `user` with `peer`'s keys and one one-time key, read over plain /sync."""
    token, device = homeserver.login(user.user_id, user.password)
    key = {"key": peer.one_time_key()}
    homeserver.call("POST", "/_matrix/client/v3/keys/upload", token, json_body={
        "device_keys": device_keys(peer, user.user_id, device),
        "one_time_keys": {"signed_curve25519:AAAAAQ": signed(peer, user.user_id, device, key)}})
    return token, device


def to_device_events(homeserver, token: str) -> list[dict]:
    return homeserver.call("GET", "/_matrix/client/v3/sync?timeout=0", token).get("to_device", {}).get("events", [])


@pytest.mark.parametrize("kind", READERS)
def test_with_only_verified_devices_on_an_unverified_device_is_told_m_unverified_and_gets_no_key(
        new_session, homeserver, matrix_user, nio_reader, kind):
    me, friend = matrix_user("strict"), matrix_user("reader")
    # Given a friend with two devices, one of them verified by its owner (cross-signed)
    verified, unverified = nio_reader(kind, friend), nio_reader(kind, friend)
    identity = CrossSigningIdentity(friend.user_id)
    identity.upload(homeserver, friend.token, friend.password)
    identity.verify_device(homeserver, friend.token, verified.device()["device_id"])
    # and a third, unverified, whose to-device messages the test reads itself
    raw_token, _ = raw_device(homeserver, friend, Vodozemac())
    room = encrypted_room(homeserver, me, friend)

    # When Ferry, set to encrypt only for verified devices, sends a text
    session = new_session(FERRY_ONLY_VERIFIED_DEVICES="1")
    sign_in(session, homeserver, me)
    assert session.ferry("text", "Only for verified devices", "--to", room).returncode == EX_OK

    # Then the verified device reads it and the unverified one cannot
    [seen] = decrypted(verified, room, me.user_id)
    assert seen["decrypted"] and seen["content"]["body"] == "Only for verified devices"
    [unseen] = decrypted(unverified, room, me.user_id)
    assert not unseen["decrypted"]
    # And the raw device was told why (m.unverified) and given no key
    events = to_device_events(homeserver, raw_token)
    assert [e["type"] for e in events] == ["m.room_key.withheld"], events
    withheld = events[0]["content"]
    assert withheld["code"] == "m.unverified" and withheld["room_id"] == room
    assert withheld["session_id"] == seen["session_id"] and withheld["algorithm"] == MEGOLM


def test_with_only_verified_devices_a_master_key_swapped_by_the_server_verifies_nothing(
        new_session, homeserver, matrix_user, nio_reader):
    me, friend = matrix_user("pinned"), matrix_user("reader")
    # Given a friend's device verified by their cross-signing identity, and Ferry set to encrypt
    # only for verified devices, which has sent there once (and so seen that identity)
    device = nio_reader(READERS[-1], friend)
    first = CrossSigningIdentity(friend.user_id)
    first.upload(homeserver, friend.token, friend.password)
    first.verify_device(homeserver, friend.token, device.device()["device_id"])
    room = encrypted_room(homeserver, me, friend)
    session = new_session(FERRY_ONLY_VERIFIED_DEVICES="1")
    sign_in(session, homeserver, me)
    assert session.ferry("text", "Under the first identity", "--to", room).returncode == EX_OK

    # When the identity is replaced (as a server, or someone with the password, could do) and the
    # same device is signed by the new one, and Ferry sends again
    second = CrossSigningIdentity(friend.user_id)
    second.upload(homeserver, friend.token, friend.password)
    second.verify_device(homeserver, friend.token, device.device()["device_id"])
    assert session.ferry("text", "Under a new identity", "--to", room).returncode == EX_OK

    # Then the device read the first text and not the second: Ferry kept the master key it first
    # saw, so the new one vouches for nothing, and the session it had was replaced
    before, after = decrypted(device, room, me.user_id)
    assert before["decrypted"] and before["content"]["body"] == "Under the first identity"
    assert not after["decrypted"], after
    assert before["session_id"] != after["session_id"]


def test_by_default_every_device_gets_the_key_verified_or_not(ferry, homeserver, matrix_user):
    session, me, _ = ferry
    friend = matrix_user("reader")
    peer = Vodozemac()
    raw_token, _ = raw_device(homeserver, friend, peer)
    room = encrypted_room(homeserver, me, friend)
    assert session.ferry("text", "For every device", "--to", room).returncode == EX_OK
    [event] = [e for e in to_device_events(homeserver, raw_token) if e["type"] == "m.room.encrypted"]
    assert event["sender"] == me.user_id
    body = event["content"]["ciphertext"][peer.curve25519]
    plaintext = json.loads(peer.inbound(event["content"]["sender_key"], body["body"]))
    assert plaintext["type"] == "m.room_key" and plaintext["content"]["room_id"] == room


@pytest.mark.parametrize("size", [4096, 9 << 20], ids=["small", "early-upload"])
def test_a_server_that_denies_a_rooms_encryption_after_a_restart_gets_no_plaintext(
        new_session, homeserver, matrix_user, nio_reader, size):
    # Given Ferry, through a proxy, that has sent into an encrypted room a friend reads
    proxy = HostileProxy(homeserver).start()
    me, friend = matrix_user("denied"), matrix_user("reader")
    reader = nio_reader(READERS[0], friend)
    room = encrypted_room(homeserver, me, friend)
    session = new_session()
    sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()
    wait_for_state(session, session.share_ok(text="encrypted, as the room is", destinations=[room]), "sent")

    # And, after the service started again (nothing of the room in its memory), a server that
    # answers that the room has no m.room.encryption
    session.kill_service(signal.SIGTERM)
    proxy.answer("GET", r"/rooms/[^/]+/state/m\.room\.encryption", status=404,
                 body={"errcode": "M_NOT_FOUND", "error": "Event not found"}, times=1000)

    # When a file is shared there (the large one would be uploaded while it is staged)
    data = b"FERRY-PLAINTEXT-MARKER" + os.urandom(size)
    path = session.files / "confidential.bin"
    path.write_bytes(data)
    done = session.ferry("send", str(path), "--to", room, timeout=120)

    # Then the stored record of the room wins: the share fails, saying the room is no longer
    # encrypted as it was, and nothing was sent there
    assert done.returncode != EX_OK
    assert "no longer encrypted as it was" in done.stderr and "Nothing was sent there unencrypted" in done.stderr
    share = session.get_share(new_share_id_from_error(done.stderr))
    assert share["state"] == "failed" and share["deliveries"][0]["error-name"].endswith(".EncryptedRoom"), share
    # And no file on the server holds its bytes in the clear, and no event went to the room
    for stored in (p for p in homeserver.media_store.rglob("*") if p.is_file()):
        assert b"FERRY-PLAINTEXT-MARKER" not in stored.read_bytes(), stored
    assert len(decrypted(reader, room, me.user_id)) == 1
    assert plain_messages_from(homeserver, friend.token, room, me.user_id) == []
    session.stop()
    proxy.stop()


def new_share_id_from_error(stderr: str) -> str:
    """The id `ferry retry ID` names in a failed send's message."""
    return stderr.split("`ferry retry ", 1)[1].split("`", 1)[0]
