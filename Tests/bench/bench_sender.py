"""The sender's figures (issue: sign-in step and in-process sender), measured side by side in one
run against a real Synapse on loopback. Prints figures, references and ratios; never fails on time.

    python Tests/bench/bench_sender.py PREFIX [text|upload|drain …]
"""

from __future__ import annotations

import fcntl
import mmap
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

from gi.repository import Gio, GLib  # noqa: E402

from ferryenv import APP_ID, OBJECT_PATH, SHARE1, FerrySession  # noqa: E402
from homeserver import Homeserver  # noqa: E402
from matrixflow import sign_in  # noqa: E402

REPO = HERE.parent.parent


def report(name: str, value: str, reference: str = "", target: str = "") -> None:
    print(f"  {name:<50} {value:>12}  {reference:<28} {target}", flush=True)


def timed(command: list, session: FerrySession) -> float:
    started = time.perf_counter()
    done = session.run(*command, timeout=600)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    return elapsed


class SentWatcher:
    """Hears Ferry's ShareChanged signals and notes when each share became `sent`: the moment after
    the server's 200 for its last event. Waiting on the signal instead of polling keeps the wait
    from loading the machine being measured (a busctl process every 50 ms took a tenth of a core,
    a timeline read every 50 ms a tenth of the homeserver's). Subscribe before the work starts."""

    def __init__(self, session: FerrySession):
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        self.connection = Gio.DBusConnection.new_for_address_sync(session.address, flags, None, None)
        self.sent: dict[str, float] = {}
        self.connection.signal_subscribe(APP_ID, SHARE1, "ShareChanged", OBJECT_PATH, None,
                                         Gio.DBusSignalFlags.NONE, self._changed)

    def _changed(self, _connection, _sender, _path, _interface, _signal, parameters) -> None:
        share_id, share = parameters.unpack()
        if share.get("state") == "sent":
            self.sent.setdefault(share_id, time.perf_counter())

    def wait(self, share_id: str, timeout: float = 600) -> float:
        """Returns the perf_counter time at which `share_id` was heard sent."""
        deadline = time.monotonic() + timeout
        tick = GLib.timeout_add(200, lambda: True)  # wakes the blocking iteration to look at the clock
        try:
            while share_id not in self.sent:
                if time.monotonic() > deadline:
                    raise AssertionError(f"share {share_id} was not sent within {timeout} s")
                GLib.MainContext.default().iteration(True)
        finally:
            GLib.source_remove(tick)
        return self.sent[share_id]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_text(server: Homeserver, session: FerrySession, room: str, alias: str, user, runs: int = 7) -> None:
    ferry = str(session.prefix / "bin" / "ferry")
    timed([ferry, "text", "warm-up", "--to", room], session)
    ferry_times = [timed([ferry, "text", f"one text {n}", "--to", room], session) for n in range(runs)]
    ferry_median = statistics.median(ferry_times)
    reference = subprocess.run([str(REPO / "scripts" / "bench-references.sh"), "matrix-commander-send", server.base_url,
                                user.user_id, user.password, alias, "5"], capture_output=True, text=True, timeout=900)
    lines = [line for line in reference.stdout.splitlines() if line.startswith("matrix-commander-send-seconds")]
    if lines:
        commander = float(lines[-1].split()[1])
        report("one `ferry text --to ROOM` until the server's 200", f"{ferry_median * 1000:.0f} ms",
               f"matrix-commander {commander * 1000:.0f} ms", f"ratio {ferry_median / commander:.3f} (target ≤ 0.1)")
    else:
        report("one `ferry text --to ROOM` until the server's 200", f"{ferry_median * 1000:.0f} ms",
               "matrix-commander: not measured", (reference.stderr.strip().splitlines() or ["?"])[-1][:60])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all its threads (/proc/PID/stat utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU of this process's reaped children: around one subprocess.run, that child's own."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Upload:
    """One 256 MiB upload: wall seconds, and the CPU seconds each party spent in that window."""

    wall: float
    client_cpu: float  # curl, or the `ferry send` command line
    server_cpu: float  # Synapse
    staging: float = 0.0  # Ferry: accepting the share (its private copy) …
    upload: float = 0.0  # … then the upload, accepted → sent
    service_cpu: float = 0.0  # Ferry's service: staging copy, hashing, HTTP (no TLS on loopback)
    peak_rss: float = 0.0


def big_attachment(server: Homeserver, new_session, room: str, user, work: Path, rounds: int = 9) -> None:
    """256 MiB through `ferry send` and through `curl -T` in paired rounds, which goes first
    alternating (the second finds the disk still busy with the first's file). The figure is the
    median of the rounds' Ferry ÷ curl ratios: single rounds still range from 0.5 to 1.5. Next
    to it the CPU seconds of Ferry's service, of the client and of Synapse in each upload's
    window, so the figure says what is Ferry's; and the service's peak RSS for 256 MiB against
    1 MiB. The rounds run twice: with memory as a desktop has it (the figure), then as this VM
    has it after a pause (`settle`), where Synapse's side alone takes 0.3 to 1.2 s and pays more
    when a disk write runs beside it: the last rounds put a copy like Ferry's beside curl."""
    files = {}
    for size_mb in (1, 256):
        files[size_mb] = work / f"blob-{size_mb}.bin"
        with open(files[size_mb], "wb") as out:
            block = os.urandom(1 << 20)
            for _ in range(size_mb):
                out.write(block)
    rss = {1: ferry_upload_measured(new_session, server, user, room, files[1], "upload-1").peak_rss}

    def paired(memory: str) -> list[tuple[Upload, Upload]]:
        pairs: list[tuple[Upload, Upload]] = []
        for round_ in range(rounds):
            curl = curl_upload_measured(server, user, files[256], memory) if round_ % 2 else None
            ferry = ferry_upload_measured(new_session, server, user, room, files[256], f"upload-256-{memory}-{round_}", memory)
            rss[256] = max(rss.get(256, 0.0), ferry.peak_rss)
            pairs.append((ferry, curl or curl_upload_measured(server, user, files[256], memory)))
        return pairs

    def median(values) -> float:
        return statistics.median(list(values))

    pairs = paired("warm")
    ratios = [ferry.wall / curl.wall for ferry, curl in pairs]
    ferry, curl = sorted(pairs, key=lambda pair: pair[0].wall / pair[1].wall)[rounds // 2]  # the median round
    report("256 MiB attachment, median of round ratios", f"{statistics.median(ratios):.2f}",
           "`ferry send` wall ÷ curl -T", "target ≤ 1.2")
    report("  wall ratio in each round", " ".join(f"{r:.2f}" for r in ratios), "(curl first in odd rounds)")
    report("  the median round: `ferry send` wall", f"{ferry.wall:.2f} s", f"curl -T {curl.wall:.2f} s")
    report("  … of which the private copy (staging)", f"{ferry.staging:.2f} s")
    report("  … of which the upload, accepted → sent", f"{ferry.upload:.2f} s", f"ratio {ferry.upload / curl.wall:.2f}")
    report("  upload ratio in each round", " ".join(f"{f.upload / c.wall:.2f}" for f, c in pairs))
    report("CPU in Ferry's window (median): service", f"{median(f.service_cpu for f, _ in pairs):.2f} s",
           f"Synapse {median(f.server_cpu for f, _ in pairs):.2f} s", f"ferry CLI {median(f.client_cpu for f, _ in pairs):.2f} s")
    report("CPU in curl's window (median): curl", f"{median(c.client_cpu for _, c in pairs):.2f} s",
           f"Synapse {median(c.server_cpu for _, c in pairs):.2f} s")
    report("  service CPU in each round", " ".join(f"{f.service_cpu:.2f}" for f, _ in pairs))
    report("  service CPU ÷ Ferry's wall, median", f"{median(f.service_cpu / f.wall for f, _ in pairs) * 100:.0f} %",
           "of one core")
    cold = paired("cold")
    cold_ratios = [ferry.wall / curl.wall for ferry, curl in cold]
    report("256 MiB, memory just given back to the VM's host: median ratio", f"{statistics.median(cold_ratios):.2f}",
           f"curl -T median {median(c.wall for _, c in cold):.2f} s", "(no target: the host's page faults, see settle)")
    report("  wall ratio in each round", " ".join(f"{r:.2f}" for r in cold_ratios))
    report("  Synapse CPU, median: Ferry's window", f"{median(f.server_cpu for f, _ in cold):.2f} s",
           f"curl's {median(c.server_cpu for _, c in cold):.2f} s")
    # What Ferry does there and curl does not: the private copy, written to the disk beside the
    # upload. The same copy beside curl, as long as Ferry's took (median), in rounds of their own.
    copy_seconds = median(f.staging for f, _ in cold)
    beside = []
    for round_ in range(rounds):
        alone = curl_upload_measured(server, user, files[256], "cold") if round_ % 2 else None
        with_copy = curl_upload_measured(server, user, files[256], "cold", work / "beside.bin", copy_seconds)
        beside.append((with_copy, alone or curl_upload_measured(server, user, files[256], "cold")))
    report("  curl -T with a direct copy of the file written beside it", f"{median(w.wall / a.wall for w, a in beside):.2f}",
           f"over {copy_seconds:.2f} s; Synapse CPU {median(w.server_cpu for w, _ in beside):.2f} s",
           f"alone {median(a.server_cpu for _, a in beside):.2f} s")
    report("256 MiB attachment, peak service RSS", f"{rss[256]:.1f} MB", "", "target ≤ 40 MB")
    report("peak service RSS, 256 MiB − 1 MiB", f"{rss[256] - rss[1]:+.1f} MB", f"1 MiB: {rss[1]:.1f} MB", "target ≤ 5 MB")


def ferry_upload_measured(new_session, server: Homeserver, user, room: str, path: Path, name: str,
                          memory: str = "warm") -> Upload:
    """One file through `ferry send` in a service of its own (VmHWM only grows)."""
    session = new_session(name)
    sign_in(session, server, user)
    pid = session.name_owner_pid()
    watcher = SentWatcher(session)
    settle(memory)
    service_cpu, server_cpu, client_cpu = cpu_seconds(pid), cpu_seconds(server.process.pid), children_cpu()
    started = time.perf_counter()
    # Accepting the share makes Ferry's private copy first (durability); the upload follows.
    done = session.run(str(session.prefix / "bin" / "ferry"), "send", str(path), "--to", room, "--no-wait", timeout=600)
    assert done.returncode == 0, done.stderr
    accepted = time.perf_counter()
    sent = watcher.wait(done.stdout.strip())
    measured = Upload(wall=sent - started, client_cpu=children_cpu() - client_cpu,
                      server_cpu=cpu_seconds(server.process.pid) - server_cpu, staging=accepted - started,
                      upload=sent - accepted, service_cpu=cpu_seconds(pid) - service_cpu, peak_rss=peak_rss_mb(pid))
    session.stop()
    return measured


def settle(memory: str = "warm") -> None:
    """Starts a measurement from the same memory state as the others.

    On this VM (Firecracker, with free page reporting) memory the guest frees goes back to the
    host after ~2 s, and writing into it again costs a host fault per page. Synapse writes every
    upload twice into the page cache (its temporary file, then the media store: 512 MiB for a
    256 MiB file), so how many of those pages come fresh from the host decides whether its side
    takes 0.3 s or 1.2 s, for either client, from one round to the next. A desktop keeps its
    memory and never pays that.

    Both states start after 3 s of quiet: earlier writes on the disk, earlier frees given back.
    "cold" measures from there (the second of a pair no longer finds the first's freed pages
    still at hand). "warm" then takes 2 GiB from the host and frees them: for the next ~2 s (an
    upload here takes 0.5-0.7 s) the pages the upload gets are the machine's own, as on a
    desktop. Single rounds still vary (0.5-1.5 times curl), the median of nine far less than
    from the other state (0.99-1.14 in four runs, against 1.18-1.47)."""
    os.sync()  # the sample file's dirty pages must not be written back during the measurement
    time.sleep(3)
    if memory == "warm":
        size, step = 2 << 30, 1 << 20
        block = b"\1" * step
        with mmap.mmap(-1, size) as pages:
            for offset in range(0, size, step):
                pages[offset:offset + step] = block


def curl_upload(server: Homeserver, user, path: Path) -> float:
    return curl_upload_measured(server, user, path).wall


def curl_upload_measured(server: Homeserver, user, path: Path, memory: str = "warm", copy_to: Path | None = None,
                         copy_seconds: float = 0.3) -> Upload:
    """`copy_to`: meanwhile a copy of the file is written there, as Ferry's private copy is, over
    `copy_seconds`. The figures are curl's own: taken when curl exits."""
    settle(memory)
    server_cpu, client_cpu = cpu_seconds(server.process.pid), children_cpu()
    failures: list[BaseException] = []

    def copy() -> None:
        try:
            direct_copy(path, copy_to, copy_seconds)
        except BaseException as error:  # noqa: BLE001 (raised again below, in the bench's thread)
            failures.append(error)

    copier = threading.Thread(target=copy) if copy_to else None
    started = time.perf_counter()
    if copier:
        copier.start()
    subprocess.run(["curl", "-sS", "-o", "/dev/null", "-T", str(path), "-X", "POST", "-H", f"Authorization: Bearer {user.token}",
                    "-H", "Content-Type: application/octet-stream",
                    f"{server.base_url}/_matrix/media/v3/upload?filename=blob.bin"], check=True)
    measured = Upload(wall=time.perf_counter() - started, client_cpu=children_cpu() - client_cpu,
                      server_cpu=cpu_seconds(server.process.pid) - server_cpu)
    if copier:
        copier.join()
        if failures:
            raise RuntimeError(f"the copy beside curl failed: {failures[0]}") from failures[0]
        copy_to.unlink()
    return measured


def direct_copy(source: Path, target: Path, seconds: float) -> None:
    """Copies `source` past the page cache in 1 MiB writes as DirectCopy does (a tail of less
    than a chunk through the page cache), spread evenly over `seconds`."""
    chunk = 1 << 20
    size = source.stat().st_size
    with mmap.mmap(-1, chunk) as buffer, open(source, "rb", buffering=0) as reader:  # page-aligned, as O_DIRECT wants
        writer = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
        try:
            started, copied = time.perf_counter(), 0
            while count := reader.readinto(buffer):
                if count < chunk:
                    fcntl.fcntl(writer, fcntl.F_SETFL, fcntl.fcntl(writer, fcntl.F_GETFL) & ~os.O_DIRECT)
                    os.write(writer, buffer[:count])
                else:
                    os.write(writer, buffer)
                copied += count
                time.sleep(max(0.0, started + seconds * copied / size - time.perf_counter()))
            os.fsync(writer)
        finally:
            os.close(writer)


def drain(server: Homeserver, new_session, count: int = 1000, rounds: int = 3) -> None:
    """The same number of events from a kept-alive raw client and from Ferry's queue, in alternating
    rounds: this machine's speed drifts by a third from one minute to the next, so one pair of runs
    says little; the median of the rounds' ratios is the figure."""
    ratios, raws, ferries = [], [], []
    for round_ in range(rounds):
        raws.append(raw_drain(server, count, round_))
        ferries.append(ferry_drain(server, new_session, count, round_))
        ratios.append(ferries[-1] / raws[-1])
    middle = sorted(range(rounds), key=lambda i: ratios[i])[rounds // 2]
    report(f"{count:,} queued texts drained", f"{ferries[middle]:.2f} s", f"keep-alive raw client {raws[middle]:.2f} s",
           f"ratio {ratios[middle]:.2f} (target ≤ 1.2)")
    report("  ratio in each round", " ".join(f"{r:.2f}" for r in ratios))


def raw_drain(server: Homeserver, count: int, round_: int) -> float:
    user = server.new_user(f"drainref{round_}")
    room = server.create_room(user.token, name="Reference")
    client = server.raw_client()
    started = time.perf_counter()
    for n in range(count):
        client.send_text(user.token, room, f"reference {n}", f"ref-{n}")
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed


def ferry_drain(server: Homeserver, new_session, count: int, round_: int) -> float:
    user = server.new_user(f"drain{round_}")
    room = server.create_room(user.token, name="Drain")
    session = new_session(f"drain{round_}")
    share_ids = [session.share_ok(text=f"drain {n}", destinations=[room]) for n in range(count)]
    watcher = SentWatcher(session)
    started = time.perf_counter()
    sign_in(session, server, user)
    # Shares are sent oldest first: the last one sent ends the drain. The room is read once the
    # clock has stopped, to check that every message is there, once.
    elapsed = watcher.wait(share_ids[-1]) - started
    delivered = server.messages(user.token, room)
    assert len(delivered) == count, f"{len(delivered)} messages in the room, expected {count}"
    assert {e["content"]["body"] for e in delivered} == {f"drain {n}" for n in range(count)}
    session.stop()
    return elapsed


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    only = set(sys.argv[2:]) or {"text", "upload", "drain"}
    with tempfile.TemporaryDirectory(prefix="ferry-bench-sender-") as temp:
        work = Path(temp)
        server = Homeserver(work / "synapse", max_upload_size="1G").start()
        sessions: list[FerrySession] = []

        def new_session(name: str, **env: str) -> FerrySession:
            # The service's own default log level (the test sessions' debug logs every request part).
            session = FerrySession(prefix=prefix, root=work / name, extra_env={"FERRY_LOG": "info", **env}).start()
            sessions.append(session)
            return session

        try:
            print(f"Ferry sender figures (Synapse {server.base_url}):")
            user = server.new_user("bench")
            alias = "bench-room"
            room = server.create_room(user.token, name="Bench", alias_localpart=alias, preset="public_chat")
            if "text" in only:
                session = new_session("text")
                sign_in(session, server, user)
                one_text(server, session, room, f"#{alias}:{server.server_name}", user)
            if "upload" in only:
                big_attachment(server, new_session, room, user, work)
            if "drain" in only:
                drain(server, new_session)
        finally:
            for session in sessions:
                session.stop()
            server.stop()


if __name__ == "__main__":
    main()
