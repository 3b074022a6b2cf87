"""The test client of secretstorage.py and crosssigning.py on its own, against a real Synapse:
before Ferry is tested reading secret storage with it, it must itself be right (known vectors from
other implementations) and able to fail (wrong keys, tampered data, unsigned devices)."""

from __future__ import annotations

import os
import re

import pytest

from crosssigning import CrossSigningIdentity, bare_device, cross_signed_in, is_device_cross_signed
from cryptopeers import b64, unb64
from secretstorage import (AES_HMAC_SHA2, DEFAULT_ITERATIONS, DEFAULT_KEY, KEY_PREFIX, MacMismatch,
                           RecoveryKeyError, SecretStorage, WrongKey, b58decode, b58encode, bootstrap,
                           broken_parity_recovery_key, decode_recovery_key, decrypt_secret, encode_recovery_key,
                           encrypt_secret, get_account_data, key_matches, passphrase_key, put_account_data,
                           wrong_recovery_key)

SECRET = "m.test.secret"


# -- recovery keys, offline --

def test_recovery_keys_round_trip_in_groups_of_four():
    for _ in range(50):
        key = os.urandom(32)
        shown = encode_recovery_key(key)
        *groups, last = shown.split(" ")
        assert all(len(g) == 4 for g in groups) and 1 <= len(last) <= 4, shown
        assert decode_recovery_key(shown) == key
        # whitespace is insignificant when reading (spec, "Key representation")
        assert decode_recovery_key(shown.replace(" ", "")) == key
        assert decode_recovery_key(f"  {shown.replace(' ', chr(10))}\t") == key
    for data in (b"", b"\0", b"\0\0\x01", os.urandom(7), b"\0" + os.urandom(40)):
        assert b58decode(b58encode(data)) == data


def test_recovery_key_vectors_of_matrix_rust_sdk_and_matrix_js_sdk():
    # matrix-org/matrix-rust-sdk, crates/matrix-sdk-crypto/src/secret_storage.rs, test `base58_parsing`
    decoded = bytes([159, 189, 70, 187, 52, 81, 113, 198, 246, 2, 44, 154, 37, 213, 104, 27,
                     165, 78, 236, 106, 108, 73, 83, 243, 173, 192, 185, 110, 157, 145, 173, 163])
    assert decode_recovery_key("EsT           pRvZTnjck8    YrhRAtw XLS84Nr2r9S9LGAWDaExVAPBvLRK   ") == decoded
    assert encode_recovery_key(decoded) == "EsTp RvZT njck 8Yrh RAtw XLS8 4Nr2 r9S9 LGAW DaEx VAPB vLRK"
    with pytest.raises(RecoveryKeyError, match="parity"):
        decode_recovery_key("EsTpRvZTnjck8YrhRAtwXLS84Nr2r9S9LGAWDaExVAPBvLRk")
    with pytest.raises(RecoveryKeyError, match="prefix"):
        decode_recovery_key("AATpRvZTnjck8YrhRAtwXLS84Nr2r9S9LGAWDaExVAPBvLRk")
    with pytest.raises(RecoveryKeyError, match="bytes"):
        decode_recovery_key("AATpRvZTnjck8YrhRAtwXLS84Nr2r9S9")
    with pytest.raises(RecoveryKeyError, match="base58"):
        decode_recovery_key("AATpRvZTnjck8YrhRAtwXLS84Nr0OIl")
    # matrix-org/matrix-js-sdk, spec/unit/crypto-api/recovery-key.spec.ts: the key 0, 1, …, 31
    # encodes to a string beginning "EsSz", and "EsSZ" in its place breaks the parity
    counting = bytes(range(32))
    assert encode_recovery_key(counting).startswith("EsSz ")
    assert decode_recovery_key(encode_recovery_key(counting)) == counting
    with pytest.raises(RecoveryKeyError):
        decode_recovery_key(encode_recovery_key(counting).replace("EsSz", "EsSZ"))


def test_key_check_vectors_of_matrix_rust_sdk():
    # matrix-org/matrix-rust-sdk, crates/matrix-sdk-crypto/src/secret_storage.rs, tests
    # `from_account_data_and_base58` (padded base64, which readers must accept) and
    # `from_account_data_and_passphrase` (m.pbkdf2, 10 iterations, no `bits`)
    by_key = {"algorithm": AES_HMAC_SHA2, "iv": "xv5b6/p3ExEw++wTyfSHEg==",
              "mac": "ujBBbXahnTAMkmPUX2/0+VTfUh63pGyVRuBcDMgmJC8="}
    key = decode_recovery_key("EsTj 3yST y93F SLpB jJsz eAXc 2XzA ygD3 w69H fGaN TKBj jXEd")
    assert key_matches(key, by_key)
    assert not key_matches(os.urandom(32), by_key)
    assert not key_matches(key, {**by_key, "mac": b64(bytes(32))})
    assert not key_matches(key, {**by_key, "iv": b64(bytes(16))})

    by_passphrase = {"algorithm": AES_HMAC_SHA2, "iv": "gH2iNpiETFhApvW6/FFEJQ",
                     "mac": "9Lw12m5SKDipNghdQXKjgpfdj1/K7HFI2brO+UWAGoM",
                     "passphrase": {"algorithm": "m.pbkdf2", "salt": "IuLnH7S85YtZmkkBJKwNUKxWF42g9O1H",
                                    "iterations": 10}}
    salt = by_passphrase["passphrase"]["salt"]
    assert key_matches(passphrase_key("It's a secret to everybody", salt, 10), by_passphrase)
    assert not key_matches(passphrase_key("It's a secret to nobody", salt, 10), by_passphrase)
    assert not key_matches(passphrase_key("It's a secret to everybody", salt, 11), by_passphrase)


