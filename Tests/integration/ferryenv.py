"""A private desktop session for integration tests: its own session bus, XDG directories and
Ferry installed in a prefix, driven only through real clients (gdbus, busctl, gio, gapplication,
xdg-open, the ferry command line).

Nothing here imitates Ferry: every answer comes from the installed `ferry service`, activated by
a real dbus-daemon from the D-Bus service file in the prefix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import sqlite3
import struct
import subprocess
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from gi.repository import GLib  # only to print and parse GVariant text for gdbus

APP_ID = "io.github.ferryshare.Ferry"
OBJECT_PATH = "/io/github/ferryshare/Ferry"
SHARE1 = "io.github.ferryshare.Ferry.Share1"
APPLICATION = "org.freedesktop.Application"
ERROR_PREFIX = "io.github.ferryshare.Ferry.Error."

# Exit codes of the command line (docs/CONTRACT.md, sysexits.h).
EX_OK, EX_USAGE, EX_DATAERR, EX_NOINPUT, EX_UNAVAILABLE, EX_SOFTWARE, EX_IOERR = 0, 64, 65, 66, 69, 70, 74

# The a{sv} types of Share's keys (data/dbus/io.github.ferryshare.Ferry.Share1.xml).
INTENT_TYPES = {"uris": "as", "text": "s", "subject": "s", "message": "s", "destinations": "as", "account": "s"}

DEFAULT_TIMEOUT = 20.0

SECRET_SERVICE_MARKERS = ("org.freedesktop.secrets", "org.freedesktop.impl.portal.Secret", "gnome-keyring")

# /usr/share/dbus-1/session.conf, with explicit service directories (see FerrySession._write_bus_config).
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
{servicedirs}
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_incoming_unix_fds">250000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_outgoing_unix_fds">250000000</limit>
  <limit name="max_message_size">1000000000</limit>
  <limit name="service_start_timeout">120000</limit>
  <limit name="auth_timeout">240000</limit>
  <limit name="pending_fd_timeout">150000</limit>
  <limit name="max_completed_connections">100000</limit>
  <limit name="max_incomplete_connections">10000</limit>
  <limit name="max_connections_per_user">100000</limit>
  <limit name="max_pending_service_starts">10000</limit>
  <limit name="max_names_per_connection">50000</limit>
  <limit name="max_match_rules_per_connection">50000</limit>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
"""


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class CommandTimedOut(AssertionError):
    """A client did not finish in time: a hang is a failure, never a wait."""


@dataclass
class Reply:
    """What a D-Bus call through a command-line client came back with."""

    command: Sequence[str]
    returncode: int
    stdout: str
    stderr: str
    value: Any = None
    error_name: str | None = None
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.error_name is None

    def expect_ok(self) -> Any:
        assert self.ok, f"{_show(self.command)} failed: {self.stderr.strip()}"
        return self.value

    def expect_error(self, short_name: str) -> str:
        """Asserts the call failed with io.github.ferryshare.Ferry.Error.<short_name>; returns the message."""
        assert not self.ok, f"{_show(self.command)} succeeded ({self.stdout.strip()}), expected {short_name}"
        assert self.error_name == ERROR_PREFIX + short_name, (
            f"expected {ERROR_PREFIX}{short_name}, got {self.error_name!r}: {self.stderr.strip()}"
        )
        assert self.error_message and self.error_message.strip(), "the error has no sentence"
        return self.error_message


@dataclass
class Signal:
    member: str
    first_string: str | None
    raw: str


def _show(command: Sequence[Any]) -> str:
    text = " ".join(os.fsdecode(c) if isinstance(c, bytes) else str(c) for c in command)
    return text if len(text) < 300 else text[:300] + f"… ({len(command)} arguments)"


# --- GVariant text, for gdbus -------------------------------------------------------------------

def variant(type_string: str, value: Any) -> GLib.Variant:
    return GLib.Variant(type_string, value)


def intent_variant(intent: Mapping[str, Any]) -> GLib.Variant:
    """An a{sv} for Share; values that are already GLib.Variant are passed as they are (wrong types
    on purpose), others get the documented type of their key."""
    entries = {}
    for key, value in intent.items():
        if isinstance(value, GLib.Variant):
            entries[key] = value
        else:
            entries[key] = GLib.Variant(INTENT_TYPES[key], value)
    return GLib.Variant("a{sv}", entries)


_GDBUS_ERROR = re.compile(r"GDBus\.Error:([A-Za-z0-9_.\-]+): (.*)")


