"""Olm and Megolm as implementations we did not write see them, and FerryCrypto through its probe.

`Libolm` is the C library through python-olm; `Vodozemac` the Rust crate inside matrix-rust-sdk
through its Python binding. Both are driven through one small interface, so every test runs
against each. `Probe` is FerryCrypto behind `ferry-crypto-probe` (JSON lines on a pipe); it holds
one account, one Olm session and one inbound and one outbound Megolm session.

Base64 here is Matrix's: standard alphabet, no padding.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import olm
import vodozemac

ROOT = Path(__file__).resolve().parents[2]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def strip(value: dict) -> dict:
    """What a signature covers: the object without `signatures` and `unsigned`."""
    return {key: item for key, item in value.items() if key not in ("signatures", "unsigned")}


def canonical(value) -> bytes:
    """Matrix canonical JSON, as the spec's reference implementations write it in Python."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


class Probe:
    def __init__(self) -> None:
        path = os.environ.get("FERRY_CRYPTO_PROBE") or str(ROOT / ".build" / "debug" / "ferry-crypto-probe")
        self.process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, op: str, **fields):
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"ferry-crypto-probe ended while answering {op}"
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


class Libolm:
    name = "libolm"

    def __init__(self) -> None:
        self.account = olm.Account()
        self.session = None

    @property
    def curve25519(self) -> str:
        return self.account.identity_keys["curve25519"]

    @property
    def ed25519(self) -> str:
        return self.account.identity_keys["ed25519"]

    def sign(self, message: bytes) -> str:
        return self.account.sign(message.decode())

    def one_time_key(self) -> str:
        self.account.generate_one_time_keys(1)
        key = next(iter(self.account.one_time_keys["curve25519"].values()))
        self.account.mark_keys_as_published()
        return key

    @staticmethod
    def verify(ed25519: str, message: bytes, signature: str) -> None:
        olm.ed25519_verify(ed25519, message, signature)

    def outbound(self, identity_key: str, one_time_key: str) -> None:
        self.session = olm.OutboundSession(self.account, identity_key, one_time_key)

    def inbound(self, sender_key: str, body: str) -> bytes:
        message = olm.OlmPreKeyMessage(body)
        self.session = olm.InboundSession(self.account, message, sender_key)
        self.account.remove_one_time_keys(self.session)
        return self.session.decrypt(message).encode()

    def matches(self, body: str) -> bool:
        """Whether a pre-key message belongs to the session held."""
        return self.session.matches(olm.OlmPreKeyMessage(body))

    def encrypt(self, plaintext: bytes) -> tuple[int, str]:
        message = self.session.encrypt(plaintext.decode())
        return message.message_type, message.ciphertext

    def decrypt(self, kind: int, body: str) -> bytes:
        message = olm.OlmPreKeyMessage(body) if kind == 0 else olm.OlmMessage(body)
        return self.session.decrypt(message).encode()

    @staticmethod
    def group_inbound(session_key: str):
        return LibolmInboundGroup(olm.InboundGroupSession(session_key))

    @staticmethod
    def group_outbound():
        return LibolmOutboundGroup()

    @staticmethod
    def group_import(exported: str):
        """A session from its export (version 1), as a restored backup or a forwarded key gives it."""
        return LibolmInboundGroup(olm.InboundGroupSession.import_session(exported))

    @staticmethod
    def backup_key():
        """A key backup's private key, as Element makes one (libolm's PkDecryption)."""
        return LibolmBackupKey()


class LibolmInboundGroup:
    def __init__(self, session) -> None:
        self.session = session

    @property
    def session_id(self) -> str:
        return self.session.id

    def decrypt(self, ciphertext: str) -> tuple[bytes, int]:
        plaintext, index = self.session.decrypt(ciphertext)
        return plaintext.encode(), index

    def export_at(self, index: int) -> str:
        return self.session.export_session(index)


class LibolmOutboundGroup:
    def __init__(self) -> None:
        self.session = olm.OutboundGroupSession()

    @property
    def session_key(self) -> str:
        return self.session.session_key

    def encrypt(self, plaintext: bytes) -> str:
        return self.session.encrypt(plaintext.decode())


class LibolmBackupKey:
    """Reads `session_data` of `m.megolm_backup.v1.curve25519-aes-sha2` (libolm checks the MAC)."""

    def __init__(self) -> None:
        self.key = olm.PkDecryption()

    @property
    def public_key(self) -> str:
        return self.key.public_key

    def decrypt(self, session_data: dict) -> bytes:
        message = olm.pk.PkMessage(session_data["ephemeral"], session_data["mac"], session_data["ciphertext"])
        return self.key.decrypt(message, unicode_errors="strict").encode()


