"""Steps the delivery tests share: signing Ferry in through its public API, waiting for a share to
reach a state, reading Ferry's answers (status, destinations, deliveries), and sample media.

Everything that *checks* a delivery reads the room back from Synapse with homeserver.py; these
helpers only drive Ferry (gdbus, busctl, the ferry command line) and wait for it.
"""

from __future__ import annotations

import json
import os
import struct
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from gi.repository import Gio, GLib

from ferryenv import APP_ID, ERROR_PREFIX, OBJECT_PATH, SHARE1, FerrySession, Reply, png_bytes, wait_for
from homeserver import Homeserver, MatrixUser, _q

# Exit codes of the command line added with sign-in and delivery (docs/CONTRACT.md).
EX_FAILED, EX_NOUSER, EX_PROTOCOL, EX_TEMPFAIL, EX_NOPERM = 1, 67, 76, 75, 77

# The a{sv} types of SignIn's keys.
CREDENTIAL_TYPES = {"homeserver": "s", "user": "s", "password": "s", "access-token": "s", "sso": "b",
                    "create-account": "b"}

FINAL_STATES = {"sent", "failed", "cancelled"}

# Long enough for a loaded two-core machine; every wait ends as soon as its condition holds.
DELIVERY_TIMEOUT = 60.0


# --- signing in ------------------------------------------------------------------------------------

def credentials(**keys: Any) -> GLib.Variant:
    """An a{sv} for SignIn; access_token=... becomes "access-token"."""
    entries = {}
    for key, value in keys.items():
        key = key.replace("_", "-")
        entries[key] = value if isinstance(value, GLib.Variant) else GLib.Variant(CREDENTIAL_TYPES[key], value)
    return GLib.Variant("a{sv}", entries)


def sign_in_call(session: FerrySession, timeout: float = 60, **keys: Any) -> Reply:
    """Share1.SignIn(credentials) through gdbus; on success `value` is the account a{sv}."""
    reply = session.gdbus_call("SignIn", credentials(**keys), timeout=timeout)
    if reply.ok:
        reply.value = reply.value[0]
    return reply


def sign_in(session: FerrySession, server: Homeserver, user: MatrixUser) -> dict[str, Any]:
    """Password sign-in over D-Bus with the server's URL and the full user id; returns the account."""
    account = sign_in_call(session, homeserver=server.base_url, user=user.user_id,
                           password=user.password).expect_ok()
    assert account.get("user-id") == user.user_id, account
    return account


def sign_in_with_token(session: FerrySession, server: Homeserver, token: str) -> dict[str, Any]:
    return sign_in_call(session, homeserver=server.base_url, access_token=token).expect_ok()


def two_accounts(new_session, homeserver: Homeserver, second_homeserver: Homeserver):
    """A new Ferry signed in as Ann on the shared server (password) and as Bo on the second (token),
    each with a room of their own: (session, (ann, ann_room), (bo, bo_room))."""
    ann, bo = homeserver.new_user("ann"), second_homeserver.new_user("bo")
    ann_room = homeserver.create_room(ann.token, name="Ann's room")
    bo_room = second_homeserver.create_room(bo.token, name="Bo's room")
    session = new_session()
    sign_in(session, homeserver, ann)
    bo_token, _device = second_homeserver.login(bo.user_id, bo.password)
    sign_in_with_token(session, second_homeserver, bo_token)
    return session, (ann, ann_room), (bo, bo_room)


def signed_in_session(new_session, server: Homeserver, user: MatrixUser, **env: str) -> FerrySession:
    """A private session of its own whose Ferry is signed in as `user`."""
    session = new_session(**env)
    sign_in(session, server, user)
    return session


def sign_out(session: FerrySession) -> None:
    session.gdbus_call("SignOut").expect_ok()


def device_id_of(server: Homeserver, user: MatrixUser) -> set[str]:
    return {d["device_id"] for d in server.devices(user.user_id)}


# --- what Ferry says -------------------------------------------------------------------------------

def get_property(session: FerrySession, name: str) -> Any:
    done = session.busctl("--json=short", "get-property", APP_ID, OBJECT_PATH, SHARE1, name)
    assert done.returncode == 0, f"get-property {name}: {done.stderr}"
    return json.loads(done.stdout)["data"]


def get_status(session: FerrySession) -> dict[str, Any]:
    return session.busctl_call("GetStatus").expect_ok()


def status_json(session: FerrySession) -> dict[str, Any]:
    done = session.ferry("status", "--json")
    assert done.returncode == 0, f"ferry status --json exited {done.returncode}: {done.stderr}"
    return json.loads(done.stdout)


def list_destinations(session: FerrySession, query: str = "", limit: int = 0) -> Reply:
    """Share1.ListDestinations through gdbus (so error names are kept); `value` is the list."""
    reply = session.gdbus_call("ListDestinations", GLib.Variant("s", query), GLib.Variant("u", limit), timeout=30)
    if reply.ok:
        reply.value = reply.value[0]
    return reply


