"""Regenerates scripts/link-order.txt: the functions Ferry runs when it starts, takes a share,
answers the command line, sends signed in and shows the share dialog, in the order the release link lays them out
(lld --symbol-ordering-file).

Why: the release binary is ~40 MB of code with the Swift runtime and Foundation in it. Left to the
linker's order, the few thousand functions a cold start needs are spread over all of it, and each
page fault maps 64 KB around the one function it needed: the service started with 15 MB of its
code resident and spent most of its cold start in page faults. Laid out together, they fit in
about 1 MB. Names that no longer exist are skipped by the linker, and new functions are simply
placed after the listed ones, so a stale list costs speed, never correctness. Rerun it after big
changes to what the service does at start:

    make install PREFIX=$PWD/build/order-prefix CONFIG=release
    .venv-test/bin/python scripts/link-order.py build/order-prefix

Needs valgrind (callgrind records every function that runs, which sampling would miss), a display
server (Xvfb) and the homeserver's virtualenv (`make deps`).
"""

from __future__ import annotations

import bisect
import signal
from collections import Counter
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "Tests" / "integration"))

from gi.repository import Gio, GLib  # noqa: E402

from ferryenv import APP_ID, FerrySession, write_png  # noqa: E402

OUTPUT = ROOT / "scripts" / "link-order.txt"


def callgrind(out: Path) -> list[str]:
    return ["valgrind", "--tool=callgrind", "--demangle=no", "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
            f"--callgrind-out-file={out}"]


def session_bus(env: dict[str, str]) -> Gio.DBusConnection:
    """One connection for all the polling, kept open until the profiled process has exited: a
    `gdbus call` per poll connected and left the bus each time, and whether the process saw those
    NameOwnerChanged signals depended on timing (1.5 % of a bare GApplication's instructions)."""
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    return Gio.DBusConnection.new_for_address_sync(env["DBUS_SESSION_BUS_ADDRESS"], flags, None, None)


def wait_for_name(service: subprocess.Popen, bus: Gio.DBusConnection, timeout: float = 120) -> None:
    """Returns once the service started under valgrind owns its bus name (valgrind's start is slow)."""
    deadline = time.monotonic() + timeout
    while not bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                            GLib.Variant("(s)", (APP_ID,)), None, Gio.DBusCallFlags.NONE, 10_000, None).unpack()[0]:
        if time.monotonic() > deadline or service.poll() is not None:
            raise SystemExit("the service under valgrind did not take its bus name")
        time.sleep(0.1)


def strip_debug(binary: Path, copy: Path) -> Path:
    """valgrind 3.19 cannot read the DWARF 5 that swiftc writes: profile a copy without it."""
    subprocess.run(["objcopy", "--strip-debug", str(binary), str(copy)], check=True)
    return copy


def make_database(session: FerrySession) -> None:
    """The usual cold start finds its database made and a share waiting (only the very first start
    does not): one share makes them, and the service is stopped again before the recording or
    measuring. bench_check.py uses it too."""
    done = session.ferry("text", "the database made before", "--no-wait", timeout=60)
    assert done.returncode == 0, done.stderr
    session.kill_service(signal.SIGTERM)


# A cold start's path moves a little with timing (which of the main loop's and the sender's
# callbacks run before the idle exit): each function missing from the list costs a fault in its own
# 64 KB of the binary, so the service's start is recorded several times and their union kept.
SERVICE_RUNS = 3


def record(prefix: Path, binary: Path, work: Path) -> list[Path]:
    """Runs the service and the command line under callgrind; returns the profiles, service first."""
    session = FerrySession(prefix=prefix, root=work / "session",
                           extra_env={"FERRY_LOG": "notice", "FERRY_IDLE_TIMEOUT": "4"}).start()
    services = [work / f"service{run}.out" for run in range(SERVICE_RUNS)]
    clients = [work / "cli.out", work / "version.out"]
    try:
        env = dict(session.env)
        make_database(session)
        bus = session_bus(env)
        for run, profile in enumerate(services):
            service = subprocess.Popen([*callgrind(profile), str(binary), "service"], env=env,
                                       stderr=subprocess.DEVNULL)
            wait_for_name(service, bus)
            picture = write_png(session.files / f"harbour{run}.png", seed=run)
            subprocess.run(["gio", "open", str(picture)], env=env, check=True)
            session.share_ok(text="a text for the link order")
            if run == 0:
                subprocess.run([*callgrind(clients[0]), str(binary), "text", "from the command line", "--no-wait"],
                               env=env, check=True, capture_output=True)
                subprocess.run([*callgrind(clients[1]), str(binary), "--version"], env=env, check=True,
                               capture_output=True)
            service.wait(timeout=300)
        bus.close_sync(None)
    finally:
        session.stop()
    return [*services, *clients]