def parse_gdbus_error(stderr: str) -> tuple[str | None, str | None]:
    for line in stderr.splitlines():
        match = _GDBUS_ERROR.search(line)
        if match:
            return match.group(1), match.group(2)
    return None, None


# --- busctl --json, decoded by signature ---------------------------------------------------------

def _split_signature(signature: str) -> list[str]:
    """Splits a D-Bus signature into its complete types."""
    types, index = [], 0
    while index < len(signature):
        end = _complete_type_end(signature, index)
        types.append(signature[index:end])
        index = end
    return types


def _complete_type_end(signature: str, index: int) -> int:
    char = signature[index]
    if char == "a":
        return _complete_type_end(signature, index + 1)
    if char in "({":
        closing = ")" if char == "(" else "}"
        depth, cursor = 0, index
        while True:
            if signature[cursor] in "({":
                depth += 1
            elif signature[cursor] in ")}":
                depth -= 1
                if depth == 0:
                    assert signature[cursor] == closing
                    return cursor + 1
            cursor += 1
    return index + 1


def decode_busctl(signature: str, data: Any) -> Any:
    """Turns busctl's --json value of a given signature into plain Python values."""
    if signature == "v":
        return decode_busctl(data["type"], data["data"])
    if signature.startswith("a{"):
        key_type, value_type = _split_signature(signature[2:-1])
        return {decode_busctl(key_type, k): decode_busctl(value_type, v) for k, v in data.items()}
    if signature.startswith("a"):
        return [decode_busctl(signature[1:], element) for element in data]
    if signature.startswith("("):
        return tuple(decode_busctl(t, d) for t, d in zip(_split_signature(signature[1:-1]), data))
    return data


# --- sample files ---------------------------------------------------------------------------------

