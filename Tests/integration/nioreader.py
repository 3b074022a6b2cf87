"""One matrix-nio client behind a pipe: a reader of encrypted rooms that we did not write.

Run by the python of .venv-nio25 (nio 0.25, Olm and Megolm by libolm through python-olm) or
.venv-nio26 (nio 0.26, by vodozemac), never by the test runner's, whose packages it does not share:

    python nioreader.py --store DIR --homeserver URL --user @u:server --password PW

It signs in as a new device (nio keeps its Olm account and every session in DIR), uploads the
device keys and one-time keys nio made, and then answers requests, one JSON line in, one JSON line
out, in order (nioreaders.NioReader is the test runner's side):

    {"op": "device"}                      → {"device_id", "curve25519", "ed25519", "nio"}
    {"op": "join", "room": ID}            → {"room_id"}
    {"op": "sync"}                        → {"next_batch", "to_device": [nio classes], "rooms": [ids]}
    {"op": "messages", "room": ID, "limit": N}
                                          → {"events": [{"event_id", "type", "decrypted", "content",
                                             "sender", "algorithm", "error"?, ...}, ...]} oldest first
    {"op": "download", "file": {...}}     → {"sha256", "size", "content_type"}
    {"op": "send_text", "room": ID, "body": TEXT}
                                          → {"event_id", "room_encrypted"}
    {"op": "trust_all"}                   → {"verified": N}
    {"op": "sas_devices"}                 → {"devices": [ids]}: the user's own devices, queried afresh
    {"op": "sas_start", "device": ID}     → {"transaction_id"}: nio's start to its own user's device
    {"op": "sas_sync", "wait": MS}        → {"verifications": {txn: state}, "to_device": [{"type", "content"}]}
    {"op": "send_to_device", "type": T, "device": ID, "content": {...}, "user"?: U}
                                          → {}: a raw to-device message, sent as nio's device
    {"op": "sas_accept" | "sas_confirm", "transaction_id": T}
                                          → {"verification": state}
    {"op": "sas_cancel", "transaction_id": T, "mismatch": bool}
                                          → {"verification": state}
      (state: {"device", "we_started", "state", "emoji": [[emoji, name]] once keys are exchanged,
       "verified", "canceled", "cancel_code", "cancel_reason"}: nio's own Sas, as sync left it)
    {"op": "close"}                       → {} and the process ends (so does end of input)

A request that fails is answered {"error": "..."} and the next one is read: a test sees what went
wrong instead of a dead pipe. Anything printed by accident goes to stderr, never into the answers.

Both nio versions are driven through the same public API (AsyncClient, decrypt_event, download,
decrypt_attachment): between 0.25.2 and 0.26.0 only their crypto backend and type annotations
differ, so nothing here branches on the version; "nio" in the device answer says which one runs.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import importlib.metadata
import json
import logging
import os
import sys
import traceback
import urllib.parse
from typing import Any

import nio
import nio.crypto
from nio.crypto.attachments import decrypt_attachment
from nio.events import BadEvent, Event, MegolmEvent, UnknownBadEvent
from nio.exceptions import EncryptionError

NIO_VERSION = importlib.metadata.version("matrix-nio")


class RequestError(Exception):
    """A request that cannot be answered: the message becomes the answer's "error"."""


def _check(response: Any) -> Any:
    """nio answers an HTTP error with an ErrorResponse object instead of raising: raise it."""
    if isinstance(response, nio.ErrorResponse):
        raise RequestError(str(response))  # "LoginError: M_FORBIDDEN Invalid username or password"
    return response


