"""Cross-signing done by a client we did not write in Swift: a person's master, self-signing and
user-signing keys made with `cryptography`'s Ed25519, uploaded to Synapse, and one of their devices
signed with the self-signing key (the "verified by its owner" that clients show). Canonical JSON
and signatures are this module's own (cryptopeers.canonical), never Ferry's.

The private keys can be kept in secret storage (secretstorage.SecretStorage) as Element keeps
them, and `is_device_cross_signed` checks, with this module's own verification, what the server
now lists for a device."""

from __future__ import annotations

import urllib.parse
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from cryptopeers import b64, canonical, strip, unb64

# Spec, client-server API, "Cross-signing": the secret names the private keys are stored under.
CROSS_SIGNING_SECRETS = {"master": "m.cross_signing.master",
                         "self_signing": "m.cross_signing.self_signing",
                         "user_signing": "m.cross_signing.user_signing"}


class CrossSigningIdentity:
    """A person's cross-signing keys. Made fresh by default; `from_secret_storage` makes one from
    the private keys a secret storage holds."""

    def __init__(self, user_id: str, master: Ed25519PrivateKey | None = None,
                 self_signing: Ed25519PrivateKey | None = None,
                 user_signing: Ed25519PrivateKey | None = None) -> None:
        self.user_id = user_id
        self.master = master or Ed25519PrivateKey.generate()
        self.self_signing = self_signing or Ed25519PrivateKey.generate()
        self.user_signing = user_signing or Ed25519PrivateKey.generate()

    @staticmethod
    def seed(key: Ed25519PrivateKey) -> bytes:
        """The 32-byte Ed25519 private seed: what secret storage keeps (as unpadded base64)."""
        return key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    def store_in(self, storage) -> None:
        """Stores the three private keys in `storage` (a secretstorage.SecretStorage), each as
        the unpadded base64 of its seed under its spec name, as Element does."""
        for usage, name in CROSS_SIGNING_SECRETS.items():
            storage.store(name, b64(self.seed(getattr(self, usage))))

    @classmethod
    def from_secret_storage(cls, storage) -> "CrossSigningIdentity":
        """The identity whose private keys `storage` holds (each secret decrypted, MAC checked)."""
        keys = {usage: Ed25519PrivateKey.from_private_bytes(unb64(storage.read(name)))
                for usage, name in CROSS_SIGNING_SECRETS.items()}
        return cls(storage.user_id, **keys)

    @staticmethod
    def public(key: Ed25519PrivateKey) -> str:
        return b64(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    def key_object(self, key: Ed25519PrivateKey, usage: str) -> dict[str, Any]:
        public = self.public(key)
        return {"user_id": self.user_id, "usage": [usage], "keys": {f"ed25519:{public}": public}}

    def sign(self, value: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
        signature = b64(key.sign(canonical(strip(value))))
        signatures = dict(value.get("signatures", {}))
        signatures[self.user_id] = {**signatures.get(self.user_id, {}), f"ed25519:{self.public(key)}": signature}
        return {**value, "signatures": signatures}

    def upload(self, homeserver, token: str, password: str) -> None:
        """POST /keys/device_signing/upload, through user-interactive auth with the password."""
        body = {"master_key": self.key_object(self.master, "master"),
                "self_signing_key": self.sign(self.key_object(self.self_signing, "self_signing"), self.master),
                "user_signing_key": self.sign(self.key_object(self.user_signing, "user_signing"), self.master)}
        first = homeserver.request("POST", "/_matrix/client/v3/keys/device_signing/upload", token, body)
        if first.status == 401:
            session = first.json().get("session")
            body["auth"] = {"type": "m.login.password", "session": session, "password": password,
                            "identifier": {"type": "m.id.user", "user": self.user_id}}
            homeserver.call("POST", "/_matrix/client/v3/keys/device_signing/upload", token, json_body=body)
        else:
            assert first.status == 200, (first.status, first.body)

    def verify_device(self, homeserver, token: str, device_id: str) -> None:
        """Signs the device's keys (as the server lists them) with the self-signing key."""
        answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", token,
                                 json_body={"device_keys": {self.user_id: [device_id]}})
        keys = answer["device_keys"][self.user_id][device_id]
        signed = self.sign({k: v for k, v in keys.items() if k != "unsigned"}, self.self_signing)
        ours = {"signatures": {self.user_id: {f"ed25519:{self.public(self.self_signing)}":
                                              signed["signatures"][self.user_id][f"ed25519:{self.public(self.self_signing)}"]}}}
        body = {self.user_id: {device_id: {**strip(keys), **ours}}}
        answer = homeserver.call("POST", "/_matrix/client/v3/keys/signatures/upload", token, json_body=body)
        assert not answer.get("failures"), answer


def bare_device(homeserver, user_id: str, password: str) -> tuple[str, str]:
    """A new device of the user (password login) with Ed25519 and Curve25519 device keys made here
    and self-signed, as /keys/upload takes them; returns (access token, device id). A device to
    cross-sign, or to leave unsigned."""
    token, device_id = homeserver.login(user_id, password)
    ed25519 = Ed25519PrivateKey.generate()
    raw = lambda key: b64(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))  # noqa: E731
    keys = {"user_id": user_id, "device_id": device_id,
            "algorithms": ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
            "keys": {f"curve25519:{device_id}": raw(X25519PrivateKey.generate()),
                     f"ed25519:{device_id}": raw(ed25519)}}
    keys["signatures"] = {user_id: {f"ed25519:{device_id}": b64(ed25519.sign(canonical(keys)))}}
    homeserver.call("POST", "/_matrix/client/v3/keys/upload", token, json_body={"device_keys": keys})
    return token, device_id


