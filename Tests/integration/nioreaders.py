"""Readers of encrypted rooms that we did not write: matrix-nio clients, driven from the tests.

Each `NioReader` is one nio client in a process of its own (nioreader.py, JSON lines on a pipe),
run by the python of a virtualenv scripts/deps.sh made: nio 0.25 does Olm and Megolm with libolm,
nio 0.26 with vodozemac, so what Ferry sends is checked by two implementations of its own kind.
They cannot live in the test runner's virtualenv (their pins clash), hence the process; this side
is stdlib only.

    reader = NioReader(reader_python("nio26"), tmp_path / "bob", server.base_url, user_id, password)
    reader.join(room)                       # nio's device now exists, keys uploaded
    ... Ferry sends into the room ...
    event = reader.messages(room)[-1]       # synced first, so room keys sent to it are in
    assert event["decrypted"], event["error"]
    reader.close()

The reader signs in as a device of its own when it starts: a sender that shares a room key only
with the devices it knows of must be started after it (or sync again) to reach it.
"""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve().with_name("nioreader.py")

# The kinds of reader, each in its own virtualenv (scripts/nio25-requirements.txt, nio26-...).
READERS = ["nio25", "nio26"]
VENVS = {kind: REPO / f".venv-{kind}" / "bin" / "python" for kind in READERS}

# Signing in uploads keys and the first sync is a full one: seconds on a busy 2-core machine.
START_TIMEOUT = 60.0
REQUEST_TIMEOUT = 60.0


class NioReaderError(AssertionError):
    """A reader answered {"error": ...}, ended, or did not answer in time. An AssertionError: in
    a test it is a failure, with nio's own words (and the end of the reader's log)."""


def reader_python(kind: str) -> Path:
    """The python of the virtualenv of a kind of reader; skips the test when it is not there."""
    python = VENVS[kind]
    if not python.exists():
        pytest.skip(f"no {kind} reader at {python}: run `make deps` (scripts/deps.sh) to make it")
    return python