class Reader:
    def __init__(self, store: str, homeserver: str, user: str, password: str) -> None:
        self.password = password
        os.makedirs(store, exist_ok=True)
        config = nio.AsyncClientConfig(
            encryption_enabled=True,
            # A reader that waits forever on a dead server hangs the test instead of failing it.
            max_timeouts=2, max_limit_exceeded=3, request_timeout=30,
        )
        self.client = nio.AsyncClient(homeserver, user, store_path=store, config=config)
        # Emoji verifications nio dropped once cancelled, by transaction id.
        self.ended: dict[str, Any] = {}

    async def login(self) -> None:
        _check(await self.client.login(self.password, device_name="nioreader"))
        # Login loaded the store and made the Olm account; the server knows of none of its keys
        # until they are uploaded, and a sender can only share a room key with a device whose
        # identity key and one-time key it can fetch.
        if self.client.should_upload_keys:
            _check(await self.client.keys_upload())

    async def close(self) -> None:
        await self.client.close()

    # -- ops --

    async def op_device(self, request: dict) -> dict:
        keys = self.client.olm.account.identity_keys
        return {"device_id": self.client.device_id, "curve25519": keys["curve25519"],
                "ed25519": keys["ed25519"], "user_id": self.client.user_id, "nio": NIO_VERSION}

    async def op_join(self, request: dict) -> dict:
        answer = _check(await self.client.join(_field(request, "room")))
        # A sync makes the room (and whether it is encrypted) known to nio: room_send needs it.
        await self._sync()
        return {"room_id": answer.room_id}

    async def op_sync(self, request: dict) -> dict:
        return await self._sync()

    async def _sync(self) -> dict:
        """One /sync that does not wait for news, then what nio's sync_forever does after each
        sync: to-device messages (room keys among them) were decrypted by nio while it read the
        answer; key uploads, queries and claims it now wants are made, and its queued to-device
        messages sent."""
        answer = _check(await self.client.sync(timeout=0, full_state=False))
        if self.client.should_upload_keys:
            _check(await self.client.keys_upload())
        if self.client.should_query_keys:
            _check(await self.client.keys_query())
        if self.client.should_claim_keys:
            _check(await self.client.keys_claim(self.client.get_users_for_key_claiming()))
        await self.client.send_to_device_messages()
        return {"next_batch": answer.next_batch,
                # nio's classes, e.g. RoomKeyEvent: what each to-device event was once decrypted.
                "to_device": [type(e).__name__ for e in answer.to_device_events],
                "rooms": sorted(answer.rooms.join)}

    async def op_messages(self, request: dict) -> dict:
        """The newest `limit` timeline events of the room, oldest first, each decrypted by nio
        where it is m.room.encrypted.

        /messages is read raw over nio's own HTTP session, and every event parsed and decrypted
        one by one with nio's public API (Event.parse_event, AsyncClient.decrypt_event), rather
        than through AsyncClient.room_messages: that one decrypts silently and keeps only the
        result, so an event it could not decrypt says nothing of why, and a plaintext nio
        rejected can no longer be told from an event that was never encrypted."""
        room_id = _field(request, "room")
        limit = int(request.get("limit", 100))
        # Room keys come over to-device messages: the sync brings in any sent since the last one.
        await self._sync()
        path = (f"/_matrix/client/v3/rooms/{urllib.parse.quote(room_id, safe='')}/messages?"
                + urllib.parse.urlencode({"dir": "b", "limit": limit}))
        response = await self.client.send(
            "GET", path, headers={"Authorization": f"Bearer {self.client.access_token}"})
        body = await response.read()
        if response.status != 200:
            raise RequestError(f"GET /messages → {response.status} {body[:500]!r}")
        chunk = json.loads(body).get("chunk", [])
        return {"events": [self._read_event(room_id, raw) for raw in reversed(chunk)]}

    def _read_event(self, room_id: str, raw: dict) -> dict:
        raw_content = raw.get("content") if isinstance(raw.get("content"), dict) else {}
        entry: dict[str, Any] = {
            "event_id": raw.get("event_id"), "type": raw.get("type"), "sender": raw.get("sender"),
            "algorithm": None, "decrypted": False, "content": None,
        }
        if raw.get("type") != "m.room.encrypted":
            entry["content"] = raw_content
            return entry
        entry["algorithm"] = raw_content.get("algorithm")
        parsed = Event.parse_event(raw)
        entry["nio_class"] = type(parsed).__name__
        if not isinstance(parsed, MegolmEvent):
            # A BadEvent here: nio's schema for m.room.encrypted refused the envelope (e.g. the
            # sender_key or device_id nio still requires is missing), or it is not Megolm at all.
            entry["error"] = f"nio did not take it as a Megolm event: {type(parsed).__name__} {parsed}"
            return entry
        parsed.room_id = parsed.room_id or room_id
        entry.update(sender_key=parsed.sender_key, sender_device=parsed.device_id,
                     session_id=parsed.session_id)
        try:
            decrypted = self.client.decrypt_event(parsed)
        except EncryptionError as error:
            # Typically "no session found": the room key never reached this device.
            entry["error"] = f"EncryptionError: {error}"
            return entry
        entry["nio_class"] = type(decrypted).__name__
        source = decrypted.source if isinstance(decrypted.source, dict) else {}
        if isinstance(decrypted, (BadEvent, UnknownBadEvent)) and not decrypted.decrypted:
            # The ciphertext opened, but the plaintext lacks what every decrypted event must
            # carry (type, content, room_id): nio refuses it. What it held is kept for the test.
            entry["error"] = f"nio refused the decrypted payload: {type(decrypted).__name__}"
            entry["plaintext"] = source
            return entry
        # decrypted.source is the plaintext payload, into which nio copied event_id, sender and
        # origin_server_ts from the envelope, and m.relates_to too when the plaintext had none
        # (the spec keeps relations in the clear). A BadEvent with decrypted set is a payload of
        # a known type that nio's schema for that type refused: nio_class says so.
        entry.update(decrypted=True, content=source.get("content"), decrypted_type=source.get("type"),
                     plaintext_room_id=source.get("room_id"), verified=bool(decrypted.verified))
        return entry

    async def op_download(self, request: dict) -> dict:
        """The attachment behind an encrypted file object (m.file's `file`, or `thumbnail_file`):
        nio downloads the ciphertext and decrypt_attachment checks its SHA-256 against
        hashes.sha256 before AES-CTR decrypts it with the key and iv."""
        file = request.get("file")
        if not isinstance(file, dict):
            raise RequestError("download needs a `file` object")
        try:
            url, key, digest, iv = file["url"], file["key"]["k"], file["hashes"]["sha256"], file["iv"]
        except (KeyError, TypeError) as missing:
            raise RequestError(f"the file object lacks {missing}") from None
        answer = _check(await self.client.download(mxc=url))
        try:
            plaintext = decrypt_attachment(answer.body, key, digest, iv)
        except EncryptionError as error:
            raise RequestError(f"EncryptionError: {error}") from None
        found = {"sha256": hashlib.sha256(plaintext).hexdigest(), "size": len(plaintext),
                 "content_type": answer.content_type}
        if request.get("keep"):
            found["plaintext"] = base64.b64encode(plaintext).decode()
        return found

    async def op_send_text(self, request: dict) -> dict:
        """An m.text sent by nio itself, encrypted when nio knows the room is: only the harness's
        own test uses it, to show a reader can read what another one sent."""
        room_id = _field(request, "room")
        # The sync brings the room's members up to date, so the room key goes to every device.
        await self._sync()
        if room_id not in self.client.rooms:
            raise RequestError(f"nio does not know {room_id}: join it first")
        answer = _check(await self.client.room_send(
            room_id, "m.room.message", {"msgtype": "m.text", "body": str(request.get("body", ""))},
            ignore_unverified_devices=True))
        return {"event_id": answer.event_id, "room_encrypted": self.client.rooms[room_id].encrypted}

    async def op_trust_all(self, request: dict) -> dict:
        """Marks every device nio knows of verified, so `verified` in decrypted events means the
        sender's keys matched those the server published rather than a human's check."""
        if self.client.should_query_keys:
            _check(await self.client.keys_query())
        count = 0
        for device in list(self.client.device_store):
            if self.client.verify_device(device):
                count += 1
        return {"verified": count}


    # -- emoji verification (m.sas.v1) with the user's own devices, by nio's OlmMachine --

    async def op_sas_devices(self, request: dict) -> dict:
        self.client.olm.users_for_key_query.add(self.client.user_id)
        _check(await self.client.keys_query())
        return {"devices": sorted(d.id for d in self.client.device_store.active_user_devices(self.client.user_id))}

    async def op_sas_start(self, request: dict) -> dict:
        try:
            device = self.client.device_store[self.client.user_id][_field(request, "device")]
        except KeyError:
            raise RequestError("nio does not know that device: sas_devices first") from None
        before = set(self.client.key_verifications)
        _check(await self.client.start_key_verification(device))
        (transaction,) = set(self.client.key_verifications) - before
        return {"transaction_id": transaction}

    async def op_sas_sync(self, request: dict) -> dict:
        """One sync held up to `wait` ms: nio handles the verification messages in it (a
        start becomes a Sas waiting for accept_key_verification; a key is answered with nio's);
        what nio queued is sent."""
        before = dict(self.client.key_verifications)
        answer = _check(await self.client.sync(timeout=int(request.get("wait", 0)), full_state=False))
        if self.client.should_query_keys:
            _check(await self.client.keys_query())
        await self.client.send_to_device_messages()
        # nio forgets a verification the other side cancelled: kept here, to be seen as it ended.
        self.ended.update({t: sas for t, sas in before.items() if t not in self.client.key_verifications})
        every = {**self.ended, **self.client.key_verifications}
        return {"verifications": {t: self._sas_state(sas) for t, sas in every.items()},
                # As they came (nio keeps no cancel's code: it cancels on its own with m.user).
                "to_device": [{"type": e.source.get("type"), "content": e.source.get("content")}
                              for e in answer.to_device_events if isinstance(getattr(e, "source", None), dict)]}

    async def op_send_to_device(self, request: dict) -> dict:
        """A to-device message as given, to a device of `user` (default: nio's own user): what
        nio itself cannot send (a request, a ready) or a test's hostile one."""
        content = request.get("content")
        if not isinstance(content, dict):
            raise RequestError("send_to_device needs `content` (an object)")
        message = nio.ToDeviceMessage(_field(request, "type"), request.get("user") or self.client.user_id,
                                      _field(request, "device"), content)
        _check(await self.client.to_device(message))
        return {}

    async def op_sas_accept(self, request: dict) -> dict:
        transaction = _field(request, "transaction_id")
        _check(await self.client.accept_key_verification(transaction))
        return {"verification": self._sas_state(self.client.key_verifications[transaction])}

    async def op_sas_confirm(self, request: dict) -> dict:
        transaction = _field(request, "transaction_id")
        _check(await self.client.confirm_short_auth_string(transaction))
        return {"verification": self._sas_state(self.client.key_verifications[transaction])}

    async def op_sas_cancel(self, request: dict) -> dict:
        transaction = _field(request, "transaction_id")
        _check(await self.client.cancel_key_verification(transaction, reject=bool(request.get("mismatch"))))
        return {"verification": self._sas_state(self.client.key_verifications[transaction])}

    @staticmethod
    def _sas_state(sas) -> dict:
        return {"device": sas.other_olm_device.id, "we_started": sas.we_started_it, "state": str(sas.state),
                "emoji": [list(pair) for pair in sas.get_emoji()] if sas.other_key_set else [],
                "verified": sas.verified, "canceled": sas.canceled,
                "cancel_code": getattr(sas, "cancel_code", None), "cancel_reason": getattr(sas, "cancel_reason", None)}


