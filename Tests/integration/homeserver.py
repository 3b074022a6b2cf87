"""A real Synapse homeserver for integration tests, demos and benchmarks, and an independent client.

Synapse runs from its own virtualenv (`.venv-synapse`, made by scripts/deps.sh) on 127.0.0.1 with
SQLite in a directory of the caller's; nothing leaves loopback (no federation listener, no key
servers, no stats). Everything that checks what Ferry did talks to the server through plain stdlib
HTTP here, never through Ferry's code: delivered events are read back from the room timeline.

    server = Homeserver(tmp_dir).start()
    server.register("alice", "pw")
    token, device = server.login("alice", "pw")
    room = server.create_room(token, name="Photos")
    ... Ferry sends ...
    events = server.wait_for_messages(token, room, count=2)
    server.stop()

Rate limits are generous by default so tests never meet them by accident; a test about 429 gives
its own server low ones (`Homeserver(dir, rate_limits={"rc_message": {...}})`).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import hashlib
import hmac
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple

REPO = Path(__file__).resolve().parents[2]
# FERRY_SYNAPSE_PYTHON points elsewhere, e.g. at a Synapse installed some other way.
SYNAPSE_PYTHON = Path(os.environ.get("FERRY_SYNAPSE_PYTHON", REPO / ".venv-synapse" / "bin" / "python"))

DEFAULT_SERVER_NAME = "ferry.test"
START_TIMEOUT = 60.0
HTTP_TIMEOUT = 30.0

# High enough that no test, demo or benchmark (1,000 texts, 50-share kill tests) meets a limit by
# accident; a 429 test passes low ones for its own server.
_GENEROUS = {"per_second": 10_000, "burst_count": 100_000}
GENEROUS_RATE_LIMITS: dict[str, Any] = {
    "rc_message": _GENEROUS,
    "rc_registration": _GENEROUS,
    "rc_login": {"address": _GENEROUS, "account": _GENEROUS, "failed_attempts": _GENEROUS},
    "rc_joins": {"local": _GENEROUS, "remote": _GENEROUS},
    "rc_joins_per_room": _GENEROUS,
    "rc_invites": {"per_room": _GENEROUS, "per_user": _GENEROUS, "per_issuer": _GENEROUS},
    "rc_room_creation": _GENEROUS,
    "rc_media_create": _GENEROUS,
    "rc_key_requests": _GENEROUS,
    "rc_3pid_validation": _GENEROUS,
    "rc_third_party_invite": _GENEROUS,
    "rc_admin_redaction": _GENEROUS,
    "rc_presence": {"per_user": _GENEROUS},
    "rc_delayed_event_mgmt": _GENEROUS,
    "rc_reports": _GENEROUS,
    "rc_profile": _GENEROUS,
    "rc_user_directory": _GENEROUS,
}


class HomeserverError(RuntimeError):
    """Synapse did not start or stop as asked; the message carries the end of its log."""


class MatrixError(AssertionError):
    """A request the harness made got an error answer. An AssertionError: in a test it is a failure
    of what was being checked, with the server's own words."""

    def __init__(self, method: str, path: str, status: int, body: Any):
        self.method, self.path, self.status, self.body = method, path, status, body
        self.errcode = body.get("errcode") if isinstance(body, dict) else None
        super().__init__(f"{method} {path} → {status} {body!r}"[:2000])


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class MatrixUser(NamedTuple):
    user_id: str
    password: str
    token: str


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: nested dicts combine, everything else in `extra` wins."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _q(part: str) -> str:
    """One path segment: room ids, aliases and user ids carry '!', '#', ':' and '@'."""
    return urllib.parse.quote(part, safe="")


def parse_mxc(mxc: str) -> tuple[str, str]:
    """mxc://server/media_id → (server, media_id)."""
    assert mxc.startswith("mxc://"), f"not a content URI: {mxc!r}"
    server, _, media_id = mxc[len("mxc://"):].partition("/")
    assert server and media_id, f"not a content URI: {mxc!r}"
    return server, media_id


