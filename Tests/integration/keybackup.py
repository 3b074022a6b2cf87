"""Server-side key backup (m.megolm_backup.v1.curve25519-aes-sha2) as Element sets it up and
restores from it, with libolm or vodozemac (cryptopeers), never with Ferry's code.

    backup = KeyBackup.create(homeserver, user, Libolm, signer=identity)   # a new backup version
    sessions = backup.restore()            # session id → inbound session, from what the server holds
    texts = backup.read_events(room, sender)   # the sender's encrypted events, decrypted with them

A device restoring the backup holds no room key of its own: what it reads, it reads from the
backup alone."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

ALGORITHM = "m.megolm_backup.v1.curve25519-aes-sha2"


class KeyBackup:
    def __init__(self, homeserver, user, peer, version: str, key) -> None:
        self.homeserver, self.user, self.peer, self.version, self.key = homeserver, user, peer, version, key

    @classmethod
    def create(cls, homeserver, user, peer, signer=None, master=None) -> "KeyBackup":
        """POST /room_keys/version: a new backup with `peer`'s key, its auth_data signed by
        `signer`'s master key (a crosssigning.CrossSigningIdentity), or by `master` (an Ed25519
        private key that is not the account's), or unsigned."""
        key = peer.backup_key()
        auth_data: dict[str, Any] = {"public_key": key.public_key}
        if signer is not None:
            auth_data = signer.sign(auth_data, signer.master)
        elif master is not None:
            from crosssigning import CrossSigningIdentity
            impostor = CrossSigningIdentity(user.user_id, master=master)
            auth_data = impostor.sign(auth_data, impostor.master)
        answer = homeserver.call("POST", "/_matrix/client/v3/room_keys/version", user.token,
                                 json_body={"algorithm": ALGORITHM, "auth_data": auth_data})
        return cls(homeserver, user, peer, answer["version"], key)

    def held(self) -> dict[str, dict[str, Any]]:
        """What the server holds in this version: room → session id → KeyBackupData."""
        answer = self.homeserver.call("GET", "/_matrix/client/v3/room_keys/keys", self.user.token,
                                      query={"version": self.version})
        return {room: value["sessions"] for room, value in answer.get("rooms", {}).items()}

    def restore(self) -> dict[str, Any]:
        """Every session the backup holds, decrypted with the backup's private key and imported
        by `peer`: session id → (inbound session, KeyBackupData, the decrypted session data)."""
        sessions = {}
        for room, held in self.held().items():
            for session_id, data in held.items():
                plain = json.loads(self.key.decrypt(data["session_data"]))
                inbound = self.peer.group_import(plain["session_key"])
                assert inbound.session_id == session_id, (inbound.session_id, session_id)
                sessions[session_id] = (inbound, data, plain)
        return sessions

    def read_events(self, room: str, sender: str) -> list[dict[str, Any]]:
        """The sender's m.room.encrypted events in the room, oldest first, each decrypted with a
        session restored from the backup: {"index", "type", "content"} (or {"error"})."""
        sessions = self.restore()
        answer = self.homeserver.call(
            "GET", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room, safe='')}/messages", self.user.token,
            query={"dir": "b", "limit": 100})
        read = []
        for event in reversed(answer["chunk"]):
            if event["type"] != "m.room.encrypted" or event["sender"] != sender:
                continue
            content = event["content"]
            found = sessions.get(content["session_id"])
            if found is None:
                read.append({"error": "no session in the backup", "session_id": content["session_id"]})
                continue
            plaintext, index = found[0].decrypt(content["ciphertext"])
            decrypted = json.loads(plaintext)
            assert decrypted["room_id"] == room
            read.append({"index": index, "type": decrypted["type"], "content": decrypted["content"]})
        return read

