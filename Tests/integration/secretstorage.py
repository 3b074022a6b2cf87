"""Secret storage ("4S") set up the way Element does it, by a client written here from the Matrix
spec and never from Ferry's Swift code, so Ferry can be tested reading the account's cross-signing
keys back with the recovery key or the passphrase a person would type.

Where the rules come from (Matrix spec, client-server API):
- "Secrets" › "Storage" › "Key storage": key descriptions in account data
  `m.secret_storage.key.<key id>`, the default key in `m.secret_storage.default_key`.
- "m.secret_storage.v1.aes-hmac-sha2" (both sections of that name): HKDF-SHA-256 with a salt of
  32 zero bytes, info = the secret's name ("" for the key check), 64 bytes → AES-256-CTR key and
  HMAC-SHA-256 key; a random 16-byte IV with bit 63 cleared; the key check is the MAC of 32
  encrypted zero bytes. Readers must accept padded as well as unpadded base64.
- "Key representation" (and the appendix "Cryptographic key representation"): 0x8B 0x01, the key,
  a parity byte XOR of everything before it, base58 with the Bitcoin alphabet, groups of four
  characters separated by spaces; whitespace is insignificant when reading.
- "Deriving keys from passphrases": `m.pbkdf2` = PBKDF2 with SHA-512, the `salt` string, the
  `iterations`, and `bits` (default 256).
- "Cross-signing": the private keys are the secrets `m.cross_signing.master`,
  `m.cross_signing.self_signing` and `m.cross_signing.user_signing` (unpadded base64 of each
  Ed25519 seed); see crosssigning.CrossSigningIdentity.store_in.

Element's choices the spec leaves open, followed here: a 32-character alphanumeric key id, a
32-character alphanumeric PBKDF2 salt, no `bits` in the passphrase info, the new key made the
default one, and the recovery key shown even when the key came from a passphrase.

Usage (a person with cross-signing and secret storage behind a passphrase):

    user = matrix_user("alice")
    identity, storage = bootstrap(homeserver, user, passphrase="correct horse")
    storage.recovery_key         # "EsT… …" what Element would show; also opens the storage
    SecretStorage.open(homeserver, user.token, user.user_id, passphrase="correct horse")
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import string
import urllib.parse
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from crosssigning import CROSS_SIGNING_SECRETS, CrossSigningIdentity, is_device_cross_signed  # noqa: F401
from cryptopeers import b64, unb64

AES_HMAC_SHA2 = "m.secret_storage.v1.aes-hmac-sha2"
PBKDF2 = "m.pbkdf2"
DEFAULT_KEY = "m.secret_storage.default_key"
KEY_PREFIX = "m.secret_storage.key."
# Small enough for a fast test; Element uses 500000, which tests can ask for to measure.
DEFAULT_ITERATIONS = 10_000

# Appendix "Cryptographic key representation": the Bitcoin base58 alphabet and the two header bytes.
BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
RECOVERY_KEY_PREFIX = b"\x8b\x01"
RECOVERY_KEY_LENGTH = len(RECOVERY_KEY_PREFIX) + 32 + 1


class RecoveryKeyError(ValueError):
    """A recovery key that does not decode: not base58, wrong length, prefix or parity."""


class WrongKey(ValueError):
    """The key does not match the key description's check MAC (a wrong recovery key or passphrase)."""


class MacMismatch(ValueError):
    """A secret's MAC does not match its ciphertext under this key: tampered, or another key."""


# -- base58 and the recovery key --

def b58encode(data: bytes) -> str:
    """Base58 with the Bitcoin alphabet: the bytes as one big-endian number, and one '1' per
    leading zero byte."""
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, digit = divmod(number, 58)
        out = BASE58_ALPHABET[digit] + out
    zeros = len(data) - len(data.lstrip(b"\0"))
    return BASE58_ALPHABET[0] * zeros + out


def b58decode(text: str) -> bytes:
    """The reverse of b58encode; a character outside the alphabet raises RecoveryKeyError."""
    number = 0
    for char in text:
        digit = BASE58_ALPHABET.find(char)
        if digit < 0:
            raise RecoveryKeyError(f"not base58: {char!r}")
        number = number * 58 + digit
    zeros = len(text) - len(text.lstrip(BASE58_ALPHABET[0]))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\0" * zeros + body