def complete_share(session: FerrySession, share_id: str, destinations: Sequence[str], message: str = "") -> Reply:
    return session.gdbus_call("CompleteShare", GLib.Variant("s", share_id), GLib.Variant("as", list(destinations)),
                              GLib.Variant("s", message))


def retry(session: FerrySession, share_id: str) -> Reply:
    return session.gdbus_call("Retry", GLib.Variant("s", share_id))


def cancel(session: FerrySession, share_id: str) -> Reply:
    return session.gdbus_call("Cancel", GLib.Variant("s", share_id))


def wait_for_share(session: FerrySession, share_id: str, predicate, timeout: float = DELIVERY_TIMEOUT,
                   what: str = "a condition", interval: float = 0.1) -> dict[str, Any]:
    """Polls GetShare until `predicate(share)` holds; returns the share. The failure message shows
    the share as it was last seen."""
    last: dict[str, Any] = {}

    def check() -> bool:
        last.clear()
        last.update(session.get_share(share_id))
        return bool(predicate(last))

    try:
        wait_for(check, timeout=timeout, interval=interval, what=f"share {share_id}: {what}")
    except AssertionError as error:
        raise AssertionError(f"{error}; last seen: {_brief(last)}") from None
    return dict(last)


def wait_for_state(session: FerrySession, share_id: str, *states: str,
                   timeout: float = DELIVERY_TIMEOUT) -> dict[str, Any]:
    """Waits until the share is in one of `states`. Reaching another final state first fails at
    once (a share that failed will not become sent by waiting)."""
    wanted = set(states)

    def reached(share: Mapping[str, Any]) -> bool:
        state = share.get("state")
        if state in FINAL_STATES and state not in wanted:
            raise AssertionError(f"share {share_id} reached {state!r}, expected {sorted(wanted)}: {_brief(share)}")
        return state in wanted

    return wait_for_share(session, share_id, reached, timeout=timeout, what=f"state in {sorted(wanted)}")


def wait_until_sent(session: FerrySession, share_ids: Iterable[str], timeout: float = DELIVERY_TIMEOUT) -> None:
    for share_id in share_ids:
        wait_for_state(session, share_id, "sent", timeout=timeout)


def deliveries(share: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(share.get("deliveries", []))


def _brief(share: Mapping[str, Any]) -> str:
    keys = ("state", "error-name", "error-message", "destinations", "deliveries")
    return repr({k: share[k] for k in keys if k in share})


def new_share_id(done) -> str:
    """`open`, `send` and `text` print the new id alone on standard output."""
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0], f"stdout is not one id (exit {done.returncode}): {done.stdout!r} {done.stderr!r}"
    return lines[0]


def error_sentence(done) -> str:
    """The command line's `ferry: <sentence>` line on standard error (other lines, such as what
    happens next with the share, may come before it)."""
    lines = [line for line in done.stderr.splitlines() if line.startswith("ferry: ")]
    assert lines, f"no `ferry: <sentence>` on standard error (exit {done.returncode}): {done.stderr!r}"
    assert len(lines[-1].split()) >= 4, f"not a sentence: {lines[-1]!r}"
    return lines[-1]


def error_name(short: str) -> str:
    return ERROR_PREFIX + short


# --- the room, read back ---------------------------------------------------------------------------

def bodies(events: Iterable[Mapping[str, Any]]) -> list[str]:
    return [e["content"].get("body") for e in events]


def msgtypes(events: Iterable[Mapping[str, Any]]) -> list[str]:
    return [e["content"].get("msgtype") for e in events]