class Vodozemac:
    name = "vodozemac"

    def __init__(self) -> None:
        self.account = vodozemac.Account()
        self.session = None

    @property
    def curve25519(self) -> str:
        return self.account.curve25519_key.to_base64()

    @property
    def ed25519(self) -> str:
        return self.account.ed25519_key.to_base64()

    def sign(self, message: bytes) -> str:
        return self.account.sign(message).to_base64()

    def one_time_key(self) -> str:
        self.account.generate_one_time_keys(1)
        key = next(iter(self.account.one_time_keys.values())).to_base64()
        self.account.mark_keys_as_published()
        return key

    @staticmethod
    def verify(ed25519: str, message: bytes, signature: str) -> None:
        vodozemac.Ed25519PublicKey.from_base64(ed25519).verify_signature(
            message, vodozemac.Ed25519Signature.from_base64(signature))

    def outbound(self, identity_key: str, one_time_key: str) -> None:
        self.session = self.account.create_outbound_session(
            vodozemac.Curve25519PublicKey.from_base64(identity_key), vodozemac.Curve25519PublicKey.from_base64(one_time_key))

    def inbound(self, sender_key: str, body: str) -> bytes:
        self.session, plaintext = self.account.create_inbound_session(
            vodozemac.Curve25519PublicKey.from_base64(sender_key), vodozemac.PreKeyMessage.from_base64(body))
        return bytes(plaintext)

    def matches(self, body: str) -> bool:
        return self.session.session_matches(vodozemac.PreKeyMessage.from_base64(body))

    def encrypt(self, plaintext: bytes) -> tuple[int, str]:
        kind, raw = self.session.encrypt(plaintext).to_parts()
        return kind, b64(bytes(raw))

    def decrypt(self, kind: int, body: str) -> bytes:
        return bytes(self.session.decrypt(vodozemac.AnyOlmMessage.from_parts(kind, unb64(body))))

    @staticmethod
    def group_inbound(session_key: str):
        return VodozemacInboundGroup(vodozemac.InboundGroupSession(vodozemac.SessionKey(session_key)))

    @staticmethod
    def group_outbound():
        return VodozemacOutboundGroup()

    @staticmethod
    def group_import(exported: str):
        return VodozemacInboundGroup(vodozemac.InboundGroupSession.import_session(vodozemac.ExportedSessionKey(exported)))

    @staticmethod
    def backup_key():
        return VodozemacBackupKey()


class VodozemacInboundGroup:
    def __init__(self, session) -> None:
        self.session = session

    @property
    def session_id(self) -> str:
        return self.session.session_id

    def decrypt(self, ciphertext: str) -> tuple[bytes, int]:
        decrypted = self.session.decrypt(vodozemac.MegolmMessage.from_base64(ciphertext))
        return bytes(decrypted.plaintext), decrypted.message_index

    def export_at(self, index: int) -> str:
        return self.session.export_at(index).to_base64()


class VodozemacBackupKey:
    def __init__(self) -> None:
        self.key = vodozemac.PkDecryption()

    @property
    def public_key(self) -> str:
        return self.key.public_key.to_base64()

    def decrypt(self, session_data: dict) -> bytes:
        return bytes(self.key.decrypt(vodozemac.Message.from_base64(
            session_data["ciphertext"], session_data["mac"], session_data["ephemeral"])))


class VodozemacOutboundGroup:
    def __init__(self) -> None:
        self.session = vodozemac.GroupSession()

    @property
    def session_key(self) -> str:
        return self.session.session_key.to_base64()

    def encrypt(self, plaintext: bytes) -> str:
        return self.session.encrypt(plaintext).to_base64()


def signed(peer, user_id: str, device_id: str, value: dict) -> dict:
    """`value` with `peer`'s signature, as its own client would write it (its canonical JSON)."""
    return {**value, "signatures": {user_id: {f"ed25519:{device_id}": peer.sign(canonical(value))}}}


def device_keys(peer, user_id: str, device_id: str) -> dict:
    """`peer`'s signed device keys, as /keys/query returns them."""
    return signed(peer, user_id, device_id, {
        "user_id": user_id, "device_id": device_id,
        "algorithms": ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
        "keys": {f"curve25519:{device_id}": peer.curve25519, f"ed25519:{device_id}": peer.ed25519},
    })


PEERS = [Libolm, Vodozemac]