class NioReader:
    """One nio client, signed in as a new device of `user_id`, with its store in `store_dir`.
    Each method is one request (see nioreader.py); they raise NioReaderError on an error answer,
    while `request()` returns any answer as it came."""

    def __init__(self, venv_python: Path | str, store_dir: Path | str, homeserver_url: str,
                 user_id: str, password: str, kind: str | None = None):
        self.kind = kind or Path(venv_python).parents[1].name.removeprefix(".venv-")
        self.store_dir = Path(store_dir)
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.store_dir / "nioreader.log"
        # stderr to a file, not a pipe: nio's warnings would fill a pipe nobody reads and stall it.
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [str(venv_python), str(SCRIPT), "--store", str(self.store_dir), "--homeserver", homeserver_url,
             "--user", user_id, "--password", password],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1,
            # The reader's own virtualenv decides what it imports: nothing of the runner's leaks in.
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1",
                 "PYTHONDONTWRITEBYTECODE": "1"})
        # Answers are read by a thread into a queue, so a reader that hangs fails the test after
        # a timeout instead of blocking readline forever.
        self._answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, name=f"nioreader-{self.kind}", daemon=True).start()
        ready = self._next_answer(START_TIMEOUT, "signing in")
        if "error" in ready:
            self.close()
            raise NioReaderError(f"{self.kind} reader: {ready['error']}\n{self.log_tail()}")
        self.device_id: str = ready["device_id"]
        self.nio_version: str = ready["nio"]

    def _pump(self) -> None:
        for line in self.process.stdout:
            self._answers.put(line)
        self._answers.put(None)

    def _next_answer(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise NioReaderError(f"{self.kind} reader gave no answer to {what} in {timeout} s\n"
                                 f"{self.log_tail()}") from None
        if line is None:
            raise NioReaderError(f"{self.kind} reader ended while {what} (exit {self.process.poll()})\n"
                                 f"{self.log_tail()}")
        return json.loads(line)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def request(self, op: str, timeout: float = REQUEST_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """One request, its answer as it came ({"error": ...} included)."""
        if self.process.poll() is not None:
            raise NioReaderError(f"{self.kind} reader has ended (exit {self.process.returncode})\n{self.log_tail()}")
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        return self._next_answer(timeout, op)

    def _ok(self, op: str, **fields: Any) -> dict[str, Any]:
        answer = self.request(op, **fields)
        if "error" in answer:
            raise NioReaderError(f"{self.kind} reader, {op}: {answer['error']}")
        return answer

    # -- the ops --

    def device(self) -> dict[str, Any]:
        """{"device_id", "curve25519", "ed25519", "user_id", "nio"} of the reader's device."""
        return self._ok("device")

    def join(self, room: str) -> str:
        """Joins (accepting an invite) and syncs; returns the room id."""
        return self._ok("join", room=room)["room_id"]

    def sync(self) -> dict[str, Any]:
        """One sync: room keys sent to this device since the last one are taken in."""
        return self._ok("sync")

    def messages(self, room: str, limit: int = 100) -> list[dict[str, Any]]:
        """The room's newest `limit` timeline events, oldest first, after a sync; each
        {"event_id", "type" (as sent, e.g. m.room.encrypted), "decrypted", "content" (the
        plaintext's when decrypted), "sender", "algorithm", "error" when nio could not decrypt}
        and, for encrypted ones, "decrypted_type", "plaintext_room_id", "sender_key",
        "sender_device", "session_id", "verified", "nio_class"."""
        return self._ok("messages", room=room, limit=limit)["events"]

    def encrypted_messages(self, room: str, limit: int = 100) -> list[dict[str, Any]]:
        """The m.room.encrypted events among `messages`."""
        return [event for event in self.messages(room, limit) if event["type"] == "m.room.encrypted"]

    def download(self, file: dict[str, Any]) -> dict[str, Any]:
        """{"sha256" (hex, of the decrypted bytes), "size", "content_type"} of an encrypted
        attachment, given the event content's `file` object; an error if the hash does not match."""
        return self._ok("download", file=file)

    def download_bytes(self, file: dict[str, Any]) -> bytes:
        """The decrypted bytes of an encrypted attachment (a thumbnail: small), checked as `download`."""
        return base64.b64decode(self._ok("download", file=file, keep=True)["plaintext"])

    def send_text(self, room: str, body: str) -> dict[str, Any]:
        """nio sends an m.text itself (encrypted in an encrypted room): {"event_id", "room_encrypted"}."""
        return self._ok("send_text", room=room, body=body)

    def trust_all(self) -> int:
        """Marks every device nio knows verified; returns how many it marked."""
        return self._ok("trust_all")["verified"]

    # Emoji verification by nio's own Sas (nioreader.py's sas_* ops).

    def sas_devices(self) -> list[str]:
        return self._ok("sas_devices")["devices"]

    def sas_start(self, device: str) -> str:
        return self._ok("sas_start", device=device)["transaction_id"]

    def sas_sync(self, timeout_ms: int = 0) -> dict[str, Any]:
        return self._ok("sas_sync", wait=timeout_ms)

    def send_to_device(self, event_type: str, device: str, content: dict[str, Any], user: str | None = None) -> None:
        self._ok("send_to_device", type=event_type, device=device, content=content, **({"user": user} if user else {}))

    def sas_accept(self, transaction: str) -> dict[str, Any]:
        return self._ok("sas_accept", transaction_id=transaction)["verification"]

    def sas_confirm(self, transaction: str) -> dict[str, Any]:
        return self._ok("sas_confirm", transaction_id=transaction)["verification"]

    def sas_cancel(self, transaction: str, mismatch: bool = False) -> dict[str, Any]:
        return self._ok("sas_cancel", transaction_id=transaction, mismatch=mismatch)["verification"]

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps({"op": "close"}) + "\n")
                self.process.stdin.flush()
                self.process.stdin.close()
                self.process.wait(timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(timeout=15)
        self._log.close()