def png_bytes(width: int = 2, height: int = 2, seed: int = 0) -> bytes:
    """A valid PNG; `seed` varies the pixels so that files differ."""
    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    rows = b"".join(
        b"\x00" + bytes(channel for x in range(width)
                         for channel in ((x * 37 + y * 11 + seed) % 256, seed % 256, (x + y) % 256))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def pdf_bytes() -> bytes:
    return (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
        b"trailer << /Root 1 0 R >>\n%%EOF\n"
    )


def write_png(path: Path, seed: int = 0) -> Path:
    path.write_bytes(png_bytes(seed=seed))
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def file_uri(path: Path | str | bytes) -> str:
    return GLib.filename_to_uri(os.fsdecode(path) if isinstance(path, bytes) else str(path), None)


# --- the session ----------------------------------------------------------------------------------

@dataclass
class FerrySession:
    """One private desktop session: a dbus-daemon whose activated `ferry service` sees only the
    temporary XDG directories below `root`."""

    prefix: Path
    root: Path
    extra_env: Mapping[str, str] = field(default_factory=dict)
    # Runs the bus (and so the activated service) and the clients through this, e.g. setpriv.
    wrapper: Sequence[str] = ()
    # The system's D-Bus service files would let the private bus activate gnome-keyring on first
    # use, which then wants a prompter (a display) to make a keyring: whether a test meets a
    # Secret Service would depend on the machine. Sessions have none unless a test starts one
    # (start_keyring), as on a desktop without a keyring: Ferry keeps its token in a file there.
    system_secret_service: bool = False

    daemon: subprocess.Popen | None = None
    address: str = ""
    env: dict[str, str] = field(default_factory=dict)

    # -- lifecycle --

    def start(self) -> "FerrySession":
        dirs = {name: self.root / name for name in ("home", "state", "config", "data", "cache", "runtime", "files")}
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        dirs["runtime"].chmod(0o700)
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": str(dirs["home"]),
            "XDG_STATE_HOME": str(dirs["state"]),
            "XDG_CONFIG_HOME": str(dirs["config"]),
            "XDG_DATA_HOME": str(dirs["data"]),
            "XDG_CACHE_HOME": str(dirs["cache"]),
            "XDG_RUNTIME_DIR": str(dirs["runtime"]),
            "XDG_DATA_DIRS": f"{self.prefix / 'share'}:/usr/local/share:/usr/share",
            "XDG_CONFIG_DIRS": "/etc/xdg",
            "FERRY_LOG": "debug",
            "FERRY_IDLE_TIMEOUT": "120",
            # GLib's fallback to a private dconf/keyring would reach outside the session.
            "GSETTINGS_BACKEND": "memory",
            # A crash signal a test delivers (test_crash_loop) would start Swift's backtracer, which
            # outlived the killed service by half an hour and more; Ferry's own crash witness is
            # what the tests look at.
            "SWIFT_BACKTRACE": "enable=no",
        }
        for passthrough in ("LD_LIBRARY_PATH",):
            if passthrough in os.environ:
                env[passthrough] = os.environ[passthrough]
        env.update(self.extra_env)
        self.env = env
        self.log_path = self.root / "bus.log"
        log = open(self.log_path, "ab")
        # --nofork so the daemon (and the services it activates, which inherit its stderr) log to
        # a file the test report can show.
        bus_config = ["--session"] if self.system_secret_service else [f"--config-file={self._write_bus_config()}"]
        self.daemon = subprocess.Popen(
            [*self.wrapper, "dbus-daemon", *bus_config, "--nofork", "--nopidfile", "--print-address=1"],
            env=env, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, cwd=dirs["home"],
        )
        log.close()
        line = _read_line(self.daemon, timeout=10)
        assert line.startswith(("unix:", "tcp:")), f"dbus-daemon printed no address: {line!r}"
        self.address = line.strip()
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        return self

    def _write_bus_config(self) -> Path:
        """The standard session bus configuration, with the service directories it would use
        (XDG_DATA_HOME, XDG_DATA_DIRS, /usr/share) except that the system's Secret Service files
        (gnome-keyring and its prompters) are left out: asking for org.freedesktop.secrets gives
        ServiceUnknown, as on a machine without a keyring."""
        system_services = self.root / "dbus-system-services"
        system_services.mkdir(exist_ok=True)
        for source in Path("/usr/share/dbus-1/services").glob("*.service"):
            text = source.read_text(errors="replace")
            if any(marker in text for marker in SECRET_SERVICE_MARKERS) or "keyring" in source.name:
                continue
            target = system_services / source.name
            if not target.exists():
                target.symlink_to(source)
        dirs = [Path(self.env["XDG_DATA_HOME"]) / "dbus-1" / "services"]
        dirs += [Path(d) / "dbus-1" / "services" for d in self.env["XDG_DATA_DIRS"].split(":")
                 if d and Path(d).resolve() != Path("/usr/share")]
        dirs.append(system_services)
        config = self.root / "session-bus.conf"
        config.write_text(BUS_CONFIG.format(servicedirs="\n".join(
            f"  <servicedir>{_xml_text(str(d))}</servicedir>" for d in dirs)))
        return config

    def start_keyring(self, password: str = "ferry-test-keyring") -> subprocess.CompletedProcess:
        """Starts gnome-keyring-daemon's Secret Service on this session's bus with a login keyring
        made with `password` and unlocked (it reads the password on standard input), as a desktop
        login does through PAM. Returns once org.freedesktop.secrets is on the bus."""
        done = self.run("gnome-keyring-daemon", "--unlock", "--components=secrets", input=password, timeout=20)
        assert done.returncode == 0, f"gnome-keyring-daemon failed: {done.stderr}"
        wait_for(lambda: self.name_has_owner("org.freedesktop.secrets"), timeout=10,
                 what="gnome-keyring to own org.freedesktop.secrets")
        return done

    def name_has_owner(self, name: str) -> bool:
        done = self.run("gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                        "--object-path", "/org/freedesktop/DBus",
                        "--method", "org.freedesktop.DBus.NameHasOwner", name)
        assert done.returncode == 0, done.stderr
        return GLib.Variant.parse(None, done.stdout.strip(), None, None).unpack()[0]

    def stop(self) -> None:
        for pid in self.processes_in_session():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.daemon and self.daemon.poll() is None:
            self.daemon.kill()
            self.daemon.wait(timeout=10)
        if self.daemon and self.daemon.stdout:
            self.daemon.stdout.close()

    def processes_in_session(self) -> list[int]:
        """Every process that carries this session's unique runtime directory in its environment:
        the bus, the activated service, and any client left behind."""
        marker = f"XDG_RUNTIME_DIR={self.env.get('XDG_RUNTIME_DIR')}".encode() + b"\0"
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue
            if marker in environ + b"\0":
                found.append(int(entry))
        return found

    @property
    def state_dir(self) -> Path:
        return Path(self.env["XDG_STATE_HOME"]) / "ferry"

    @property
    def database(self) -> Path:
        return self.state_dir / "ferry.sqlite3"

    @property
    def files(self) -> Path:
        """A folder for the test's sample files."""
        return self.root / "files"

    def spool_dir(self, share_id: str) -> Path:
        return self.state_dir / "spool" / share_id

    def spool_entries(self) -> set[str]:
        spool = self.state_dir / "spool"
        return set(os.listdir(spool)) if spool.is_dir() else set()

    def log_tail(self, lines: int = 80) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- running clients --

    def run(self, *command: Any, input: str | bytes | None = None, cwd: Path | str | None = None,
            timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] | None = None,
            wrapped: bool = True) -> subprocess.CompletedProcess:
        """Runs a client in the session. Always with a timeout: a hang fails the test."""
        argv = [*(self.wrapper if wrapped else ()), *[c if isinstance(c, bytes) else str(c) for c in command]]
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        try:
            completed = subprocess.run(
                argv, env=full_env, cwd=str(cwd or self.files), input=input.encode() if isinstance(input, str) else input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired as expired:
            raise CommandTimedOut(f"{_show(argv)} did not finish within {timeout} s; "
                                  f"stderr so far: {(expired.stderr or b'').decode(errors='replace')}") from None
        return subprocess.CompletedProcess(
            completed.args, completed.returncode,
            completed.stdout.decode("utf-8", errors="surrogateescape"),
            completed.stderr.decode("utf-8", errors="surrogateescape"),
        )

    def ferry(self, *args: Any, **kwargs: Any) -> subprocess.CompletedProcess:
        return self.run(self.prefix / "bin" / "ferry", *args, **kwargs)

    # -- D-Bus through gdbus (prints error names) --

    def gdbus_call(self, method: str, *args: GLib.Variant, interface: str = SHARE1,
                   timeout: float = DEFAULT_TIMEOUT) -> Reply:
        command = ["gdbus", "call", "--session", "--dest", APP_ID, "--object-path", OBJECT_PATH,
                   "--method", f"{interface}.{method}", "--timeout", str(int(timeout)),
                   *[a.print_(True) for a in args]]
        done = self.run(*command, timeout=timeout + 5)
        reply = Reply(command, done.returncode, done.stdout, done.stderr)
        if done.returncode == 0:
            reply.value = GLib.Variant.parse(None, done.stdout.strip(), None, None).unpack()
        else:
            reply.error_name, reply.error_message = parse_gdbus_error(done.stderr)
        return reply

    def share(self, timeout: float = DEFAULT_TIMEOUT, **intent: Any) -> Reply:
        """Share1.Share(intent) through gdbus; on success `value` is the new id."""
        reply = self.gdbus_call("Share", intent_variant(intent), timeout=timeout)
        if reply.ok:
            reply.value = reply.value[0]
        return reply

    def share_ok(self, **intent: Any) -> str:
        share_id = self.share(**intent).expect_ok()
        assert isinstance(share_id, str) and share_id, f"Share returned {share_id!r}"
        return share_id

    def open_uris(self, uris: Sequence[str]) -> Reply:
        """org.freedesktop.Application.Open(uris, {}) through gdbus."""
        return self.gdbus_call("Open", GLib.Variant("as", list(uris)), GLib.Variant("a{sv}", {}),
                               interface=APPLICATION)

    # -- D-Bus through busctl (JSON output) --

    def busctl(self, *args: Any, timeout: float = DEFAULT_TIMEOUT) -> subprocess.CompletedProcess:
        return self.run("busctl", "--user", f"--timeout={int(timeout)}", *args, timeout=timeout + 5)

    def busctl_call(self, method: str, signature: str = "", *args: Any, interface: str = SHARE1,
                    timeout: float = DEFAULT_TIMEOUT) -> Reply:
        command = ["--json=short", "call", APP_ID, OBJECT_PATH, interface, method]
        if signature:
            command += [signature, *args]
        done = self.busctl(*command, timeout=timeout)
        reply = Reply(["busctl", "--user", *command], done.returncode, done.stdout, done.stderr)
        if done.returncode == 0:
            if done.stdout.strip():
                payload = json.loads(done.stdout)
                values = [decode_busctl(t, d) for t, d in zip(_split_signature(payload["type"]), payload["data"])]
                reply.value = values[0] if len(values) == 1 else tuple(values)
        else:
            # busctl prints only the sentence, never the error name.
            reply.error_message = done.stderr.strip().removeprefix("Call failed: ")
            reply.error_name = "(busctl does not print error names)"
        return reply

    def get_share(self, share_id: str) -> dict[str, Any]:
        return self.busctl_call("GetShare", "s", share_id).expect_ok()

    def list_shares(self) -> list[dict[str, Any]]:
        return self.busctl_call("ListShares").expect_ok()

    def share_ids(self) -> list[str]:
        return [s["id"] for s in self.list_shares()]

    def signed_in(self) -> bool:
        done = self.busctl("--json=short", "get-property", APP_ID, OBJECT_PATH, SHARE1, "SignedIn")
        assert done.returncode == 0, done.stderr
        payload = json.loads(done.stdout)
        assert payload["type"] == "b", payload
        return payload["data"]

    # -- the service process --

    def name_owner_pid(self) -> int | None:
        done = self.run("gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                        "--object-path", "/org/freedesktop/DBus",
                        "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", APP_ID)
        if done.returncode != 0:
            return None
        return int(GLib.Variant.parse(None, done.stdout.strip(), None, None).unpack()[0])

    def service_running(self) -> bool:
        return self.name_has_owner(APP_ID)

    def kill_service(self, sig: int = signal.SIGKILL) -> None:
        """Stops the running service (if any) and waits until its name is gone from the bus."""
        pid = self.name_owner_pid()
        if pid is None:
            return
        os.kill(pid, sig)
        # A crash signal runs the Swift runtime's backtracer in a debug build (the packaged, static
        # build has none and dies at once): it symbolicates every thread first, seven seconds on an
        # idle machine, more on a busy one.
        timeout = 10 if sig in (signal.SIGKILL, signal.SIGTERM) else 90
        wait_for(lambda: not self.service_running(), timeout=timeout, what="the service's name to leave the bus")
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or _is_zombie(pid), timeout=10,
                 what=f"service process {pid} to exit")

    # -- signals --

    @contextlib.contextmanager
    def signals(self) -> Iterable["SignalMonitor"]:
        """Records Share1's signals with dbus-monitor (a bus monitor, so nothing emitted after it
        is ready can be missed, even across activation)."""
        monitor = SignalMonitor(self)
        try:
            monitor.start()
            yield monitor
        finally:
            monitor.stop()

    # -- the outbox, read directly --

    def db_rows(self, table: str = "share") -> list[dict[str, Any]]:
        assert self.database.exists(), f"no database at {self.database}"
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=5)
        try:
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute(f"SELECT * FROM {table}")]
        finally:
            connection.close()


