"""Cross-signing done by a client we did not write in Swift: a person's master and self-signing
keys made with `cryptography`'s Ed25519, uploaded to Synapse, and one of their devices signed
with the self-signing key (the "verified by its owner" that clients show). Canonical JSON and
signatures are this module's own (cryptopeers.canonical), never Ferry's."""

from __future__ import annotations

import urllib.parse
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from cryptopeers import b64, canonical, strip


class CrossSigningIdentity:
    def __init__(self, user_id: str) -> None:
        self.user_id = user_id
        self.master = Ed25519PrivateKey.generate()
        self.self_signing = Ed25519PrivateKey.generate()

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
                "self_signing_key": self.sign(self.key_object(self.self_signing, "self_signing"), self.master)}
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