class RawClient:
    """One kept-alive HTTP/1.1 connection to the server: the reference client benchmarks compare
    Ferry with (what a tight, careful client costs), and the transport of `Homeserver.send_text`.
    Not thread-safe: one per thread."""

    def __init__(self, host: str, port: int, timeout: float = HTTP_TIMEOUT):
        self.host, self.port, self.timeout = host, port, timeout
        self._connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, token: str | None = None, body: bytes | None = None,
                content_type: str = "application/json") -> Response:
        headers = {"Content-Type": content_type} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # A kept-alive connection the server closed meanwhile fails on first use: reconnect once.
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self._connection.request(method, path, body=body, headers=headers)
                answer = self._connection.getresponse()
                data = answer.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest):
                self.close()
                if attempt == 2:
                    raise
                continue
            if answer.will_close:
                self.close()
            return Response(answer.status, dict(answer.getheaders()), data)
        raise AssertionError("unreachable")

    def send_text(self, token: str, room_id: str, body: str, txn_id: str) -> str:
        """PUT one m.text with the given transaction id; returns the event id."""
        path = f"/_matrix/client/v3/rooms/{_q(room_id)}/send/m.room.message/{_q(txn_id)}"
        payload = json.dumps({"msgtype": "m.text", "body": body}).encode()
        answer = self.request("PUT", path, token, payload)
        if answer.status != 200:
            raise MatrixError("PUT", path, answer.status, _json_or_text(answer.body))
        return answer.json()["event_id"]

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the test run dies, even by SIGKILL, so no Synapse
    outlives it holding a port (prctl PR_SET_PDEATHSIG). The signal follows the *thread* that
    started the server: start servers from the main thread or one that outlives them."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def _json_or_text(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode(errors="replace")


