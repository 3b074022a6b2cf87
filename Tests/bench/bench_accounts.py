"""What a second account costs the service at rest: VmRSS and RssAnon a few seconds after a text
was sent with one account signed in, and again after a second account (on a second Synapse)
signed in and sent one. Prints the figures; never fails (the issue's budget: within 1 MB).

    python Tests/bench/bench_accounts.py PREFIX [RUNS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

from ferryenv import FerrySession  # noqa: E402
from homeserver import Homeserver  # noqa: E402
from matrixflow import sign_in  # noqa: E402

# Long enough for the service to have gone quiet (Lifetime releases its code 0.5 to 1 s after the last call).
SETTLE_SECONDS = 4


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, RssAnon) in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["RssAnon"].split()[0]) / 1024


def send(session: FerrySession, text: str, room: str, account: str) -> None:
    done = session.ferry("text", text, "--to", room, "--account", account, timeout=120)
    assert done.returncode == 0, done.stderr


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 64
    prefix = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) == 3 else 5
    one, two = [], []
    with tempfile.TemporaryDirectory(prefix="ferry-bench-accounts-") as temp:
        work = Path(temp)
        first = Homeserver(work / "first").start()
        second = Homeserver(work / "second", server_name="second.test").start()
        try:
            ann, bo = first.new_user("ann"), second.new_user("bo")
            ann_room = first.create_room(ann.token, name="Ann")
            bo_room = second.create_room(bo.token, name="Bo")
            for run in range(runs):
                session = FerrySession(prefix=prefix, root=work / f"run{run}", extra_env={"FERRY_LOG": "notice"}).start()
                try:
                    sign_in(session, first, ann)
                    send(session, f"one account, run {run}", ann_room, ann.user_id)
                    pid = session.name_owner_pid()
                    time.sleep(SETTLE_SECONDS)
                    one.append(memory_mb(pid))
                    sign_in(session, second, bo)
                    send(session, f"two accounts, run {run}", bo_room, bo.user_id)
                    assert session.name_owner_pid() == pid, "the service restarted between the figures"
                    time.sleep(SETTLE_SECONDS)
                    two.append(memory_mb(pid))
                finally:
                    session.stop()
        finally:
            first.stop()
            second.stop()

    def median(values: list[tuple[float, float]], index: int) -> float:
        return statistics.median(v[index] for v in values)

    print(f"idle after sending, {runs} runs (medians):")
    print(f"  one account   VmRSS {median(one, 0):6.1f} MB  RssAnon {median(one, 1):6.1f} MB")
    print(f"  two accounts  VmRSS {median(two, 0):6.1f} MB  RssAnon {median(two, 1):6.1f} MB")
    print(f"  difference    VmRSS {median(two, 0) - median(one, 0):+6.1f} MB  "
          f"RssAnon {median(two, 1) - median(one, 1):+6.1f} MB  (budget: within 1 MB)")
    print("  runs: " + "; ".join(f"{a[0]:.1f}/{a[1]:.1f} → {b[0]:.1f}/{b[1]:.1f}" for a, b in zip(one, two)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