def test_wrong_and_broken_recovery_keys_fail_differently():
    right = encode_recovery_key(os.urandom(32))
    wrong = wrong_recovery_key(right)
    assert decode_recovery_key(wrong) != decode_recovery_key(right)  # decodes: only the key check can tell
    broken = broken_parity_recovery_key(right)
    assert broken != right
    with pytest.raises(RecoveryKeyError, match="parity"):
        decode_recovery_key(broken)


def test_secrets_are_authenticated_and_bound_to_their_name():
    key = os.urandom(32)
    data = encrypt_secret(key, SECRET, "hello")
    assert decrypt_secret(key, SECRET, data) == "hello"
    assert unb64(data["iv"])[8] & 0x80 == 0  # bit 63 of the IV cleared
    with pytest.raises(MacMismatch):
        decrypt_secret(os.urandom(32), SECRET, data)
    with pytest.raises(MacMismatch):
        decrypt_secret(key, "m.other.secret", data)  # the name is the HKDF info
    flipped = bytearray(unb64(data["ciphertext"]))
    flipped[0] ^= 1
    with pytest.raises(MacMismatch):
        decrypt_secret(key, SECRET, {**data, "ciphertext": b64(bytes(flipped))})


# -- against Synapse --

def test_secret_storage_with_a_random_key_reads_back_with_the_recovery_key(homeserver, matrix_user):
    user = matrix_user("fours")
    storage = SecretStorage.create(homeserver, user.token, user.user_id)
    storage.store(SECRET, "the secret")

    # The server holds the key description, the default key and the encrypted secret
    assert get_account_data(homeserver, user.token, user.user_id, DEFAULT_KEY) == {"key": storage.key_id}
    description = get_account_data(homeserver, user.token, user.user_id, KEY_PREFIX + storage.key_id)
    assert description["algorithm"] == AES_HMAC_SHA2 and "passphrase" not in description
    assert len(unb64(description["iv"])) == 16 and len(unb64(description["mac"])) == 32
    assert set(storage.encrypted(SECRET)) == {"iv", "ciphertext", "mac"}

    # Opened as a new client would, with only the recovery key
    opened = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=storage.recovery_key)
    assert opened.key == storage.key and opened.read(SECRET) == "the secret"

    # A key that decodes but is not this one fails the key check; a typo fails the decoding
    with pytest.raises(WrongKey):
        SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=wrong_recovery_key(storage.recovery_key))
    with pytest.raises(RecoveryKeyError):
        SecretStorage.open(homeserver, user.token, user.user_id,
                           recovery_key=broken_parity_recovery_key(storage.recovery_key))

    # A secret changed on the server no longer reads
    tampered = storage.encrypted(SECRET)
    tampered["ciphertext"] = b64(bytes(len(unb64(tampered["ciphertext"]))))
    put_account_data(homeserver, user.token, user.user_id, SECRET, {"encrypted": {storage.key_id: tampered}})
    with pytest.raises(MacMismatch):
        opened.read(SECRET)


@pytest.mark.parametrize("iterations, bits", [(DEFAULT_ITERATIONS, None), (500_000, 256)])
def test_a_passphrase_gives_the_key_the_recovery_key_gives(homeserver, matrix_user, iterations, bits):
    user = matrix_user("phrase")
    storage = SecretStorage.create(homeserver, user.token, user.user_id, passphrase="correct horse battery",
                                   iterations=iterations, bits=bits)
    storage.store(SECRET, "behind a passphrase")

    info = get_account_data(homeserver, user.token, user.user_id, KEY_PREFIX + storage.key_id)["passphrase"]
    assert info["algorithm"] == "m.pbkdf2" and info["iterations"] == iterations and len(info["salt"]) == 32
    assert ("bits" in info) == (bits is not None)

    by_phrase = SecretStorage.open(homeserver, user.token, user.user_id, passphrase="correct horse battery")
    by_key = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=storage.recovery_key)
    assert by_phrase.key == by_key.key == storage.key
    assert by_phrase.read(SECRET) == by_key.read(SECRET) == "behind a passphrase"
    with pytest.raises(WrongKey):
        SecretStorage.open(homeserver, user.token, user.user_id, passphrase="correct horse batter")


