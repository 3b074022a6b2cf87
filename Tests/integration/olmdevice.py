"""A device driven by hand from the tests: its Olm is libolm or vodozemac (cryptopeers), its keys
go up over plain HTTP, and it reads its to-device messages from plain /sync. It does what a
client does around Ferry's device that nio does not let a test do at will: lose its session, start
a new one, send Ferry an Olm message or a room-key request.

    device = OlmDevice(homeserver, user, Vodozemac())
    device.payloads()          # the Olm messages Ferry sent it since the last call, decrypted
    device.start_session(ferry_user, ferry_device)
    device.send_olm(ferry_user, ferry_device, "m.dummy", {})
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from typing import Any

from cryptopeers import canonical, device_keys, signed

OLM = "m.olm.v1.curve25519-aes-sha2"


class OlmDevice:
    def __init__(self, homeserver, user, peer, one_time_keys: int = 5) -> None:
        self.homeserver, self.user, self.peer = homeserver, user, peer
        self.token, self.device_id = homeserver.login(user.user_id, user.password)
        keys = {}
        for n in range(one_time_keys):
            keys[f"signed_curve25519:K{n}"] = signed(peer, user.user_id, self.device_id, {"key": peer.one_time_key()})
        homeserver.call("POST", "/_matrix/client/v3/keys/upload", self.token, json_body={
            "device_keys": device_keys(peer, user.user_id, self.device_id), "one_time_keys": keys})
        self.since: str | None = None

    def to_device(self) -> list[dict[str, Any]]:
        """The to-device messages since the last call (each sync acknowledges the last ones)."""
        query = {"timeout": 0, **({"since": self.since} if self.since else {})}
        answer = self.homeserver.call("GET", "/_matrix/client/v3/sync", self.token, query=query)
        self.since = answer["next_batch"]
        return answer.get("to_device", {}).get("events", [])

    def payloads(self) -> list[dict[str, Any]]:
        """The Olm messages to this device since the last call, decrypted by its own library:
        a pre-key message it has no session for starts one. {"type", "content", ...} each, or
        {"error"} for one it cannot decrypt."""
        read = []
        for event in self.to_device():
            if event["type"] != "m.room.encrypted" or event["content"].get("algorithm") != OLM:
                read.append({"plain": event})
                continue
            mine = event["content"]["ciphertext"].get(self.peer.curve25519)
            if mine is None:
                continue
            try:
                if mine["type"] == 0 and not self._matches(mine["body"]):
                    plaintext = self.peer.inbound(event["content"]["sender_key"], mine["body"])
                else:
                    plaintext = self.peer.decrypt(mine["type"], mine["body"])
                read.append(json.loads(plaintext))
            except Exception as error:  # noqa: BLE001 - a message this device cannot read is the finding
                read.append({"error": f"{type(error).__name__}: {error}"})
        return read

    def _matches(self, body: str) -> bool:
        """Whether a pre-key message belongs to the session this device holds."""
        return self.peer.session is not None and self.peer.matches(body)

    def lose_session(self) -> None:
        self.peer.session = None

    def keys_of(self, user_id: str, device_id: str) -> dict[str, str]:
        answer = self.homeserver.call("POST", "/_matrix/client/v3/keys/query", self.token,
                                      json_body={"device_keys": {user_id: [device_id]}})
        keys = answer["device_keys"][user_id][device_id]["keys"]
        return {"curve25519": keys[f"curve25519:{device_id}"], "ed25519": keys[f"ed25519:{device_id}"]}

    def start_session(self, user_id: str, device_id: str) -> None:
        """A new Olm session to the device, from a one-time key claimed from the server."""
        answer = self.homeserver.call("POST", "/_matrix/client/v3/keys/claim", self.token, json_body={
            "one_time_keys": {user_id: {device_id: "signed_curve25519"}}})
        [claimed] = answer["one_time_keys"][user_id][device_id].values()
        self.peer.outbound(self.keys_of(user_id, device_id)["curve25519"], claimed["key"])

    def send_olm(self, user_id: str, device_id: str, event_type: str, content: dict[str, Any]) -> None:
        """`event_type`/`content` to the device over this device's session, as the spec's payload."""
        theirs = self.keys_of(user_id, device_id)
        payload = {"type": event_type, "content": content, "sender": self.user.user_id,
                   "sender_device": self.device_id, "keys": {"ed25519": self.peer.ed25519},
                   "recipient": user_id, "recipient_keys": {"ed25519": theirs["ed25519"]}}
        kind, body = self.peer.encrypt(canonical(payload))
        self.send(user_id, device_id, "m.room.encrypted", {
            "algorithm": OLM, "sender_key": self.peer.curve25519,
            "ciphertext": {theirs["curve25519"]: {"type": kind, "body": body}}})

    def send(self, user_id: str, device_id: str, event_type: str, content: dict[str, Any]) -> None:
        path = (f"/_matrix/client/v3/sendToDevice/{urllib.parse.quote(event_type, safe='')}/"
                f"{uuid.uuid4().hex}")
        self.homeserver.call("PUT", path, self.token, json_body={"messages": {user_id: {device_id: content}}})