def _parity(data: bytes) -> int:
    parity = 0
    for byte in data:
        parity ^= byte
    return parity


def _group(text: str) -> str:
    """Key representation step 4: groups of four characters separated by spaces."""
    return " ".join(text[i:i + 4] for i in range(0, len(text), 4))


def encode_recovery_key(key: bytes) -> str:
    """A 32-byte secret storage key as a person is shown it: "EsTc abcd …"."""
    assert len(key) == 32, len(key)
    body = RECOVERY_KEY_PREFIX + key
    return _group(b58encode(body + bytes([_parity(body)])))


def decode_recovery_key(text: str) -> bytes:
    """The 32 key bytes of a recovery key; whitespace anywhere is ignored (the spec says it is
    insignificant). Raises RecoveryKeyError for a wrong alphabet, length, prefix or parity."""
    raw = b58decode("".join(text.split()))
    if len(raw) != RECOVERY_KEY_LENGTH:
        raise RecoveryKeyError(f"decodes to {len(raw)} bytes, not {RECOVERY_KEY_LENGTH}")
    if raw[:2] != RECOVERY_KEY_PREFIX:
        raise RecoveryKeyError(f"prefix {raw[:2].hex()}, not 8b01")
    if _parity(raw) != 0:  # the parity byte XORed with everything before it
        raise RecoveryKeyError("parity byte does not match")
    return raw[2:-1]


def wrong_recovery_key(recovery_key: str | None = None) -> str:
    """A recovery key that decodes cleanly (right prefix and parity) but holds another key: what a
    person pasting the key of another account, or an old one, would give."""
    while True:
        other = encode_recovery_key(os.urandom(32))
        if recovery_key is None or decode_recovery_key(other) != decode_recovery_key(recovery_key):
            return other


def broken_parity_recovery_key(recovery_key: str) -> str:
    """`recovery_key` with its parity byte changed: a typo a reader must refuse before using the key
    (prefix and length stay right, so only the parity check can catch it)."""
    raw = bytearray(b58decode("".join(recovery_key.split())))
    raw[-1] ^= 0x01
    return _group(b58encode(bytes(raw)))


# -- the algorithm m.secret_storage.v1.aes-hmac-sha2 --