def test_padded_base64_and_descriptions_without_a_key_check(homeserver, matrix_user):
    user = matrix_user("padded")
    padded = SecretStorage.create(homeserver, user.token, user.user_id, padded=True)
    padded.store(SECRET, "padded")
    assert padded.encrypted(SECRET)["mac"].endswith("=")
    opened = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=padded.recovery_key)
    assert opened.read(SECRET) == "padded"

    # Without iv and mac any key "opens" the description (the spec says to assume it is right),
    # and the secret's own MAC is what stops a wrong one
    bare = SecretStorage.create(homeserver, user.token, user.user_id, with_key_check=False)
    bare.store(SECRET, "unchecked")
    assert "mac" not in bare.description
    wrong = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=wrong_recovery_key(bare.recovery_key))
    with pytest.raises(MacMismatch):
        wrong.read(SECRET)


def test_bootstrap_keeps_the_published_cross_signing_keys_in_secret_storage(homeserver, matrix_user):
    user = matrix_user("element")
    identity, storage = bootstrap(homeserver, user, passphrase="a passphrase")

    # The three secrets are the unpadded base64 of 32-byte seeds, readable with the passphrase
    opened = SecretStorage.open(homeserver, user.token, user.user_id, passphrase="a passphrase")
    for name in ("m.cross_signing.master", "m.cross_signing.self_signing", "m.cross_signing.user_signing"):
        text = opened.read(name)
        assert "=" not in text and len(unb64(text)) == 32
    recovered = CrossSigningIdentity.from_secret_storage(opened)

    # and they are the private halves of what the server publishes for the user
    answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", user.token,
                             json_body={"device_keys": {user.user_id: []}})
    for usage, listed in (("master", "master_keys"), ("self_signing", "self_signing_keys"),
                          ("user_signing", "user_signing_keys")):
        public = recovered.public(getattr(recovered, usage))
        assert public == identity.public(getattr(identity, usage))
        assert answer[listed][user.user_id]["keys"] == {f"ed25519:{public}": public}
        assert answer[listed][user.user_id]["usage"] == [usage]


def test_is_device_cross_signed_only_for_a_device_the_self_signing_key_signed(homeserver, matrix_user):
    user = matrix_user("owner")
    _, signed = bare_device(homeserver, user.user_id, user.password)
    _, unsigned = bare_device(homeserver, user.user_id, user.password)
    identity, storage = bootstrap(homeserver, user, sign_devices=(signed,))
    master = identity.public(identity.master)

    assert is_device_cross_signed(homeserver, user.token, user.user_id, signed)
    assert is_device_cross_signed(homeserver, user.token, user.user_id, signed, master=master)
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, unsigned)
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, signed, master=b64(os.urandom(32)))
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, "NOSUCHDEVICE")

    # A signature that is present but wrong does not count, on the device or on the self-signing key
    answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", user.token,
                             json_body={"device_keys": {user.user_id: [signed]}})
    assert cross_signed_in(answer, user.user_id, signed)
    ssk_id = f"ed25519:{identity.public(identity.self_signing)}"
    master_id = f"ed25519:{master}"
    device = answer["device_keys"][user.user_id][signed]
    device["signatures"][user.user_id][ssk_id] = b64(os.urandom(64))
    assert not cross_signed_in(answer, user.user_id, signed)
    answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", user.token,
                             json_body={"device_keys": {user.user_id: [signed]}})
    answer["self_signing_keys"][user.user_id]["signatures"][user.user_id][master_id] = b64(os.urandom(64))
    assert not cross_signed_in(answer, user.user_id, signed)
    answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", user.token,
                             json_body={"device_keys": {user.user_id: [signed]}})
    answer["device_keys"][user.user_id][signed]["algorithms"].append("m.something.else")
    assert not cross_signed_in(answer, user.user_id, signed)

    # A new identity (the old signatures stay on the server) vouches for nothing it did not sign
    CrossSigningIdentity(user.user_id).upload(homeserver, user.token, user.password)
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, signed)


def test_the_self_signing_key_read_from_secret_storage_signs_a_device(homeserver, matrix_user):
    # What Ferry will do: open secret storage with the recovery key, take the self-signing key,
    # and sign a device with it
    user = matrix_user("reader")
    _, device = bare_device(homeserver, user.user_id, user.password)
    _, storage = bootstrap(homeserver, user)
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, device)
    opened = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=storage.recovery_key)
    CrossSigningIdentity.from_secret_storage(opened).verify_device(homeserver, user.token, device)
    assert is_device_cross_signed(homeserver, user.token, user.user_id, device)
    assert re.fullmatch(r"([1-9A-HJ-NP-Za-km-z]{4} ){11}[1-9A-HJ-NP-Za-km-z]{1,4}", storage.recovery_key)