def _only_ed25519(key_object: dict[str, Any]) -> str:
    """The one public key of a cross-signing key object ("keys" holds exactly one, ed25519)."""
    [(key_id, public)] = key_object["keys"].items()
    if key_id != f"ed25519:{public}":
        raise ValueError(f"not a cross-signing key id: {key_id}")
    return public


def _signed_by(value: dict[str, Any], user_id: str, public: str) -> bool:
    """Whether `value` carries a valid signature by Ed25519 key `public` of `user_id`, over its
    canonical JSON without `signatures` and `unsigned` (appendix "Signing JSON")."""
    signature = value.get("signatures", {}).get(user_id, {}).get(f"ed25519:{public}")
    if signature is None:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(unb64(public)).verify(unb64(signature), canonical(strip(value)))
    except (InvalidSignature, ValueError):
        return False
    return True


def cross_signed_in(answer: dict[str, Any], user_id: str, device_id: str, master: str | None = None) -> bool:
    """Whether a /keys/query answer shows `device_id` of `user_id` signed by the user's
    self-signing key, and that key signed by the user's master key (spec "Cross-signing").
    `master`, when given, is the master public key (unpadded base64) the identity must have."""
    try:
        master_key = answer["master_keys"][user_id]
        self_signing_key = answer["self_signing_keys"][user_id]
        device = answer["device_keys"][user_id][device_id]
        master_public = _only_ed25519(master_key)
        self_signing_public = _only_ed25519(self_signing_key)
    except (KeyError, TypeError, ValueError):
        return False
    if master is not None and master_public != master:
        return False
    if master_key.get("user_id") != user_id or "master" not in master_key.get("usage", []):
        return False
    if self_signing_key.get("user_id") != user_id or "self_signing" not in self_signing_key.get("usage", []):
        return False
    if device.get("user_id") != user_id or device.get("device_id") != device_id:
        return False
    return (_signed_by(self_signing_key, user_id, master_public)
            and _signed_by(device, user_id, self_signing_public))


def is_device_cross_signed(homeserver, token: str, user_id: str, device_id: str, master: str | None = None) -> bool:
    """Asks the server (/keys/query, as `token`'s user) and checks with cross_signed_in."""
    answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", token,
                             json_body={"device_keys": {user_id: [device_id]}})
    return cross_signed_in(answer, user_id, device_id, master)
