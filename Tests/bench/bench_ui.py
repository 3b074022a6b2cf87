"""ferry-ui's figures (issue: the share dialog), measured under Xvfb on a private session bus.
Prints each figure with its target; never fails on time.

    python Tests/bench/bench_ui.py PREFIX [RUNS]

- Open → first frame: from calling `gio open FILE` (Ferry the default for PNG: D-Bus Open, the
  file staged, the share committed, the service starting `ferry-ui --share ID` by itself) to the
  dialog's first frame drawn (GdkFrameClock after-paint), read from ferry-ui's FERRY_LOG=debug
  line on the same CLOCK_MONOTONIC as time.monotonic(). Each run is a cold start of ferry-ui; the
  service is running (the first run also activates it, reported apart).
- ferry-ui's RSS with the dialog open, GSK_RENDERER=cairo (no accessibility bus runs here).
- the service's RSS idle before any dialog and with a dialog open (the dialog lives in its own
  process, so this should not move).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))

from ferryenv import APP_ID, FerrySession, variant, wait_for, write_png  # noqa: E402
from uidesktop import UI_RELATIVE_PATH, start_xvfb  # noqa: E402

import bench_service  # noqa: E402  (private_memory_mb)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def report(name: str, value: str, target: str) -> None:
    print(f"  {name:<52} {value:>14}   (target {target})", flush=True)


def ui_pids(session: FerrySession, binary: Path) -> list[int]:
    found = []
    for pid in session.processes_in_session():
        try:
            if Path(os.readlink(f"/proc/{pid}/exe")) == binary:
                found.append(pid)
        except OSError:
            continue
    return found


def open_and_wait_for_frame(session: FerrySession, path: Path) -> tuple[str, float]:
    """`gio open` a file; returns the new share's id and milliseconds to its dialog's first frame."""
    before = set(session.share_ids()) if session.service_running() else set()
    log_offset = session.log_path.stat().st_size
    started = time.monotonic()
    done = session.run("gio", "open", path)
    assert done.returncode == 0, done.stderr
    [share_id] = wait_for(lambda: set(session.share_ids()) - before, timeout=30, what="the new share")
    pattern = re.compile(rf"first frame: {re.escape(share_id)} at ([0-9.]+)")

    def frame():
        with open(session.log_path, "rb") as log:
            log.seek(log_offset)
            return pattern.search(log.read().decode(errors="replace"))

    match = wait_for(frame, timeout=30, interval=0.005, what="the dialog's first frame")
    return share_id, (float(match.group(1)) - started) * 1000


def measure(prefix: Path, runs: int) -> dict:
    """One cold dialog (the service activated too), then `runs` dialogs with the service running.
    Also used by bench_check.py (the dialog's RSS in Tests/bench/budget.json)."""
    ui_binary = (prefix / UI_RELATIVE_PATH).resolve()
    xvfb, display = start_xvfb()
    with tempfile.TemporaryDirectory(prefix="ferry-bench-ui-") as tmp:
        # The bus's environment is the service's, and so the dialog's: a display, the cairo
        # renderer, no accessibility bus (GTK_A11Y=none, as nothing here reads it).
        session = FerrySession(prefix=prefix, root=Path(tmp) / "session",
                               extra_env={"DISPLAY": display, "GSK_RENDERER": "cairo", "GDK_BACKEND": "x11",
                                          "GTK_A11Y": "none"}).start()
        try:
            assert session.run("xdg-mime", "default", f"{APP_ID}.desktop", "image/png").returncode == 0
            figures = {"latencies": [], "ui_rss": [], "ui_private": [], "service_with_dialog": [], "cold": None,
                       "service_idle": None}
            for run in range(runs + 1):
                picture = write_png(session.files / f"bench{run}.png", seed=run)
                share_id, latency = open_and_wait_for_frame(session, picture)
                time.sleep(1.0)  # the sign-in page settled
                [pid] = ui_pids(session, ui_binary)
                service_pid = session.name_owner_pid()
                if run == 0:
                    figures["cold"] = latency
                else:
                    figures["latencies"].append(latency)
                    figures["ui_rss"].append(rss_mb(pid))
                    figures["ui_private"].append(bench_service.private_memory_mb(pid))
                    figures["service_with_dialog"].append(rss_mb(service_pid))
                # Cancel closes the dialog; ferry-ui exits with its last window.
                session.gdbus_call("Cancel", variant("s", share_id)).expect_ok()
                wait_for(lambda: not ui_pids(session, ui_binary), timeout=10, what="ferry-ui to exit")
                if run == 0:
                    time.sleep(1.0)
                    figures["service_idle"] = rss_mb(service_pid)
            return figures
        finally:
            session.stop()
            xvfb.kill()
            xvfb.wait(timeout=10)


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    print(f"ferry-ui figures ({(prefix / UI_RELATIVE_PATH).resolve()}):")
    figures = measure(prefix, runs)
    latencies = figures["latencies"]
    report("gio open → dialog's first frame, median", f"{statistics.median(latencies):.0f} ms", "≤ 300 ms")
    report("gio open → dialog's first frame, max", f"{max(latencies):.0f} ms", "—")
    report("… the same with the service cold-activated", f"{figures['cold']:.0f} ms", "—")
    report("ferry-ui RSS with the dialog open (cairo), median", f"{statistics.median(figures['ui_rss']):.1f} MB",
           "≤ 100 MB")
    uss = statistics.median(sample["uss"] for sample in figures["ui_private"])
    report("… its unique set size (private pages), median", f"{uss:.1f} MB", "—")
    report("service RSS, no dialog open", f"{figures['service_idle']:.1f} MB", "≤ 16 MB")
    report("service RSS with a dialog open, median", f"{statistics.median(figures['service_with_dialog']):.1f} MB",
           "unchanged")


if __name__ == "__main__":
    main()
