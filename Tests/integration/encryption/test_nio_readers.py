"""The nio readers themselves, against a real Synapse and without Ferry.

Tests of Ferry's encryption trust what a reader says it decrypted; so here each kind of reader
(nio 0.25 on libolm, nio 0.26 on vodozemac) reads what the other, or one of its own kind, sent,
and must also fail where it should: a reader the room key never reached gets decrypted=False
with nio's reason, and an attachment whose hash does not match is refused. A harness that only
ever said yes would pass every Ferry test.
"""

from __future__ import annotations

import base64
import hashlib
import os
import uuid

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from homeserver import Homeserver, MatrixUser
from nioreaders import READERS, NioReaderError

PAIRS = [(sender, reader) for sender in READERS for reader in READERS]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def _encrypted_room(homeserver: Homeserver, owner: MatrixUser, *members: MatrixUser) -> str:
    return homeserver.create_room(owner.token, name="nio readers", encrypted=True,
                                  invite=[member.user_id for member in members])


@pytest.mark.parametrize(("sender_kind", "reader_kind"), PAIRS, ids=[f"{s}-to-{r}" for s, r in PAIRS])
def test_a_reader_decrypts_what_another_sent(homeserver, matrix_user, nio_reader, sender_kind, reader_kind):
    alice, bob = matrix_user("alice"), matrix_user("bob")
    room = _encrypted_room(homeserver, alice, bob)
    sender, reader = nio_reader(sender_kind, alice), nio_reader(reader_kind, bob)
    assert sender.device()["nio"].startswith({"nio25": "0.25.", "nio26": "0.26."}[sender_kind])
    reader.join(room)
    sender.join(room)
    body = f"secret {uuid.uuid4().hex}"
    sent = sender.send_text(room, body)
    assert sent["room_encrypted"] is True

    # What the server holds is ciphertext: the text is nowhere in it.
    on_server = [e for e in homeserver.events(alice.token, room) if e["event_id"] == sent["event_id"]]
    assert [e["type"] for e in on_server] == ["m.room.encrypted"]
    assert body not in str(on_server)

    (event,) = [e for e in reader.encrypted_messages(room) if e["event_id"] == sent["event_id"]]
    assert event["decrypted"] is True, event.get("error")
    assert event["algorithm"] == "m.megolm.v1.aes-sha2"
    assert event["decrypted_type"] == "m.room.message"
    assert event["content"] == {"msgtype": "m.text", "body": body}
    assert event["plaintext_room_id"] == room
    sender_device = sender.device()
    assert (event["sender"], event["sender_device"], event["sender_key"]) == (
        alice.user_id, sender_device["device_id"], sender_device["curve25519"])
    assert "error" not in event


@pytest.mark.parametrize("kind", READERS)
def test_a_reader_the_room_key_never_reached_cannot_decrypt(homeserver, matrix_user, nio_reader, kind):
    alice, bob, carol = matrix_user("alice"), matrix_user("bob"), matrix_user("carol")
    room = _encrypted_room(homeserver, alice, bob, carol)
    sender, bob_reader = nio_reader(kind, alice), nio_reader(kind, bob)
    bob_reader.join(room)
    sender.join(room)
    before = sender.send_text(room, "before carol")["event_id"]

    # Carol's device did not exist when the key was shared: history is visible to her, the key is not.
    carol_reader = nio_reader(kind, carol)
    carol_reader.join(room)
    after = sender.send_text(room, "after carol")["event_id"]

    carol_sees = {e["event_id"]: e for e in carol_reader.encrypted_messages(room)}
    assert set(carol_sees) == {before, after}
    assert carol_sees[before]["decrypted"] is False
    assert carol_sees[before]["content"] is None
    assert "no session" in carol_sees[before]["error"], carol_sees[before]["error"]
    # The same reader decrypts what was sent once it was there: the failure is the missing key.
    assert carol_sees[after]["decrypted"] is True, carol_sees[after].get("error")
    assert carol_sees[after]["content"]["body"] == "after carol"
    bob_sees = {e["event_id"]: e for e in bob_reader.encrypted_messages(room)}
    assert [bob_sees[i]["content"]["body"] for i in (before, after)] == ["before carol", "after carol"]


@pytest.mark.parametrize("kind", READERS)
def test_a_reader_downloads_and_decrypts_an_attachment_and_checks_its_hash(homeserver, matrix_user,
                                                                          nio_reader, kind):
    alice = matrix_user("alice")
    reader = nio_reader(kind, alice)
    # An encrypted attachment as the spec lays it out, made here with OpenSSL (not with nio):
    # AES-256-CTR, a 64-bit counter in the IV's second half starting at zero, SHA-256 of the
    # ciphertext.
    plaintext = os.urandom(70_000)
    key, iv = os.urandom(32), os.urandom(8) + bytes(8)
    encryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    ciphertext = encryptor.update(plaintext) + encryptor.finalize()
    mxc = homeserver.upload(alice.token, ciphertext)
    file = {"v": "v2", "url": mxc, "iv": _b64(iv),
            "key": {"kty": "oct", "alg": "A256CTR", "ext": True, "key_ops": ["encrypt", "decrypt"],
                    "k": base64.urlsafe_b64encode(key).decode().rstrip("=")},
            "hashes": {"sha256": _b64(hashlib.sha256(ciphertext).digest())}}

    got = reader.download(file)
    assert (got["sha256"], got["size"]) == (hashlib.sha256(plaintext).hexdigest(), len(plaintext))

    # A hash of other bytes: nio refuses before decrypting anything.
    tampered = {**file, "hashes": {"sha256": _b64(hashlib.sha256(plaintext).digest())}}
    with pytest.raises(NioReaderError, match="Mismatched SHA-256"):
        reader.download(tampered)
    # The wrong key passes the hash (it covers the ciphertext) and yields other bytes.
    wrong_key = {**file, "key": {**file["key"], "k": base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")}}
    assert reader.download(wrong_key)["sha256"] != got["sha256"]


@pytest.mark.parametrize("kind", READERS)
def test_a_bad_request_is_answered_and_the_reader_goes_on(matrix_user, nio_reader, kind):
    reader = nio_reader(kind, matrix_user("alice"))
    assert "unknown op" in reader.request("no-such-op")["error"]
    assert "error" in reader.request("messages", room="!nowhere:ferry.test")
    assert "error" in reader.request("download", file={"url": "mxc://ferry.test/none"})
    device = reader.device()
    assert device["device_id"] == reader.device_id
    assert device["curve25519"] and device["ed25519"]