@dataclass
class Homeserver:
    """One Synapse with its data in `root`. `start()` it; `stop()`, `kill()` and `restart()` keep
    the data and the port, so a test can take the server away and bring it back.

    `rate_limits` replaces single rc_* sections of the generous defaults; `config` is merged last
    over the whole generated homeserver.yaml, for anything else (e.g. {"session_lifetime": "5s"})."""

    root: Path
    server_name: str = DEFAULT_SERVER_NAME
    max_upload_size: str = "512M"
    rate_limits: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    log_level: str = "INFO"
    port: int = 0
    registration_shared_secret: str = field(default_factory=lambda: uuid.uuid4().hex)

    process: subprocess.Popen | None = field(default=None, repr=False)
    startup_seconds: float | None = None
    _admin_token: str | None = field(default=None, repr=False)
    _raw: RawClient | None = field(default=None, repr=False)

    # -- where things are --

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.root / "homeserver.yaml"

    @property
    def log_path(self) -> Path:
        """Synapse's own log (the logging config's file)."""
        return self.root / "homeserver.log"

    @property
    def console_path(self) -> Path:
        """stdout and stderr of the process: tracebacks from before logging is set up land here."""
        return self.root / "console.log"

    @property
    def media_store(self) -> Path:
        return self.root / "media_store"

    def user_id(self, localpart_or_id: str) -> str:
        return localpart_or_id if localpart_or_id.startswith("@") else f"@{localpart_or_id}:{self.server_name}"

    # -- configuration --

    def _write_config(self) -> None:
        """Writes homeserver.yaml (as JSON, which is YAML), the log config and a signing key, once:
        a restart reuses them so the data stays valid."""
        self.root.mkdir(parents=True, exist_ok=True)
        if self.config_path.exists():
            # A directory from an earlier run (or another Homeserver object): adopt its settings.
            written = json.loads(self.config_path.read_text())
            self.port = written["listeners"][0]["port"]
            self.server_name = written["server_name"]
            self.registration_shared_secret = written["registration_shared_secret"]
            return
        if not self.port:
            self.port = free_port()
        key_path = self.root / "signing.key"
        # Synapse's key file format: "ed25519 <version> <unpadded base64 of a 32-byte seed>".
        seed = base64.b64encode(os.urandom(32)).decode().rstrip("=")
        key_path.write_text(f"ed25519 a_ferry {seed}\n")
        log_config = self.root / "log.config"
        log_config.write_text(json.dumps({
            "version": 1,
            "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
            "handlers": {"file": {"class": "logging.FileHandler", "filename": str(self.log_path),
                                  "formatter": "plain", "encoding": "utf8"}},
            "loggers": {"synapse.storage.SQL": {"level": "WARNING"},
                        "twisted": {"level": "WARNING"}},
            "root": {"level": self.log_level, "handlers": ["file"]},
            "disable_existing_loggers": False,
        }, indent=1))
        settings: dict[str, Any] = {
            "server_name": self.server_name,
            "public_baseurl": f"{self.base_url}/",
            # GET {base_url}/.well-known/matrix/client answers, so discovery from a URL can be tested.
            "serve_client_wellknown": True,
            "pid_file": str(self.root / "homeserver.pid"),
            "listeners": [{
                "port": self.port, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False,
                "x_forwarded": False, "resources": [{"names": ["client"], "compress": False}],
            }],
            "database": {"name": "sqlite3", "args": {"database": str(self.root / "homeserver.db")}},
            "log_config": str(log_config),
            "signing_key_path": str(key_path),
            "media_store_path": str(self.media_store),
            "enable_media_repo": True,
            "max_upload_size": self.max_upload_size,
            "registration_shared_secret": self.registration_shared_secret,
            "enable_registration": False,
            # Password hashing at the default cost takes ~0.25 s per login; this is a test server.
            "bcrypt_rounds": 4,
            "macaroon_secret_key": uuid.uuid4().hex,
            "form_secret": uuid.uuid4().hex,
            "report_stats": False,
            "trusted_key_servers": [],
            "suppress_key_server_warning": True,
            "federation_domain_whitelist": [],
            "url_preview_enabled": False,
            "enable_metrics": False,
            "presence": {"enabled": False},
            # Ferry's "find a person" looks in the user directory; every local user is findable.
            "user_directory": {"enabled": True, "search_all_users": True},
            **_merge(GENEROUS_RATE_LIMITS, self.rate_limits),
        }
        settings = _merge(settings, self.config)
        self.config_path.write_text(json.dumps(settings, indent=1))

    # -- lifecycle --

    def start(self, timeout: float = START_TIMEOUT) -> "Homeserver":
        """Starts Synapse and returns once /_matrix/client/versions answers 200; raises
        HomeserverError with the log's end if the process dies or the wait runs out."""
        if self.process is not None and self.process.poll() is None:
            return self
        if not SYNAPSE_PYTHON.exists():
            raise HomeserverError(f"no Synapse at {SYNAPSE_PYTHON}: run scripts/deps.sh (make deps)")
        self._write_config()
        began = time.monotonic()
        with open(self.console_path, "ab") as console:
            self.process = subprocess.Popen(
                [str(SYNAPSE_PYTHON), "-m", "synapse.app.homeserver", "--config-path", str(self.config_path)],
                stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.root,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
                     "HOME": str(self.root), "SYNAPSE_CACHE_FACTOR": "1.0"},
                start_new_session=True,  # a Ctrl-C in the test run is the harness's to pass on
                preexec_fn=_die_with_parent,
            )
        deadline = began + timeout
        while True:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise HomeserverError(f"Synapse exited with {code} while starting\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                # Still running after the answer: not some other server that had the port.
                if self.request("GET", "/_matrix/client/versions", timeout=2).status == 200 \
                        and self.process.poll() is None:
                    break
            if time.monotonic() > deadline:
                self.kill()
                raise HomeserverError(f"Synapse did not answer within {timeout} s\n{self.log_tail()}")
            time.sleep(0.05)
        self.startup_seconds = time.monotonic() - began
        return self

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM and wait: a clean shutdown, data kept. Falls back to kill() if it hangs."""
        self._close_raw()
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def kill(self) -> None:
        """SIGKILL: the server vanishes mid-request, as in a crash or a pulled cable."""
        self._close_raw()
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)
        self.process = None

    def restart(self, timeout: float = START_TIMEOUT) -> "Homeserver":
        """Stops and starts again on the same port with the same data."""
        self.stop()
        return self.start(timeout=timeout)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        parts = []
        for path in (self.console_path, self.log_path):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            if text.strip():
                parts.append(f"--- {path} (last {lines} lines) ---\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(parts) or f"(no log in {self.root})"

    def __enter__(self) -> "Homeserver":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP, independent of Ferry --

    def request(self, method: str, path: str, token: str | None = None, json_body: Any = None,
                data: bytes | None = None, content_type: str | None = None,
                query: Mapping[str, Any] | None = None, timeout: float = HTTP_TIMEOUT) -> Response:
        """One request with urllib; error statuses come back as a Response, never as an exception."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        headers = {}
        if json_body is not None:
            data = json.dumps(json_body).encode()
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as answer:
                return Response(answer.status, dict(answer.headers), answer.read())
        except urllib.error.HTTPError as error:
            with error:
                return Response(error.code, dict(error.headers), error.read())

    def call(self, method: str, path: str, token: str | None = None, json_body: Any = None,
             **kwargs: Any) -> Any:
        """A request that must succeed (2xx); returns the JSON answer, raises MatrixError otherwise."""
        answer = self.request(method, path, token, json_body, **kwargs)
        if not 200 <= answer.status < 300:
            raise MatrixError(method, path, answer.status, _json_or_text(answer.body))
        return answer.json()

    # -- accounts --

    def register(self, user: str, password: str, admin: bool = False) -> str:
        """Creates an account through the shared-secret admin registration API (what
        register_new_matrix_user does, without a process start); returns the user id."""
        path = "/_synapse/admin/v1/register"
        nonce = self.call("GET", path)["nonce"]
        mac = hmac.new(self.registration_shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), user.encode(), password.encode(),
                                 b"admin" if admin else b"notadmin"]))
        answer = self.call("POST", path, json_body={
            "nonce": nonce, "username": user, "password": password, "admin": admin, "mac": mac.hexdigest(),
        })
        return answer["user_id"]

    def login(self, user: str, password: str, device_id: str | None = None) -> tuple[str, str]:
        """Password login; returns (access_token, device_id). Passing a device id reuses that
        device, as Ferry does when signing in again."""
        body: dict[str, Any] = {"type": "m.login.password", "password": password,
                                "identifier": {"type": "m.id.user", "user": user}}
        if device_id:
            body["device_id"] = device_id
        answer = self.call("POST", "/_matrix/client/v3/login", json_body=body)
        return answer["access_token"], answer["device_id"]

    def whoami(self, token: str) -> dict[str, Any]:
        """{"user_id": ..., "device_id": ...} for a token."""
        return self.call("GET", "/_matrix/client/v3/account/whoami", token)

    def new_user(self, prefix: str = "user", admin: bool = False) -> MatrixUser:
        """A fresh account with a unique name, signed in on a device of its own."""
        localpart = f"{prefix}-{uuid.uuid4().hex[:10]}"
        password = f"pw-{uuid.uuid4().hex}"
        user_id = self.register(localpart, password, admin=admin)
        token, _ = self.login(localpart, password)
        return MatrixUser(user_id, password, token)

    @property
    def admin_token(self) -> str:
        """A server admin's token, made on first use (an admin account of the harness's own)."""
        if self._admin_token is None:
            self._admin_token = self.new_user("harness-admin", admin=True).token
        return self._admin_token

    def admin_call(self, method: str, path: str, json_body: Any = None) -> Any:
        """A Synapse admin API call as the harness's admin; signs in afresh if the server let the
        token expire (servers configured with short token lifetimes)."""
        try:
            return self.call(method, path, self.admin_token, json_body)
        except MatrixError as error:
            if error.status != 401:
                raise
            self._admin_token = None
            return self.call(method, path, self.admin_token, json_body)

    def logout(self, token: str) -> None:
        """POST /logout: the token dies and Synapse deletes its device."""
        self.call("POST", "/_matrix/client/v3/logout", token, json_body={})

    def revoke_device(self, user_id: str, device_id: str) -> None:
        """Deletes a device through the admin API, which revokes its access token: the next request
        with it is 401 M_UNKNOWN_TOKEN. Synapse also forgets that device's transaction ids (they
        cascade with the device), so signing in again with the same device id starts afresh."""
        self.admin_call("DELETE", f"/_synapse/admin/v2/users/{_q(user_id)}/devices/{_q(device_id)}")

    def devices(self, user_id: str) -> list[dict[str, Any]]:
        return self.admin_call("GET", f"/_synapse/admin/v2/users/{_q(user_id)}/devices")["devices"]

    def override_rate_limit(self, user_id: str, messages_per_second: int = 0, burst_count: int = 0) -> None:
        """Per-user message rate limit (admin API); 0 and 0 means none at all for that user."""
        self.admin_call("POST", f"/_synapse/admin/v1/users/{_q(user_id)}/override_ratelimit",
                        json_body={"messages_per_second": messages_per_second, "burst_count": burst_count})

    # -- rooms --

    def create_room(self, token: str, name: str | None = None, alias_localpart: str | None = None,
                    encrypted: bool = False, is_direct: bool = False, invite: Iterable[str] = (),
                    room_version: str | None = None, preset: str | None = None, topic: str | None = None) -> str:
        """createRoom; returns the room id (opaque: never parse it). `encrypted` puts
        m.room.encryption (megolm) into the initial state, as an E2EE client would."""
        body: dict[str, Any] = {"is_direct": is_direct, "invite": list(invite)}
        for key, value in (("name", name), ("room_alias_name", alias_localpart), ("room_version", room_version),
                           ("preset", preset), ("topic", topic)):
            if value is not None:
                body[key] = value
        if encrypted:
            body["initial_state"] = [{"type": "m.room.encryption", "state_key": "",
                                      "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]
        return self.call("POST", "/_matrix/client/v3/createRoom", token, json_body=body)["room_id"]

    def join(self, token: str, room_or_alias: str) -> str:
        """Joins (accepting an invite too); returns the room id."""
        return self.call("POST", f"/_matrix/client/v3/join/{_q(room_or_alias)}", token, json_body={})["room_id"]

    def invite(self, token: str, room_id: str, user_id: str) -> None:
        self.call("POST", f"/_matrix/client/v3/rooms/{_q(room_id)}/invite", token, json_body={"user_id": user_id})

    def joined_rooms(self, token: str) -> list[str]:
        return self.call("GET", "/_matrix/client/v3/joined_rooms", token)["joined_rooms"]

    def resolve_alias(self, alias: str) -> str:
        return self.call("GET", f"/_matrix/client/v3/directory/room/{_q(alias)}")["room_id"]

    def state(self, token: str, room_id: str) -> list[dict[str, Any]]:
        return self.call("GET", f"/_matrix/client/v3/rooms/{_q(room_id)}/state", token)

    def set_account_data(self, token: str, event_type: str, content: Mapping[str, Any]) -> None:
        user_id = self.whoami(token)["user_id"]
        self.call("PUT", f"/_matrix/client/v3/user/{_q(user_id)}/account_data/{_q(event_type)}", token,
                  json_body=dict(content))

    def account_data(self, token: str, event_type: str) -> dict[str, Any] | None:
        """The user's global account data of a type, or None when there is none."""
        user_id = self.whoami(token)["user_id"]
        answer = self.request("GET", f"/_matrix/client/v3/user/{_q(user_id)}/account_data/{_q(event_type)}", token)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise MatrixError("GET", "account_data", answer.status, _json_or_text(answer.body))
        return answer.json()

    def set_direct(self, token: str, direct: Mapping[str, Iterable[str]]) -> None:
        """Replaces m.direct: {user_id: [room_id, ...]}, the map clients read DMs from."""
        self.set_account_data(token, "m.direct", {user: list(rooms) for user, rooms in direct.items()})

    def direct(self, token: str) -> dict[str, list[str]]:
        return self.account_data(token, "m.direct") or {}

    # -- the timeline, read back --

    def events(self, token: str, room_id: str, event_type: str | None = None,
               page_size: int = 1000) -> list[dict[str, Any]]:
        """Every timeline event of the room (of one type if given), oldest first: /messages with
        dir=f from the room's start, page after page."""
        found: list[dict[str, Any]] = []
        token_from: str | None = None
        path = f"/_matrix/client/v3/rooms/{_q(room_id)}/messages"
        while True:
            page = self.call("GET", path, token, query={"dir": "f", "limit": page_size, "from": token_from})
            found += [e for e in page.get("chunk", []) if event_type is None or e.get("type") == event_type]
            token_from = page.get("end")
            if not page.get("chunk") or not token_from:
                return found

    def messages(self, token: str, room_id: str, page_size: int = 1000) -> list[dict[str, Any]]:
        """The room's m.room.message events, oldest first."""
        return self.events(token, room_id, "m.room.message", page_size)

    def latest_message(self, token: str, room_id: str) -> dict[str, Any] | None:
        """The room's newest m.room.message event: one small /messages page backwards, cheap
        enough to poll while the server is busy with what is being measured."""
        path = f"/_matrix/client/v3/rooms/{_q(room_id)}/messages"
        page = self.call("GET", path, token, query={"dir": "b", "limit": 20,
                                                      "filter": json.dumps({"types": ["m.room.message"]})})
        return next(iter(page.get("chunk", [])), None)

    def wait_for_messages(self, token: str, room_id: str, count: int, timeout: float = 20.0,
                          interval: float = 0.1) -> list[dict[str, Any]]:
        """Polls until the room holds at least `count` messages and returns them all (so a test can
        assert there are not more); fails with what it saw when `timeout` runs out."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.messages(token, room_id)
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                bodies = [e.get("content", {}).get("body") for e in found]
                raise AssertionError(f"{room_id} holds {len(found)} messages after {timeout} s, "
                                     f"expected {count}: {bodies!r}")
            time.sleep(interval)

    def send_text(self, token: str, room_id: str, body: str, txn_id: str | None = None) -> str:
        """One m.text over a kept-alive connection (see RawClient); returns the event id."""
        if self._raw is None:
            self._raw = RawClient("127.0.0.1", self.port)
        return self._raw.send_text(token, room_id, body, txn_id or uuid.uuid4().hex)

    def raw_client(self) -> RawClient:
        """A kept-alive client of its own, e.g. for a benchmark thread."""
        return RawClient("127.0.0.1", self.port)

    def _close_raw(self) -> None:
        if self._raw is not None:
            self._raw.close()
            self._raw = None

    # -- media --

    def upload(self, token: str, data: bytes, content_type: str = "application/octet-stream",
               filename: str | None = None) -> str:
        """POST /_matrix/media/v3/upload; returns the mxc:// URI."""
        return self.call("POST", "/_matrix/media/v3/upload", token, data=data, content_type=content_type,
                         query={"filename": filename})["content_uri"]

    def download(self, token: str, mxc: str) -> bytes:
        """The bytes behind a content URI (authenticated media, /_matrix/client/v1/media/download)."""
        server, media_id = parse_mxc(mxc)
        path = f"/_matrix/client/v1/media/download/{_q(server)}/{_q(media_id)}"
        answer = self.request("GET", path, token, timeout=120)
        if answer.status != 200:
            raise MatrixError("GET", path, answer.status, _json_or_text(answer.body))
        return answer.body

    def media_config(self, token: str) -> dict[str, Any]:
        """{"m.upload.size": bytes} as the client API announces it."""
        return self.call("GET", "/_matrix/client/v1/media/config", token)


# -- a server for scripts (make demo, make bench) ----------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """`python3 Tests/integration/homeserver.py serve DIR`: a Synapse in DIR with one signed-in user
    and one room, for shell scripts. Writes what a client needs as JSON to stdout and to
    --info-file (atomically, so a script can wait for the file), then runs until SIGTERM or SIGINT
    and stops Synapse cleanly. Stdlib only: any python3 runs it."""
    parser = argparse.ArgumentParser(prog="homeserver.py", description=main.__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a Synapse with a user and a room until stopped")
    serve.add_argument("root", type=Path, help="data directory (reused if it holds a server)")
    serve.add_argument("--user", default="demo")
    serve.add_argument("--password", default="demo-password")
    serve.add_argument("--room-name", default="Ferry demo")
    serve.add_argument("--alias", default="ferry-demo", help="alias localpart of the room")
    serve.add_argument("--max-upload-size", default="512M")
    serve.add_argument("--log-level", default="INFO")
    serve.add_argument("--info-file", type=Path)
    args = parser.parse_args(argv)

    server = Homeserver(args.root.resolve(), max_upload_size=args.max_upload_size, log_level=args.log_level)
    stop_requested = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        server.start()
        try:
            user_id = server.register(args.user, args.password)
        except MatrixError as error:
            if error.errcode != "M_USER_IN_USE":
                raise
            user_id = server.user_id(args.user)
        token, device_id = server.login(args.user, args.password)
        alias = f"#{args.alias}:{server.server_name}"
        try:
            room_id = server.resolve_alias(alias)
        except MatrixError:
            room_id = server.create_room(token, name=args.room_name, alias_localpart=args.alias)
        info = {"base_url": server.base_url, "server_name": server.server_name, "user_id": user_id,
                "password": args.password, "access_token": token, "device_id": device_id,
                "room_id": room_id, "room_alias": alias, "room_name": args.room_name, "pid": server.process.pid,
                "root": str(server.root), "log": str(server.log_path),
                "startup_seconds": round(server.startup_seconds or 0, 3)}
        print(json.dumps(info), flush=True)
        if args.info_file:
            partial = args.info_file.with_name(args.info_file.name + ".partial")
            partial.write_text(json.dumps(info, indent=1))
            partial.replace(args.info_file)
        while not stop_requested and server.running:
            time.sleep(0.2)
        return 0 if stop_requested else 1
    except (HomeserverError, MatrixError) as error:
        print(f"homeserver.py: {error}", file=sys.stderr)
        return 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