def passphrase_key(passphrase: str, salt: str, iterations: int, bits: int = 256) -> bytes:
    """"Deriving keys from passphrases", m.pbkdf2: PBKDF2-HMAC-SHA-512 over the salt string."""
    return hashlib.pbkdf2_hmac("sha512", passphrase.encode(), salt.encode(), iterations, dklen=bits // 8)


def _derive(key: bytes, name: str) -> tuple[bytes, bytes]:
    """Step 1: HKDF-SHA-256, salt 32 zero bytes, info the secret's name → (AES key, MAC key)."""
    out = HKDF(algorithm=SHA256(), length=64, salt=bytes(32), info=name.encode()).derive(key)
    return out[:32], out[32:]


def _iv() -> bytes:
    """Step 2: 16 random bytes with bit 63 cleared, the top bit of byte 8 (so the low 64 bits of
    the counter cannot wrap, whatever an AES-CTR implementation does at that boundary)."""
    iv = bytearray(os.urandom(16))
    iv[8] &= 0x7F
    return bytes(iv)


def _ctr(aes_key: bytes, iv: bytes, data: bytes) -> bytes:
    """AES-256-CTR with the IV as the whole 128-bit big-endian counter block."""
    cipher = Cipher(algorithms.AES(aes_key), modes.CTR(iv)).encryptor()
    return cipher.update(data) + cipher.finalize()


def _mac(mac_key: bytes, ciphertext: bytes) -> bytes:
    return hmac.new(mac_key, ciphertext, hashlib.sha256).digest()


def _encode(data: bytes, padded: bool) -> str:
    # The spec says unpadded base64; some clients pad, and readers must accept both.
    return base64.b64encode(data).decode() if padded else b64(data)


def _encrypt(key: bytes, name: str, data: bytes, iv: bytes | None, padded: bool) -> dict[str, str]:
    aes_key, mac_key = _derive(key, name)
    iv = iv or _iv()
    ciphertext = _ctr(aes_key, iv, data)
    return {"iv": _encode(iv, padded), "ciphertext": _encode(ciphertext, padded),
            "mac": _encode(_mac(mac_key, ciphertext), padded)}


def encrypt_secret(key: bytes, name: str, plaintext: str, iv: bytes | None = None,
                   padded: bool = False) -> dict[str, str]:
    """Steps 1–5 of encrypting a secret: {"iv", "ciphertext", "mac"}, base64."""
    return _encrypt(key, name, plaintext.encode(), iv, padded)


def decrypt_secret(key: bytes, name: str, data: dict[str, str]) -> str:
    """The reverse, MAC first: raises MacMismatch unless the MAC over the ciphertext matches."""
    aes_key, mac_key = _derive(key, name)
    ciphertext = unb64(data["ciphertext"])
    if not hmac.compare_digest(_mac(mac_key, ciphertext), unb64(data["mac"])):
        raise MacMismatch(f"MAC of {name} does not match under this key")
    return _ctr(aes_key, unb64(data["iv"]), ciphertext).decode()


def key_check(key: bytes, iv: bytes | None = None, padded: bool = False) -> dict[str, str]:
    """"Key storage" steps 1–5: encrypt 32 zero bytes with info "" and keep the IV and the MAC."""
    encrypted = _encrypt(key, "", bytes(32), iv, padded)
    return {"iv": encrypted["iv"], "mac": encrypted["mac"]}


def key_matches(key: bytes, description: dict[str, Any]) -> bool:
    """Whether `key` is the key a description describes. Without `iv` and `mac` the spec says a
    client must assume it is."""
    if description.get("algorithm") != AES_HMAC_SHA2:
        return False
    if "iv" not in description or "mac" not in description:
        return True
    expected = key_check(key, unb64(description["iv"]))["mac"]
    return hmac.compare_digest(unb64(expected), unb64(description["mac"]))


# -- account data, as any client writes and reads it --

def _account_data_path(user_id: str, event_type: str) -> str:
    quote = lambda part: urllib.parse.quote(part, safe="")  # noqa: E731
    return f"/_matrix/client/v3/user/{quote(user_id)}/account_data/{quote(event_type)}"


def put_account_data(homeserver, token: str, user_id: str, event_type: str, content: dict[str, Any]) -> None:
    """PUT /_matrix/client/v3/user/{userId}/account_data/{type}."""
    homeserver.call("PUT", _account_data_path(user_id, event_type), token, json_body=content)


def get_account_data(homeserver, token: str, user_id: str, event_type: str) -> dict[str, Any] | None:
    """GET of the same; None when the server has none (404)."""
    answer = homeserver.request("GET", _account_data_path(user_id, event_type), token)
    if answer.status == 404:
        return None
    assert answer.status == 200, (answer.status, answer.body)
    return answer.json()


def _random_id(length: int = 32) -> str:
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(length))


