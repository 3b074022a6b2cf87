"""Pictures (issue: captions, thumbnails, media info): what making a thumbnail costs. The time and
peak memory of ferry-thumbnail for a 24-megapixel JPEG and a 4K PNG (goal for the JPEG: under
150 ms and 60 MB), of ferry-media for a phone's 1080p video and a song, and how much longer a photo's share takes with its thumbnail than the same share
from an install without the helper (which sends the photo bare). Pictures are drawn by ImageMagick
(fractal noise: they compress like photos, not like flat colour). Prints figures; never fails on time.

    python Tests/bench/bench_pictures.py PREFIX
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

from ferryenv import FerrySession  # noqa: E402
from homeserver import Homeserver  # noqa: E402
from matrixflow import sign_in  # noqa: E402


def report(name: str, value: str, reference: str = "", target: str = "") -> None:
    print(f"  {name:<50} {value:>12}  {reference:<28} {target}", flush=True)


def draw(path: Path, size: str, kind: str, *options: str) -> Path:
    subprocess.run(["convert", "-seed", "7", "-size", size, "plasma:fractal", *options, f"{kind}:{path}"], check=True)
    return path


def helper_run(helper: Path, picture: Path, thumbnail: Path) -> tuple[float, float]:
    """(seconds, peak resident MB) of one run of the helper. The peak is GNU time's: wait4 from this
    Python would count the interpreter's own pages, which a spawned child starts out sharing."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", str(helper), str(picture), str(thumbnail)],
                          capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - started
    return elapsed, int(done.stderr.split()[-1]) / 1024


def helper_figures(helper: Path, work: Path) -> Path:
    jpeg = draw(work / "24mp.jpg", "6000x4000", "jpeg", "-quality", "90")
    png = draw(work / "4k.png", "3840x2160", "png24")
    for name, picture, goal in (("24-megapixel JPEG", jpeg, "goal < 150 ms, < 60 MB"),
                                ("4K PNG", png, "")):
        helper_run(helper, picture, work / "warm.thumbnail")
        runs = [helper_run(helper, picture, work / "thumbnail") for _ in range(7)]
        seconds = statistics.median(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        megabytes = picture.stat().st_size / 1e6
        report(f"ferry-thumbnail, {name} ({megabytes:.1f} MB)", f"{seconds * 1000:.0f} ms",
               f"peak RSS {peak:.1f} MB", goal)
    return jpeg


def media_figures(helper: Path, work: Path) -> None:
    """ferry-media on what a phone records: a 20-second 1080p H.264 MP4 with AAC, and a 3-minute
    MP3. GStreamer's test sources make them (pattern "ball": a moving picture, not a still)."""
    video, sound = work / "1080p.mp4", work / "3min.mp3"
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=600", "pattern=ball", "!",
                    "video/x-raw,width=1920,height=1080,framerate=30/1", "!", "x264enc", "speed-preset=ultrafast",
                    "bitrate=8000", "!", "mp4mux", "name=mux", "!", "filesink", f"location={video}",
                    "audiotestsrc", "num-buffers=862", "!", "avenc_aac", "!", "mux."], check=True)
    subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", "num-buffers=7752", "!", "audio/x-raw,rate=44100",
                    "!", "lamemp3enc", "!", "xingmux", "!", "filesink", f"location={sound}"], check=True)
    for name, file in (("20 s 1080p H.264 MP4", video), ("3-minute MP3", sound)):
        helper_run(helper, file, work / "warm.poster")
        runs = [helper_run(helper, file, work / "poster") for _ in range(7)]
        megabytes = file.stat().st_size / 1e6
        report(f"ferry-media, {name} ({megabytes:.1f} MB)", f"{statistics.median(r[0] for r in runs) * 1000:.0f} ms",
               f"peak RSS {max(r[1] for r in runs):.1f} MB")


def share_seconds(sessions: dict[str, FerrySession], photo: Path, room: str, rounds: int = 7) -> dict[str, float]:
    """The median time of `ferry send PHOTO` for each session, in alternating rounds (after one
    warm-up each), so that a slow minute of the machine or the server weighs on both alike."""
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for round_ in range(rounds + 1):
        for name, session in sessions.items():
            started = time.perf_counter()
            done = session.run(str(session.prefix / "bin" / "ferry"), "send", str(photo), "--to", room, timeout=600)
            elapsed = time.perf_counter() - started
            assert done.returncode == 0, done.stderr
            if round_:
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    helper = prefix / "libexec" / "ferry" / "ferry-thumbnail"
    with tempfile.TemporaryDirectory(prefix="ferry-bench-pictures-") as temp:
        work = Path(temp)
        print("Ferry picture figures:")
        photo = helper_figures(helper, work)
        media_figures(prefix / "libexec" / "ferry" / "ferry-media", work)
        # The same install without the helper: the service then sends pictures bare.
        bare = work / "prefix-without-thumbnails"
        shutil.copytree(prefix, bare, symlinks=True)
        (bare / "libexec" / "ferry" / "ferry-thumbnail").unlink()
        server = Homeserver(work / "synapse", max_upload_size="1G").start()
        sessions = []
        try:
            user = server.new_user("pictures")
            room = server.create_room(user.token, name="Photos")
            by_name = {}
            for name, install in (("with", prefix), ("without", bare)):
                session = FerrySession(prefix=install, root=work / name, extra_env={"FERRY_LOG": "info"}).start()
                sessions.append(session)
                sign_in(session, server, user)
                by_name[name] = session
            figures = share_seconds(by_name, photo, room)
            extra = figures["with"] - figures["without"]
            report("`ferry send` of the JPEG, with its thumbnail", f"{figures['with'] * 1000:.0f} ms",
                   f"without {figures['without'] * 1000:.0f} ms",
                   f"+{extra * 1000:.0f} ms (ratio {figures['with'] / figures['without']:.3f})")
        finally:
            for session in sessions:
                session.stop()
            server.stop()


if __name__ == "__main__":
    main()
