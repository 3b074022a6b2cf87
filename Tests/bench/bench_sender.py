"""The sender's figures (issue: sign-in step and in-process sender), measured side by side in one
run against a real Synapse on loopback. Prints figures, references and ratios; never fails on time.

    python Tests/bench/bench_sender.py PREFIX [text|upload|drain …]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

from ferryenv import FerrySession, wait_for  # noqa: E402
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


def big_attachment(server: Homeserver, new_session, room: str, user, work: Path, sizes=(1, 256)) -> None:
    rss, wall, upload, staging = {}, {}, {}, {}
    for size_mb in sizes:
        path = work / f"blob-{size_mb}.bin"
        with open(path, "wb") as out:
            block = os.urandom(1 << 20)
            for _ in range(size_mb):
                out.write(block)
        # A service of its own for each size: the peak RSS (VmHWM) only grows.
        session = new_session(f"upload{size_mb}")
        sign_in(session, server, user)
        pid = session.name_owner_pid()
        # Accepting the share makes Ferry's private copy first (durability); the upload follows.
        os.sync()  # the sample file's dirty pages must not be written back during the measurement
        started = time.perf_counter()
        done = session.run(str(session.prefix / "bin" / "ferry"), "send", str(path), "--to", room, "--no-wait", timeout=600)
        assert done.returncode == 0, done.stderr
        accepted = time.perf_counter()
        share_id = done.stdout.strip()
        wait_for(lambda: session.get_share(share_id)["state"] == "sent", timeout=600, interval=0.05, what="the upload")
        wall[size_mb] = time.perf_counter() - started
        upload[size_mb] = time.perf_counter() - accepted
        staging[size_mb] = accepted - started
        rss[size_mb] = peak_rss_mb(pid)
        session.stop()
    big = work / "blob-256.bin"
    os.sync()
    started = time.perf_counter()
    subprocess.run(["curl", "-sS", "-o", "/dev/null", "-T", str(big), "-X", "POST", "-H", f"Authorization: Bearer {user.token}",
                    "-H", "Content-Type: application/octet-stream",
                    f"{server.base_url}/_matrix/media/v3/upload?filename=blob.bin"], check=True)
    curl = time.perf_counter() - started
    report("256 MiB attachment, `ferry send` wall", f"{wall[256]:.2f} s", f"curl -T {curl:.2f} s",
           f"ratio {wall[256] / curl:.2f} (target ≤ 1.2)")
    report("… of which the private copy (staging)", f"{staging[256]:.2f} s", "", "")
    report("… of which the upload, accepted → sent", f"{upload[256]:.2f} s", f"curl -T {curl:.2f} s",
           f"ratio {upload[256] / curl:.2f}")
    report("256 MiB attachment, peak service RSS", f"{rss[256]:.1f} MB", "", "target ≤ 40 MB")
    report("peak service RSS, 256 MiB − 1 MiB", f"{rss[256] - rss[1]:+.1f} MB", f"1 MiB: {rss[1]:.1f} MB", "target ≤ 5 MB")
    for size_mb in sizes:
        if size_mb not in (1, 256):
            report(f"peak service RSS, {size_mb} MiB", f"{rss[size_mb]:.1f} MB", f"wall {wall[size_mb]:.2f} s")


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
    session = new_session(f"drain{round_}", FERRY_LOG="notice")
    for n in range(count):
        session.share_ok(text=f"drain {n}", destinations=[room])
    started = time.perf_counter()
    sign_in(session, server, user)
    # Shares are sent oldest first, so the last one arriving ends the drain. Polling only the newest
    # message keeps the poll from loading the server being measured (reading the whole timeline
    # five times a second did); the count is checked once the clock has stopped.
    last = f"drain {count - 1}"
    deadline = time.monotonic() + 600
    while (server.latest_message(user.token, room) or {}).get("content", {}).get("body") != last:
        if time.monotonic() > deadline:
            raise AssertionError(f"{last!r} did not arrive in 600 s")
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    delivered = server.messages(user.token, room)
    assert len(delivered) == count, f"{len(delivered)} messages in the room, expected {count}"
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
            session = FerrySession(prefix=prefix, root=work / name, extra_env=env).start()
            sessions.append(session)
            return session

        try:
            print(f"Ferry sender figures (Synapse {server.base_url}):")
            user = server.new_user("bench")
            alias = "bench-room"
            room = server.create_room(user.token, name="Bench", alias_localpart=alias, preset="public_chat")
            if "text" in only:
                session = new_session("text", FERRY_LOG="notice")
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