class SignalMonitor:
    def __init__(self, session: FerrySession):
        self.session = session
        self.output_path = session.root / f"monitor-{time.monotonic_ns()}.txt"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        out = open(self.output_path, "wb")
        self.process = subprocess.Popen(
            ["dbus-monitor", "--session", f"type='signal',interface='{SHARE1}'"],
            env=self.session.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        out.close()
        # dbus-monitor loses its own name once BecomeMonitor has taken effect.
        wait_for(lambda: "member=NameLost" in self._text(), timeout=10, what="dbus-monitor to be ready")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _text(self) -> str:
        return self.output_path.read_bytes().decode("utf-8", errors="replace")

    def received(self) -> list[Signal]:
        signals = []
        blocks = re.split(r"^(?=signal |method |error |method return )", self._text(), flags=re.MULTILINE)
        for block in blocks:
            header = re.match(r"signal .*interface=([^;]+); member=(\w+)", block)
            if not header or header.group(1) != SHARE1:
                continue
            first = re.search(r'^\s+string "(.*?)"$', block, flags=re.MULTILINE | re.DOTALL)
            signals.append(Signal(header.group(2), first.group(1) if first else None, block))
        return signals

    def wait_for_signal(self, member: str, predicate: Callable[[Signal], bool] = lambda s: True,
                        timeout: float = 10) -> Signal:
        found: list[Signal] = []

        def seen() -> bool:
            found[:] = [s for s in self.received() if s.member == member and predicate(s)]
            return bool(found)

        wait_for(seen, timeout=timeout, what=f"signal {member}; got {[s.member for s in self.received()]}")
        return found[0]


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


def _read_line(process: subprocess.Popen, timeout: float) -> str:
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise CommandTimedOut(f"no line from {process.args} within {timeout} s")
        chunk = os.read(process.stdout.fileno(), 4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").splitlines()[0] if data else ""


def wait_for(predicate: Callable[[], Any], timeout: float = 10, interval: float = 0.02, what: str = "a condition") -> Any:
    """Polls until `predicate()` is truthy; fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