def duplicates(events: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Bodies that appear more than once, with their counts."""
    return {body: n for body, n in Counter(bodies(events)).items() if n > 1}


def user_media(server: Homeserver, user_id: str) -> list[dict[str, Any]]:
    """Media the user uploaded, from Synapse's admin API (not Ferry's word)."""
    return server.admin_call("GET", f"/_synapse/admin/v1/users/{_q(user_id)}/media?limit=1000")["media"]


def member_event(server: Homeserver, token: str, room_id: str, user_id: str) -> dict[str, Any]:
    [event] = [e for e in server.state(token, room_id)
               if e["type"] == "m.room.member" and e["state_key"] == user_id]
    return event


def search_user_directory(server: Homeserver, token: str, term: str) -> list[dict[str, Any]]:
    return server.call("POST", "/_matrix/client/v3/user_directory/search", token,
                       json_body={"search_term": term, "limit": 50})["results"]


def set_power_level(server: Homeserver, token: str, room_id: str, events_default: int | None = None,
                    users: Mapping[str, int] | None = None) -> None:
    [current] = [e["content"] for e in server.state(token, room_id) if e["type"] == "m.room.power_levels"]
    if events_default is not None:
        current["events_default"] = events_default
    if users:
        current["users"] = {**current.get("users", {}), **users}
    server.call("PUT", f"/_matrix/client/v3/rooms/{_q(room_id)}/state/m.room.power_levels/", token,
                json_body=current)


# --- the Secret Service, read directly -------------------------------------------------------------

def kept_pairs(session: FerrySession, having: str = "refresh_token") -> list[dict]:
    """The sign-ins in the session's keyring kept as JSON with `having` (a token pair that renews:
    "refresh_token"; one through the OAuth 2.0 API: "oauth")."""
    pairs = []
    for secret in secrets_in_keyring(session):
        try:
            value = json.loads(secret)
        except ValueError:
            continue
        if isinstance(value, dict) and having in value:
            pairs.append(value)
    return pairs


def secrets_in_keyring(session: FerrySession) -> list[bytes]:
    """Every secret in the session's Secret Service (unlocked items), read over the bus with the
    plain transfer algorithm: what Ferry stored, independent of Ferry."""
    connection = Gio.DBusConnection.new_for_address_sync(
        session.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    try:
        def call(path: str, interface: str, method: str, args: GLib.Variant | None, reply: str) -> Any:
            return connection.call_sync("org.freedesktop.secrets", path, interface, method, args,
                                        GLib.VariantType(reply), Gio.DBusCallFlags.NONE, 10_000, None).unpack()

        service = "org.freedesktop.Secret.Service"
        _, secret_session = call("/org/freedesktop/secrets", service, "OpenSession",
                                 GLib.Variant("(sv)", ("plain", GLib.Variant("s", ""))), "(vo)")
        unlocked, _locked = call("/org/freedesktop/secrets", service, "SearchItems",
                                 GLib.Variant("(a{ss})", ({},)), "(aoao)")
        if not unlocked:
            return []
        (found,) = call("/org/freedesktop/secrets", service, "GetSecrets",
                        GLib.Variant("(aoo)", (unlocked, secret_session)), "(a{o(oayays)})")
        return [bytes(value) for (_session, _params, value, _type) in found.values()]
    finally:
        connection.close_sync(None)


def files_containing(root: Path, needle: bytes) -> list[Path]:
    found = []
    for directory, _dirs, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            try:
                if path.is_file() and needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found


# --- sample media ----------------------------------------------------------------------------------

def png_of_size(width: int, height: int, seed: int = 0) -> bytes:
    return png_bytes(width=width, height=height, seed=seed)


def wav_bytes(samples: int = 800) -> bytes:
    """A valid WAV: 8 kHz mono 16-bit silence (GIO: audio/x-wav)."""
    data = b"\0\0" * samples
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
    return b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + fmt + b"data" + struct.pack("<I", len(data)) + data


def mp4_bytes() -> bytes:
    """An MP4 ftyp box and a free box (GIO: video/mp4)."""
    ftyp = b"ftypisom" + struct.pack(">I", 512) + b"isomiso2avc1mp41"
    return struct.pack(">I", 8 + len(ftyp)) + ftyp + struct.pack(">I", 16) + b"free" + b"\0" * 8


def binary_bytes(size: int = 1024, seed: int = 0) -> bytes:
    """Bytes no sniffer recognises (application/octet-stream with an unknown extension)."""
    return bytes((i * 7 + seed) % 256 for i in range(size))


# --- notifications ---------------------------------------------------------------------------------

def start_notification_server(session: FerrySession) -> Path:
    """Runs notification_server.py on the session's bus (it is stopped with the session); returns
    the file it records Notify calls in. Start it before the service first notifies."""
    import subprocess
    import sys

    record = session.root / f"notifications-{os.getpid()}-{len(list(session.root.glob('notifications-*')))}.jsonl"
    subprocess.Popen([sys.executable, str(Path(__file__).with_name("notification_server.py")), str(record)],
                     env=session.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=open(session.log_path, "ab"), cwd=session.root)
    wait_for(lambda: record.exists() and session.name_has_owner("org.freedesktop.Notifications"), timeout=15,
             what="the test's notification server to own org.freedesktop.Notifications")
    return record


def notifications(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]


def wait_for_notification(record: Path, predicate, timeout: float = 30, what: str = "a notification") -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def seen() -> bool:
        found[:] = [n for n in notifications(record) if predicate(n)]
        return bool(found)

    try:
        wait_for(seen, timeout=timeout, what=what)
    except AssertionError as error:
        raise AssertionError(f"{error}; notifications so far: {notifications(record)}") from None
    return found[-1]


def notification_text(notification: Mapping[str, Any]) -> str:
    return f"{notification.get('summary', '')}\n{notification.get('body', '')}"


def action_labels(notification: Mapping[str, Any]) -> list[str]:
    """The fdo actions list alternates keys and labels."""
    return list(notification.get("actions", []))[1::2]
