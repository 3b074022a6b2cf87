"""The encrypted events Ferry builds, read by libolm and vodozemac as a receiving client would.

A reader device's signed keys and claimed one-time key (signed by the reader's own library and
canonical JSON) are checked by Ferry; Ferry sends it the room key Olm-encrypted, and the reader
checks what a client checks (it is meant for this device, from the device it claims, with signed
device keys) before it reads a Megolm room event with that key.
"""

from __future__ import annotations

import json

import pytest

from cryptopeers import canonical, device_keys, signed, strip

FERRY, FERRY_DEVICE = "@ferry:localhost", "FERRYDEV"
READER, READER_DEVICE = "@reader:localhost", "READERDEV"
ROOM = "!room:localhost"


@pytest.fixture
def probe(probe):
    """The probe, with Ferry's account as FERRY's device FERRY_DEVICE."""
    probe("account", user_id=FERRY, device_id=FERRY_DEVICE, count=0)
    return probe


def test_ferry_accepts_a_device_signed_by_itself(probe, peer):
    keys = device_keys(peer, READER, READER_DEVICE)
    keys["unsigned"] = {"device_display_name": "Reader's laptop"}  # servers add this; it is not signed
    assert probe("verify_device", device=keys, user_id=READER, device_id=READER_DEVICE) == {
        "curve25519": peer.curve25519, "ed25519": peer.ed25519}


def test_ferry_refuses_device_keys_a_server_could_forge(probe, peer):
    genuine = device_keys(peer, READER, READER_DEVICE)
    other = type(peer)()
    forged = [
        {**genuine, "keys": {**genuine["keys"], f"curve25519:{READER_DEVICE}": other.curve25519}},  # swapped key
        device_keys(peer, READER, "OTHERDEV"),                                                     # another device's
        signed(other, READER, READER_DEVICE, strip(genuine)),                                       # signed by another
        strip(genuine),                                                                             # not signed
    ]
    for keys in forged:
        assert "error" in probe("verify_device", device=keys, user_id=READER, device_id=READER_DEVICE), keys
    assert "error" in probe("verify_device", device=genuine, user_id="@other:localhost", device_id=READER_DEVICE)


def test_room_key_and_room_event_read_by_the_reader(probe, peer):
    one_time_key = peer.one_time_key()
    claimed = signed(peer, READER, READER_DEVICE, {"key": one_time_key})
    shared = probe("share_room_key", device=device_keys(peer, READER, READER_DEVICE), user_id=READER,
                   device_id=READER_DEVICE, signed_key=claimed, room_id=ROOM, sender_user=FERRY,
                   sender_device=FERRY_DEVICE)["content"]
    assert shared["algorithm"] == "m.olm.v1.curve25519-aes-sha2"
    (recipient, message), = shared["ciphertext"].items()
    assert recipient == peer.curve25519 and message["type"] == 0

    plaintext = json.loads(peer.inbound(shared["sender_key"], message["body"]))
    # What a receiving client checks before it trusts a to-device message.
    assert plaintext["type"] == "m.room_key"
    assert plaintext["recipient"] == READER and plaintext["recipient_keys"] == {"ed25519": peer.ed25519}
    assert plaintext["sender"] == FERRY
    sender_keys = plaintext["sender_device_keys"]
    assert sender_keys["keys"][f"curve25519:{FERRY_DEVICE}"] == shared["sender_key"]
    assert plaintext["keys"] == {"ed25519": sender_keys["keys"][f"ed25519:{FERRY_DEVICE}"]}
    peer.verify(plaintext["keys"]["ed25519"], canonical(strip(sender_keys)),
                sender_keys["signatures"][FERRY][f"ed25519:{FERRY_DEVICE}"])
    room_key = plaintext["content"]
    assert room_key["algorithm"] == "m.megolm.v1.aes-sha2" and room_key["room_id"] == ROOM
    assert room_key["shared_history"] is False

    inbound = peer.group_inbound(room_key["session_key"])
    assert inbound.session_id == room_key["session_id"]
    for index, body in enumerate(["the message first", "then the picture"]):
        content = {"msgtype": "m.text", "body": body}
        event = probe("room_event", event_type="m.room.message", content=content, room_id=ROOM,
                      sender_user=FERRY, sender_device=FERRY_DEVICE)["content"]
        assert event["algorithm"] == "m.megolm.v1.aes-sha2" and event["session_id"] == room_key["session_id"]
        assert event["sender_key"] == shared["sender_key"] and event["device_id"] == FERRY_DEVICE
        decrypted, at = inbound.decrypt(event["ciphertext"])
        assert at == index
        assert json.loads(decrypted) == {"type": "m.room.message", "content": content, "room_id": ROOM}


def test_a_one_time_key_not_signed_by_the_device_is_refused(probe, peer):
    other = type(peer)()
    claimed = signed(other, READER, READER_DEVICE, {"key": peer.one_time_key()})
    answer = probe("share_room_key", device=device_keys(peer, READER, READER_DEVICE), user_id=READER,
                   device_id=READER_DEVICE, signed_key=claimed, room_id=ROOM, sender_user=FERRY, sender_device=FERRY_DEVICE)
    assert "error" in answer and "one-time key" in answer["error"]