class SecretStorage:
    """One secret storage key of a user, with what the server holds about it.

    `key` is the 32-byte secret storage key, `key_id` its id, `description` the content of
    `m.secret_storage.key.<key_id>` as uploaded, `passphrase` the one it came from (or None)."""

    def __init__(self, homeserver, token: str, user_id: str, key: bytes, key_id: str,
                 description: dict[str, Any], passphrase: str | None = None, padded: bool = False) -> None:
        self.homeserver, self.token, self.user_id = homeserver, token, user_id
        self.key, self.key_id, self.description = key, key_id, description
        self.passphrase, self.padded = passphrase, padded

    @classmethod
    def create(cls, homeserver, token: str, user_id: str, passphrase: str | None = None,
               iterations: int = DEFAULT_ITERATIONS, bits: int | None = None, name: str | None = None,
               with_key_check: bool = True, padded: bool = False, make_default: bool = True) -> "SecretStorage":
        """Makes a new key (random, or from `passphrase` with m.pbkdf2 and a random salt), uploads its
        description and makes it the default key, as Element's "Set up secure backup" does.
        `bits` is written into the passphrase info only when given (Element leaves it out, so
        readers must default to 256). `with_key_check=False` leaves out iv/mac (the spec lets a
        description have none); `padded=True` writes padded base64, as some clients do."""
        description: dict[str, Any] = {"algorithm": AES_HMAC_SHA2}
        if name is not None:
            description["name"] = name
        if passphrase is None:
            key = os.urandom(32)
        else:
            info: dict[str, Any] = {"algorithm": PBKDF2, "salt": _random_id(), "iterations": iterations}
            if bits is not None:
                info["bits"] = bits
            description["passphrase"] = info
            key = passphrase_key(passphrase, info["salt"], iterations, bits or 256)
        if with_key_check:
            description.update(key_check(key, padded=padded))
        key_id = _random_id()
        put_account_data(homeserver, token, user_id, KEY_PREFIX + key_id, description)
        if make_default:
            put_account_data(homeserver, token, user_id, DEFAULT_KEY, {"key": key_id})
        return cls(homeserver, token, user_id, key, key_id, description, passphrase, padded)

    @classmethod
    def open(cls, homeserver, token: str, user_id: str, recovery_key: str | None = None,
             passphrase: str | None = None, key_id: str | None = None) -> "SecretStorage":
        """Opens the default key (or `key_id`) as a client does when the person types the recovery
        key or the passphrase: reads the description from the server, derives the key, checks it
        against the description's MAC. Raises WrongKey for a key that does not match, and
        RecoveryKeyError for a recovery key that does not decode."""
        assert (recovery_key is None) != (passphrase is None), "give a recovery key or a passphrase"
        if key_id is None:
            default = get_account_data(homeserver, token, user_id, DEFAULT_KEY)
            assert default and "key" in default, f"no {DEFAULT_KEY} for {user_id}"
            key_id = default["key"]
        description = get_account_data(homeserver, token, user_id, KEY_PREFIX + key_id)
        assert description is not None, f"no {KEY_PREFIX}{key_id} for {user_id}"
        if recovery_key is not None:
            key = decode_recovery_key(recovery_key)
        else:
            info = description.get("passphrase")
            assert info and info.get("algorithm") == PBKDF2, f"key {key_id} has no m.pbkdf2 passphrase: {info}"
            key = passphrase_key(passphrase, info["salt"], info["iterations"], info.get("bits", 256))
        if not key_matches(key, description):
            raise WrongKey(f"the key does not match {KEY_PREFIX}{key_id}")
        return cls(homeserver, token, user_id, key, key_id, description, passphrase)

    @property
    def recovery_key(self) -> str:
        """The key as Element shows it, also for a key that came from a passphrase."""
        return encode_recovery_key(self.key)

    def store(self, name: str, secret: str) -> None:
        """Encrypts `secret` under this key into account data of type `name`."""
        put_account_data(self.homeserver, self.token, self.user_id, name,
                         {"encrypted": {self.key_id: encrypt_secret(self.key, name, secret, padded=self.padded)}})

    def encrypted(self, name: str) -> dict[str, str]:
        """What the server holds of secret `name` for this key (for tests that tamper with it)."""
        content = get_account_data(self.homeserver, self.token, self.user_id, name)
        assert content is not None, f"no account data {name} for {self.user_id}"
        return content["encrypted"][self.key_id]

    def read(self, name: str) -> str:
        """Secret `name` read back from the server and decrypted, its MAC checked (MacMismatch)."""
        return decrypt_secret(self.key, name, self.encrypted(name))


def bootstrap(homeserver, user, passphrase: str | None = None, iterations: int = DEFAULT_ITERATIONS,
              sign_devices: tuple[str, ...] = (), **storage_options: Any) -> tuple[CrossSigningIdentity, SecretStorage]:
    """What Element does when a person sets up secure backup: a new cross-signing identity
    (master, self-signing, user-signing) uploaded with the password, a secret storage key (from
    `passphrase` if given) as the default key, and the three private keys stored in it; then
    each of `sign_devices` signed with the self-signing key. `user` is a homeserver.MatrixUser."""
    storage = SecretStorage.create(homeserver, user.token, user.user_id, passphrase=passphrase,
                                   iterations=iterations, **storage_options)
    identity = CrossSigningIdentity(user.user_id)
    identity.upload(homeserver, user.token, user.password)
    identity.store_in(storage)
    for device_id in sign_devices:
        identity.verify_device(homeserver, user.token, device_id)
    return identity, storage
