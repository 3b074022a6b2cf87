"""FerryCrypto against two implementations we did not write: libolm and vodozemac.

Every message format and ratchet step is checked from the other side: they decrypt what Ferry
encrypts, Ferry decrypts what they encrypt, they verify Ferry's signatures over canonical JSON
they encode themselves, and the Megolm ratchet Ferry reaches at far indices is byte for byte the
one they export. A round trip through Ferry's own code alone would prove nothing here.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptopeers import b64, canonical, strip, unb64

MESSAGES = ["hello", "", "ünïcödé ✓ 🚢", "x" * 5000, json.dumps({"type": "m.room.message", "content": {"body": "hi"}})]


def test_device_keys_and_one_time_keys_verify_with_their_ed25519(probe, peer):
    account = probe("account", user_id="@alice:localhost", device_id="FERRYDEV", count=3)
    device = account["device_keys"]
    assert device["keys"] == {"curve25519:FERRYDEV": account["curve25519"], "ed25519:FERRYDEV": account["ed25519"]}
    assert set(device["algorithms"]) == {"m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"}
    signature = device["signatures"]["@alice:localhost"]["ed25519:FERRYDEV"]
    peer.verify(account["ed25519"], canonical(strip(device)), signature)
    assert len(account["one_time_keys"]) == 3
    for key_id, signed in account["one_time_keys"].items():
        assert key_id.startswith("signed_curve25519:")
        peer.verify(account["ed25519"], canonical(strip(signed)), signed["signatures"]["@alice:localhost"]["ed25519:FERRYDEV"])
    # A changed object no longer verifies: the signature covers what it should.
    with pytest.raises(Exception):
        peer.verify(account["ed25519"], canonical({**strip(device), "device_id": "OTHER"}), signature)


def test_fallback_key_is_marked_and_signed(probe, peer):
    account = probe("account", count=0)
    (key_id, signed), = account["fallback_keys"].items()
    assert signed["fallback"] is True
    peer.verify(account["ed25519"], canonical(strip(signed)), signed["signatures"]["@probe:localhost"]["ed25519:PROBE"])


def test_canonical_json_matches_the_reference_encoding(probe):
    value = {"b": 1, "a": {"z": [1, -2, "\u0001\n\"\\/"], "é": None, "A": True}, "日本": "ü", "": False}
    assert probe("canonical", json=value)["canonical"].encode() == canonical(value)


def test_megolm_from_ferry_decrypts_in_theirs(probe, peer):
    created = probe("megolm_new")
    theirs = peer.group_inbound(created["session_key"])
    assert theirs.session_id == created["session_id"]
    for position, text in enumerate(MESSAGES):
        sent = probe("megolm_encrypt", plaintext=text)
        assert sent["index"] == position
        assert theirs.decrypt(sent["ciphertext"]) == (text.encode(), position)


def test_megolm_room_key_given_later_starts_at_its_index(probe, peer):
    probe("megolm_new")
    for text in MESSAGES[:3]:
        probe("megolm_encrypt", plaintext=text)
    later = probe("megolm_session_key")
    assert later["index"] == 3
    theirs = peer.group_inbound(later["session_key"])
    sent = probe("megolm_encrypt", plaintext="for the newcomer")
    assert theirs.decrypt(sent["ciphertext"]) == (b"for the newcomer", 3)


def test_megolm_tampered_message_is_refused_by_them(probe, peer):
    created = probe("megolm_new")
    theirs = peer.group_inbound(created["session_key"])
    ciphertext = bytearray(unb64(probe("megolm_encrypt", plaintext="do not touch")["ciphertext"]))
    ciphertext[len(ciphertext) // 2] ^= 1
    with pytest.raises(Exception):
        theirs.decrypt(b64(bytes(ciphertext)))


def test_megolm_from_theirs_decrypts_in_ferry(probe, peer):
    outbound = peer.group_outbound()
    probe("megolm_inbound", session_key=outbound.session_key)
    sent = [(text, outbound.encrypt(text.encode())) for text in MESSAGES]
    # Out of order, and one twice: a recipient's session does not move.
    for position in [3, 0, 4, 1, 2, 0]:
        text, ciphertext = sent[position]
        assert probe("megolm_decrypt", ciphertext=ciphertext) == {"plaintext": text, "index": position}


def test_megolm_tampered_message_is_refused_by_ferry(probe, peer):
    outbound = peer.group_outbound()
    probe("megolm_inbound", session_key=outbound.session_key)
    ciphertext = unb64(outbound.encrypt(b"genuine"))
    for position in (1, len(ciphertext) - 70, len(ciphertext) - 1):  # a field, the MAC, the signature
        changed = bytearray(ciphertext)
        changed[position] ^= 0x40
        assert "error" in probe("megolm_decrypt", ciphertext=b64(bytes(changed)))
    assert probe("megolm_decrypt", ciphertext=b64(ciphertext))["plaintext"] == "genuine"


@pytest.mark.parametrize("index", [0, 1, 255, 256, 257, 511, 65535, 65536, 65793, 16777215, 16777216, 16843009,
                                   2**31 + 12345, 2**32 - 1])
def test_megolm_ratchet_reaches_far_indices_as_theirs_does(probe, peer, index):
    if peer.name == "libolm" and index >= 2**31:
        pytest.skip("libolm compares indices as a signed 32-bit difference and exports nothing 2^31 ahead")
    outbound = peer.group_outbound()
    probe("megolm_inbound", session_key=outbound.session_key)
    theirs = peer.group_inbound(outbound.session_key)
    assert probe("megolm_export_at", index=index)["exported"] == theirs.export_at(index)


def test_olm_session_ferry_starts(probe, peer):
    ferry = probe("account", count=1)
    probe("olm_outbound", identity_key=peer.curve25519, one_time_key=peer.one_time_key())
    first = probe("olm_encrypt", plaintext=MESSAGES[0])
    assert first["type"] == 0
    assert peer.inbound(ferry["curve25519"], first["body"]) == MESSAGES[0].encode()
    # Until they answer, every message is a pre-key message on the same session.
    for text in MESSAGES[1:3]:
        sent = probe("olm_encrypt", plaintext=text)
        assert sent["type"] == 0
        assert peer.decrypt(sent["type"], sent["body"]) == text.encode()
    # They answer on a new ratchet key; Ferry reads it, and from then on sends normal messages.
    replies = [peer.encrypt(text.encode()) for text in ("reply one", "reply two", "reply three")]
    assert [kind for kind, _ in replies] == [1, 1, 1]
    for position in (2, 0, 1):  # out of order, through the skipped message keys
        kind, body = replies[position]
        assert probe("olm_decrypt", type=kind, body=body)["plaintext"] == ["reply one", "reply two", "reply three"][position]
    assert "error" in probe("olm_decrypt", type=replies[0][0], body=replies[0][1])  # never twice
    for text in MESSAGES[3:]:
        sent = probe("olm_encrypt", plaintext=text)
        assert sent["type"] == 1
        assert peer.decrypt(sent["type"], sent["body"]) == text.encode()
    # And the conversation turns once more.
    kind, body = peer.encrypt(b"last word")
    assert probe("olm_decrypt", type=kind, body=body)["plaintext"] == "last word"


def test_olm_session_they_start(probe, peer):
    ferry = probe("account", count=2)
    one_time_key = next(iter(ferry["one_time_keys"].values()))["key"]
    peer.outbound(ferry["curve25519"], one_time_key)
    kind, body = peer.encrypt("from them".encode())
    assert kind == 0
    assert probe("olm_inbound", identity_key=peer.curve25519, body=body)["plaintext"] == "from them"
    # The one-time key is used up: the same pre-key message cannot start a second session.
    assert "error" in probe("olm_inbound", identity_key=peer.curve25519, body=body)
    sent = probe("olm_encrypt", plaintext="from Ferry")
    assert sent["type"] == 1
    assert peer.decrypt(sent["type"], sent["body"]) == b"from Ferry"


def test_olm_tampered_message_is_refused_and_changes_nothing(probe, peer):
    probe("account", count=1)
    probe("olm_outbound", identity_key=peer.curve25519, one_time_key=peer.one_time_key())
    first = probe("olm_encrypt", plaintext="hello")
    peer.inbound(probe("account", count=0)["curve25519"], first["body"])
    kind, body = peer.encrypt(b"answer")
    changed = bytearray(unb64(body))
    changed[-3] ^= 1  # inside the MAC
    assert "error" in probe("olm_decrypt", type=kind, body=b64(bytes(changed)))
    assert probe("olm_decrypt", type=kind, body=body)["plaintext"] == "answer"


@pytest.mark.parametrize("size,chunk", [(0, 4096), (1, 4096), (100_000, 4096), (65_536, 65_536), (1_000_003, 16)])
def test_attachment_decrypts_with_openssl(probe, size, chunk):
    plain = os.urandom(size)
    answer = probe("attachment_encrypt", body=b64(plain), chunk=chunk)
    ciphertext, file = unb64(answer["ciphertext"]), answer["file"]
    assert file["v"] == "v2" and file["url"] == "mxc://localhost/probe"
    assert file["key"]["alg"] == "A256CTR" and file["key"]["kty"] == "oct" and file["key"]["ext"] is True
    assert set(file["key"]["key_ops"]) == {"encrypt", "decrypt"}
    assert file["hashes"]["sha256"] == b64(hashlib.sha256(ciphertext).digest())
    key = base64url(file["key"]["k"])
    iv = unb64(file["iv"])
    assert len(key) == 32 and len(iv) == 16 and iv[8:] == bytes(8)
    decryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).decryptor()
    assert decryptor.update(ciphertext) + decryptor.finalize() == plain


def base64url(text: str) -> bytes:
    return unb64(text.replace("-", "+").replace("_", "/"))


# Server-side key backup (m.megolm_backup.v1.curve25519-aes-sha2): Ferry writes, they restore.

def _master_signed(auth_data: dict, user_id: str = "@probe:localhost"):
    """`auth_data` signed by a master key made here (cryptography's Ed25519); returns it and the
    key's base64."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    master = Ed25519PrivateKey.generate()
    public = b64(master.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    signature = b64(master.sign(canonical(strip(auth_data))))
    return {**auth_data, "signatures": {user_id: {f"ed25519:{public}": signature}}}, public


def test_key_backup_from_ferry_restores_in_theirs(probe, peer):
    account = probe("account", count=0)
    key = peer.backup_key()
    auth_data, master = _master_signed({"public_key": key.public_key})
    created = probe("megolm_new")
    backed_up = probe("backup_key_data", json=auth_data, master_key=master)
    assert backed_up["first_message_index"] == 0 and backed_up["forwarded_count"] == 0
    assert backed_up["is_verified"] is True
    assert set(backed_up["session_data"]) == {"ephemeral", "ciphertext", "mac"}
    session = json.loads(key.decrypt(backed_up["session_data"]))
    assert session["algorithm"] == "m.megolm.v1.aes-sha2"
    assert session["sender_key"] == account["curve25519"]
    assert session["sender_claimed_keys"] == {"ed25519": account["ed25519"]}
    assert session["forwarding_curve25519_key_chain"] == []
    restored = peer.group_import(session["session_key"])
    assert restored.session_id == created["session_id"]
    for position, text in enumerate(MESSAGES):
        assert restored.decrypt(probe("megolm_encrypt", plaintext=text)["ciphertext"]) == (text.encode(), position)


def test_key_backup_taken_later_starts_at_the_session_index(probe, peer):
    probe("account", count=0)
    key = peer.backup_key()
    auth_data, master = _master_signed({"public_key": key.public_key})
    probe("megolm_new")
    early = [probe("megolm_encrypt", plaintext=f"before {n}")["ciphertext"] for n in range(3)]
    backed_up = probe("backup_key_data", json=auth_data, master_key=master)
    assert backed_up["first_message_index"] == 3
    restored = peer.group_import(json.loads(key.decrypt(backed_up["session_data"]))["session_key"])
    assert restored.decrypt(probe("megolm_encrypt", plaintext="after")["ciphertext"]) == (b"after", 3)
    with pytest.raises(Exception):
        restored.decrypt(early[0])


def test_key_backup_mac_is_the_one_they_check(probe, peer):
    """Restoring clients check the MAC libolm computes (over an empty input): a changed one is
    refused, so the one Ferry writes is proven right by their accepting it."""
    probe("account", count=0)
    key = peer.backup_key()
    auth_data, master = _master_signed({"public_key": key.public_key})
    probe("megolm_new")
    data = probe("backup_key_data", json=auth_data, master_key=master)["session_data"]
    mac = bytearray(unb64(data["mac"]))
    mac[0] ^= 1
    with pytest.raises(Exception):
        key.decrypt({**data, "mac": b64(bytes(mac))})
    assert json.loads(key.decrypt(data))["algorithm"] == "m.megolm.v1.aes-sha2"


def test_key_backup_ferry_cannot_trust_gets_nothing(probe, peer):
    account = probe("account", count=0, device_id="FERRYDEV")
    key = peer.backup_key()
    probe("megolm_new")
    signed, master = _master_signed({"public_key": key.public_key})
    _, other_master = _master_signed({"public_key": key.public_key})
    refused = {
        "unsigned": dict(json={"public_key": key.public_key}, master_key=master),
        "signed by another master key": dict(json=signed, master_key=other_master),
        "no master key trusted": dict(json=signed),
        "public key swapped after signing": dict(json={**signed, "public_key": peer.backup_key().public_key},
                                                 master_key=master),
        "another algorithm": dict(json=signed, master_key=master, reason="m.megolm_backup.v1.aes-hmac-sha2"),
        "no public key": dict(json={"signatures": signed["signatures"]}, master_key=master),
    }
    for case, fields in refused.items():
        answer = probe("backup_key_data", **fields)
        assert "error" in answer, case
    # Signed by Ferry's own device (its Ed25519 over the canonical auth_data): trusted.
    own = {"public_key": key.public_key}
    own["signatures"] = {"@probe:localhost": {"ed25519:FERRYDEV": probe("sign_json", json=own)["signature"]}}
    assert "session_data" in probe("backup_key_data", json=own, device_id="FERRYDEV")
    assert account["ed25519"]
