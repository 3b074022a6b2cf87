"""ferry-ui's figures (issue: the share dialog), measured under Xvfb on a private session bus.
Prints each figure with its target; never fails on time.

    python Tests/bench/bench_ui.py PREFIX [RUNS]

- start → first frame: from starting `ferry-ui --share ID` (what the service does when a share
  needs a person) to the dialog's first frame drawn (GdkFrameClock after-paint), read from
  ferry-ui's FERRY_LOG=debug line on the same CLOCK_MONOTONIC as time.monotonic(). Each run is a
  cold start of ferry-ui.
- ferry-ui's RSS with the dialog open, GSK_RENDERER=cairo.
- the service's RSS idle before any dialog and with a dialog open (the dialog lives in its own
  process, so this should not move).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))

from ferryenv import FerrySession, file_uri, wait_for, write_png  # noqa: E402
from uidesktop import UI_RELATIVE_PATH, start_xvfb  # noqa: E402

FIRST_FRAME = re.compile(r"first frame: (\S+) at ([0-9.]+)")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def report(name: str, value: str, target: str) -> None:
    print(f"  {name:<52} {value:>14}   (target {target})", flush=True)


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    ui_binary = prefix / UI_RELATIVE_PATH
    print(f"ferry-ui figures ({ui_binary}):")
    xvfb, display = start_xvfb()
    with tempfile.TemporaryDirectory(prefix="ferry-bench-ui-") as tmp:
        session = FerrySession(prefix=prefix, root=Path(tmp) / "session").start()
        try:
            # A first share starts the service; let it settle before reading its idle RSS.
            first = session.share(uris=[file_uri(write_png(session.files / "warm.png"))]).expect_ok()
            session.gdbus_call("Cancel", __import__("ferryenv").variant("s", first)).expect_ok()
            time.sleep(1.0)
            service_pid = session.name_owner_pid()
            service_idle = rss_mb(service_pid)

            env = dict(session.env, DISPLAY=display, GSK_RENDERER="cairo", GDK_BACKEND="x11", GTK_A11Y="none",
                       FERRY_LOG="debug")
            latencies, ui_rss, service_with_dialog = [], [], []
            for run in range(runs):
                picture = write_png(session.files / f"bench{run}.png", seed=run)
                share_id = session.share(uris=[file_uri(picture)]).expect_ok()
                log_path = Path(tmp) / f"ui{run}.log"
                with open(log_path, "wb") as log:
                    started = time.monotonic()
                    process = subprocess.Popen([str(ui_binary), "--share", share_id], env=env, stdout=log,
                                               stderr=log, stdin=subprocess.DEVNULL)
                match = wait_for(lambda: FIRST_FRAME.search(log_path.read_text(errors="replace")), timeout=30,
                                 interval=0.005, what="ferry-ui's first frame")
                latencies.append((float(match.group(2)) - started) * 1000)
                time.sleep(1.0)  # the destination list or sign-in page settled
                ui_rss.append(rss_mb(process.pid))
                service_with_dialog.append(rss_mb(service_pid))
                process.terminate()
                process.wait(timeout=10)
                session.gdbus_call("Cancel", __import__("ferryenv").variant("s", share_id))

            report("ferry-ui start → first frame, median", f"{statistics.median(latencies):.0f} ms", "≤ 300 ms")
            report("ferry-ui start → first frame, max", f"{max(latencies):.0f} ms", "—")
            report("ferry-ui RSS with the dialog open (cairo), median", f"{statistics.median(ui_rss):.1f} MB",
                   "≤ 100 MB")
            report("service RSS idle, before any dialog", f"{service_idle:.1f} MB", "≤ 16 MB")
            report("service RSS with a dialog open, median", f"{statistics.median(service_with_dialog):.1f} MB",
                   "unchanged")
        finally:
            session.stop()
            xvfb.kill()
            xvfb.wait(timeout=10)


if __name__ == "__main__":
    main()