def record_sending(prefix: Path, binary: Path, work: Path) -> Path:
    """Runs the service signed in (a local Synapse) under callgrind from its start through a
    `ferry text --to ROOM`, which returns once the server has the message, to its stop; returns the
    profile. The code that sends is most of what a signed-in service keeps in memory."""
    from homeserver import Homeserver
    from matrixflow import sign_in

    profile = work / "sending.out"
    server = Homeserver(work / "synapse").start()
    try:
        user = server.new_user("order")
        room = server.create_room(user.token, name="Link order")
        session = FerrySession(prefix=prefix, root=work / "sending-session", extra_env={"FERRY_LOG": "notice"}).start()
        try:
            sign_in(session, server, user)
            session.kill_service(signal.SIGTERM)
            env = dict(session.env)
            bus = session_bus(env)
            try:
                service = subprocess.Popen([*callgrind(profile), str(binary), "service"], env=env,
                                           stderr=subprocess.DEVNULL)
                wait_for_name(service, bus)
                done = session.ferry("text", "a text for the link order", "--to", room, timeout=300)
                assert done.returncode == 0, done.stderr
                time.sleep(2)
                service.send_signal(signal.SIGTERM)
                service.wait(timeout=300)
            finally:
                bus.close_sync(None)
        finally:
            session.stop()
    finally:
        server.stop()
    return profile


def record_dialog(prefix: Path, work: Path) -> tuple[Path, Path]:
    """Runs the share dialog (ferry-ui, a stripped copy) under callgrind on a virtual display, from
    its start through its first frame to its exit when the share is cancelled; returns the copy and
    its profile. The share waits for a sign-in, as the first share of a person signed out does."""
    from uidesktop import start_xvfb

    copy = work / "libexec" / "ferry" / "ferry-ui"
    copy.parent.mkdir(parents=True)
    strip_debug(prefix / "libexec" / "ferry" / "ferry-ui", copy)
    profile = work / "dialog.out"
    xvfb, display = start_xvfb()
    # No display for the service: it starts no dialog of its own, the profiled one is the only one.
    session = FerrySession(prefix=prefix, root=work / "dialog-session", extra_env={"FERRY_LOG": "notice"}).start()
    try:
        share_id = session.share_ok(text="a text for the dialog's link order")
        log = work / "dialog.log"
        env = dict(session.env, DISPLAY=display, GSK_RENDERER="cairo", GDK_BACKEND="x11", GTK_A11Y="none",
                   FERRY_LOG="debug")
        with open(log, "wb") as stderr:
            dialog = subprocess.Popen([*callgrind(profile), str(copy), "--share", share_id], env=env,
                                      stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 300
        while b"first frame" not in log.read_bytes():
            assert dialog.poll() is None and time.monotonic() < deadline, "the dialog never drew its first frame"
            time.sleep(0.5)
        time.sleep(2)
        session.gdbus_call("Cancel", GLib.Variant("s", share_id)).expect_ok()
        dialog.wait(timeout=300)
    finally:
        session.stop()
        xvfb.kill()
        xvfb.wait(timeout=10)
    return copy, profile


class Functions:
    """The binary's functions by address (nm), to name each instruction a profile saw run."""

    def __init__(self, binary: Path):
        self.binary = binary
        listing = subprocess.run(["nm", "-n", "--defined-only", str(binary)], capture_output=True, text=True, check=True)
        rows = [line.split(None, 2) for line in listing.stdout.splitlines()]
        rows = [(int(row[0], 16), row[2]) for row in rows if len(row) == 3 and row[1] in "tTwW"]
        self.starts = [start for start, _ in rows]
        self.names = [name for _, name in rows]
        # A name that several objects define locally (value witnesses like `$sSqwta`, `objectdestroy`,
        # block helpers) would order every copy: lld would pull each copy's whole section forward,
        # and in the prebuilt archives (no section per function) that is hundreds of KB of code
        # that never runs, spread through the hot region. Such names are left out.
        self.ambiguous = {name for name, count in Counter(self.names).items() if count > 1}

    def containing(self, address: int) -> str | None:
        index = bisect.bisect_right(self.starts, address) - 1
        return self.names[index] if index >= 0 else None

    def executed(self, profile: Path) -> list[str]:
        """The binary's functions that ran, each once, in the order the profile first lists them.
        Read from the instruction addresses rather than callgrind's function names: the names
        missed functions entered by a jump (metadata accessors, witness thunks), 80 of a cold start."""
        names: dict[str, None] = {}
        inside = False
        for line in profile.read_text(errors="replace").splitlines():
            if line.startswith("ob="):
                inside = line[3:].strip() == str(self.binary)
            elif inside and line.startswith("0x"):
                name = self.containing(int(line.split(None, 1)[0], 16))
                if name is not None and name not in self.ambiguous:
                    names.setdefault(name)
        return list(names)


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="ferry-link-order-") as temp:
        work = Path(temp)
        binary = strip_debug(prefix / "bin" / "ferry", work / "ferry")
        known = Functions(binary)
        order: list[str] = []
        seen: set[str] = set()
        profiles = [(known, profile) for profile in record(prefix, binary, work)]
        profiles.append((known, record_sending(prefix, binary, work)))
        # The dialog's functions after the service's: one list serves both programs (a name a
        # program does not have is skipped), and the code they share comes first in both.
        dialog, profile = record_dialog(prefix, work)
        profiles.append((Functions(dialog), profile))
        for functions, profile in profiles:
            for name in functions.executed(profile):
                if name not in seen:
                    seen.add(name)
                    order.append(name)
    header = ("# Generated by scripts/link-order.py: the functions a cold start, a share, the command line, a send\n"
              "# and the share dialog run, laid out together by the release link (lld --symbol-ordering-file). See that script.\n")
    OUTPUT.write_text(header + "\n".join(order) + "\n")
    print(f"{OUTPUT.relative_to(ROOT)}: {len(order)} functions")


if __name__ == "__main__":
    main()
