"""Encryption's figures (issue: end-to-end encryption), side by side in one run against a real
Synapse on loopback: the same work into a plain room and into an encrypted one. Prints figures,
references and ratios; never fails on time.

    python Tests/bench/bench_encryption.py PREFIX [shared|first|upload|cli …]

Readers are raw devices (keys made with vodozemac, uploaded over plain HTTP): Ferry queries,
claims and shares to them as to any client's device.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))
sys.path.insert(0, str(HERE))

from bench_sender import REPO, SentWatcher, curl_upload, peak_rss_mb, report, settle, timed  # noqa: E402
from cryptopeers import Vodozemac, device_keys, signed  # noqa: E402
from ferryenv import FerrySession  # noqa: E402
from homeserver import Homeserver  # noqa: E402
from matrixflow import sign_in  # noqa: E402


def reader_devices(server: Homeserver, users: list, per_user: int) -> None:
    """`per_user` devices for each user, each with signed device keys and one-time keys."""
    for user in users:
        for _ in range(per_user):
            peer = Vodozemac()
            token, device = server.login(user.user_id, user.password)
            keys = {f"signed_curve25519:AAAA{n:02d}": signed(peer, user.user_id, device, {"key": peer.one_time_key()})
                    for n in range(2)}
            server.call("POST", "/_matrix/client/v3/keys/upload", token,
                        json_body={"device_keys": device_keys(peer, user.user_id, device), "one_time_keys": keys})


def room_with(server: Homeserver, owner, members: list, encrypted: bool, alias: str | None = None) -> str:
    room = server.create_room(owner.token, name="Bench", encrypted=encrypted, invite=[m.user_id for m in members],
                              alias_localpart=alias, room_version="11")
    for member in members:
        server.join(member.token, room)
    return room


def share_time(session: FerrySession, watcher: SentWatcher, room: str, text: str) -> float:
    """From the Share call to the server's 200 for its event (the service's own time)."""
    started = time.perf_counter()
    share_id = session.share_ok(text=text, destinations=[room])
    return watcher.wait(share_id) - started


def shared_session(server: Homeserver, session: FerrySession, me, reader, rounds: int = 15) -> None:
    """A text into an encrypted room whose session is shared already, against a plain room."""
    plain = room_with(server, me, [reader], encrypted=False)
    secret = room_with(server, me, [reader], encrypted=True)
    watcher = SentWatcher(session)
    share_time(session, watcher, plain, "warm-up")
    share_time(session, watcher, secret, "warm-up: the session is shared")
    plains, secrets = [], []
    for n in range(rounds):
        plains.append(share_time(session, watcher, plain, f"plain {n}"))
        secrets.append(share_time(session, watcher, secret, f"secret {n}"))
    ratios = [s / p for s, p in zip(secrets, plains)]
    report("text, encrypted room, session shared (Share → 200)", f"{statistics.median(secrets) * 1000:.1f} ms",
           f"plain room {statistics.median(plains) * 1000:.1f} ms", f"ratio {statistics.median(ratios):.2f} (target ≤ 1.2)")


def first_text(server: Homeserver, session: FerrySession, me, rounds: int = 5) -> None:
    """The first text into an encrypted room whose members have 20 devices (keys queried, claimed
    and shared: new people each round, so no Olm session exists yet), against the first text
    into a plain room with the same members."""
    watcher = SentWatcher(session)
    plains, secrets = [], []
    for n in range(rounds):
        members = [server.new_user(f"member{n}x{m}") for m in range(4)]
        reader_devices(server, members, 5)
        plains.append(share_time(session, watcher, room_with(server, me, members, encrypted=False), f"first plain {n}"))
        secrets.append(share_time(session, watcher, room_with(server, me, members, encrypted=True), f"first secret {n}"))
    ratios = [s / p for s, p in zip(secrets, plains)]
    report("first text, encrypted room, members' 20 devices", f"{statistics.median(secrets) * 1000:.1f} ms",
           f"plain room {statistics.median(plains) * 1000:.1f} ms", f"ratio {statistics.median(ratios):.2f} (target ≤ 3)")
    report("  ratio in each round", " ".join(f"{r:.2f}" for r in ratios))


def big_attachment(server: Homeserver, new_session, me, reader, work: Path, rounds: int = 5) -> None:
    """256 MiB into an encrypted room (encrypted as it streams) against `curl -T` of the same
    size, alternating; and the service's peak RSS for 256 MiB against 1 MiB."""
    room = room_with(server, me, [reader], encrypted=True)
    files = {}
    for size_mb in (1, 256):
        files[size_mb] = work / f"secret-{size_mb}.bin"
        with open(files[size_mb], "wb") as out:
            block = bytes(range(256)) * 4096
            for _ in range(size_mb):
                out.write(block)
    rss = {1: upload(new_session, server, me, room, files[1], "enc-upload-1")[1]}
    runs = []
    for round_ in range(rounds):
        curl = curl_upload(server, me, files[256]) if round_ % 2 else None
        wall, peak = upload(new_session, server, me, room, files[256], f"enc-upload-256-{round_}")
        rss[256] = max(rss.get(256, 0.0), peak)
        runs.append((wall, curl if curl is not None else curl_upload(server, me, files[256])))
    ratios = [wall / curl for wall, curl in runs]
    wall, curl = sorted(runs, key=lambda run: run[0] / run[1])[rounds // 2]
    report("256 MiB encrypted attachment, `ferry send` wall", f"{wall:.2f} s", f"curl -T {curl:.2f} s",
           f"ratio {wall / curl:.2f} (target ≤ 1.3)")
    report("  wall ratio in each round", " ".join(f"{r:.2f}" for r in ratios))
    report("256 MiB encrypted attachment, peak service RSS", f"{rss[256]:.1f} MB", f"1 MiB: {rss[1]:.1f} MB",
           "target ≤ 40 MB, flat")


def upload(new_session, server: Homeserver, user, room: str, path: Path, name: str) -> tuple[float, float]:
    session = new_session(name)
    sign_in(session, server, user)
    pid = session.name_owner_pid()
    watcher = SentWatcher(session)
    # The device's keys go up at sign-in, in the background: not part of the figure.
    time.sleep(1)
    settle("warm")  # as curl_upload's reference is (bench_sender.settle)
    started = time.perf_counter()
    done = session.run(str(session.prefix / "bin" / "ferry"), "send", str(path), "--to", room, "--no-wait", timeout=600)
    assert done.returncode == 0, done.stderr
    sent = watcher.wait(done.stdout.strip())
    peak = peak_rss_mb(pid)
    session.stop()
    return sent - started, peak


def cli_against_matrix_commander(server: Homeserver, session: FerrySession, me, reader, runs: int = 7) -> None:
    """One encrypted text with `ferry text`, until it exits after the server's 200, against
    matrix-commander (nio 0.26, vodozemac) sending into the same encrypted room."""
    alias = "bench-secret"
    room = room_with(server, me, [reader], encrypted=True, alias=alias)
    ferry = str(session.prefix / "bin" / "ferry")
    timed([ferry, "text", "warm-up", "--to", room], session)
    ferry_median = statistics.median(timed([ferry, "text", f"encrypted {n}", "--to", room], session) for n in range(runs))
    reference = subprocess.run([str(REPO / "scripts" / "bench-references.sh"), "matrix-commander-send", server.base_url,
                                me.user_id, me.password, f"#{alias}:{server.server_name}", "5"],
                               capture_output=True, text=True, timeout=900)
    lines = [line for line in reference.stdout.splitlines() if line.startswith("matrix-commander-send-seconds")]
    if lines:
        commander = float(lines[-1].split()[1])
        report("one encrypted `ferry text` until the server's 200", f"{ferry_median * 1000:.0f} ms",
               f"matrix-commander {commander * 1000:.0f} ms", f"ratio {ferry_median / commander:.3f} (target ≤ 0.1)")
    else:
        report("one encrypted `ferry text` until the server's 200", f"{ferry_median * 1000:.0f} ms",
               "matrix-commander: not measured", (reference.stderr.strip().splitlines() or ["?"])[-1][:60])


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    only = set(sys.argv[2:]) or {"shared", "first", "upload", "cli"}
    with tempfile.TemporaryDirectory(prefix="ferry-bench-e2ee-") as temp:
        work = Path(temp)
        server = Homeserver(work / "synapse", max_upload_size="1G").start()
        sessions: list[FerrySession] = []

        def new_session(name: str, **env: str) -> FerrySession:
            session = FerrySession(prefix=prefix, root=work / name, extra_env={"FERRY_LOG": "info", **env}).start()
            sessions.append(session)
            return session

        try:
            print(f"Ferry encryption figures (Synapse {server.base_url}):")
            me = server.new_user("bench")
            reader = server.new_user("reader")
            reader_devices(server, [reader], 1)
            session = new_session("e2ee")
            sign_in(session, server, me)
            if "shared" in only:
                shared_session(server, session, me, reader)
            if "first" in only:
                first_text(server, session, me)
            if "upload" in only:
                big_attachment(server, new_session, me, reader, work)
            if "cli" in only:
                cli_against_matrix_commander(server, session, me, reader)
        finally:
            for session in sessions:
                session.stop()
            server.stop()


if __name__ == "__main__":
    main()