def _field(request: dict, name: str) -> str:
    value = request.get(name)
    if not isinstance(value, str) or not value:
        raise RequestError(f"{request.get('op')} needs `{name}`")
    return value


async def serve(reader: Reader, requests, answers) -> None:
    loop = asyncio.get_running_loop()
    while True:
        # Read off the loop's thread, so nothing nio runs in the background is starved meanwhile.
        line = await loop.run_in_executor(None, requests.readline)
        if not line:
            return
        if not line.strip():
            continue
        closing = False
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise RequestError("a request is a JSON object")
            op = request.get("op")
            if op == "close":
                closing, answer = True, {}
            else:
                handler = getattr(reader, f"op_{op}", None) if isinstance(op, str) else None
                if handler is None:
                    raise RequestError(f"unknown op {op!r}")
                answer = await handler(request)
        except RequestError as error:
            answer = {"error": str(error)}
        except Exception as error:  # noqa: BLE001 — any failure is an answer, not a dead pipe
            traceback.print_exc()
            answer = {"error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
        if closing:
            return


async def main_async(args: argparse.Namespace, answers) -> int:
    reader = Reader(args.store, args.homeserver, args.user, args.password)
    try:
        try:
            await reader.login()
        except Exception as error:  # noqa: BLE001 — said on the pipe, then the process ends
            if not isinstance(error, RequestError):
                traceback.print_exc()
            answers.write(json.dumps({"error": f"sign-in failed: {type(error).__name__}: {error}"}) + "\n")
            answers.flush()
            return 1
        # The first line says the reader is ready: the caller waits for it before its requests.
        answers.write(json.dumps({"ready": True, "device_id": reader.client.device_id, "nio": NIO_VERSION}) + "\n")
        answers.flush()
        await serve(reader, sys.stdin, answers)
        return 0
    finally:
        await reader.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="directory of nio's encrypted store")
    parser.add_argument("--homeserver", required=True, help="base URL, e.g. http://127.0.0.1:8008")
    parser.add_argument("--user", required=True, help="full user id")
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    if not nio.crypto.ENCRYPTION_ENABLED:
        print(json.dumps({"error": "this nio has no encryption: its e2e dependencies are missing"}), flush=True)
        return 1
    # stdout carries the answers only: a stray print (ours or a library's) goes to stderr instead.
    answers = sys.stdout
    sys.stdout = sys.stderr
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return asyncio.run(main_async(args, answers))


if __name__ == "__main__":
    sys.exit(main())
