"""`make demo` as a newcomer runs it: it finishes, and every command it shows can be pasted into a shell.

The demo runs exactly the text it shows after "$ " (scripts/demo.sh, `run`), so a demo that finishes has
run every shown command as shown; these tests also read each shown line the way a shell would, so a word
lost to a comment ("#room:server") or split at a space fails here even if the demo stopped showing the
command it runs.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from uidesktop import start_xvfb, tools_missing

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "scripts" / "demo.sh"
SHOWN = re.compile(r"^\s*(?:\x1b\[[0-9;]*m)?\s*\$ (.*?)(?:\x1b\[0m)?$")


def demo_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "WAYLAND_DISPLAY", "KEEP", "DBUS_SESSION_BUS_ADDRESS")}
    return {**env, **extra}


def shown_commands(output: str) -> list[str]:
    return [m.group(1) for line in output.splitlines() if (m := SHOWN.match(line))]


def assert_pasteable(command: str) -> None:
    # A shell drops everything after an unquoted '#' that starts a word: with comments read as a
    # shell reads them, the words must be the same.
    assert shlex.split(command, comments=True) == shlex.split(command), f"a shell would cut {command!r}"
    checked = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
    assert checked.returncode == 0, f"bash cannot parse {command!r}: {checked.stderr}"


def test_the_demo_runs_to_the_end_and_every_command_it_shows_can_be_pasted():
    done = subprocess.run(["bash", str(DEMO)], env=demo_env(), capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "That was Ferry." in done.stdout

    commands = shown_commands(done.stdout)
    assert any(c.startswith("ferry complete ") and "'#" in c for c in commands), commands
    for command in commands:
        assert_pasteable(command)
    # The message given with --message arrived whole, words after the room's '#' included
    assert "'The harbour this morning'" in done.stdout.split("The room's timeline")[1]
    # Without a display the demo says where the dialog's picture is, and that picture exists
    screenshot = re.search(r"data/screenshots/[\w.-]+\.png", done.stdout)
    assert screenshot, "the demo does not say where the share dialog's screenshot is"
    assert (ROOT / screenshot.group(0)).is_file()


@pytest.mark.skipif(bool(tools_missing()), reason="needs Xvfb and ImageMagick's import")
def test_with_a_display_the_demo_opens_the_share_dialog_and_goes_on_when_nobody_answers(tmp_path):
    xvfb, display = start_xvfb()
    try:
        demo = subprocess.Popen(["bash", str(DEMO)], env=demo_env(DISPLAY=display, DIALOG_SECONDS="15"),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL)
        output: list[str] = []
        assert demo.stdout is not None
        for line in demo.stdout:
            output.append(line)
            if "ferry-ui --share" in line:
                break
        dialog = [c for c in shown_commands("".join(output)) if "ferry-ui --share" in c]
        assert dialog, "".join(output)[-4000:]
        # When the dialog is up, the display shows a window (Xvfb's root alone is black)
        shot = tmp_path / "demo-dialog.png"
        brightness = 0.0
        deadline = time.monotonic() + 10
        while brightness < 0.2 and time.monotonic() < deadline:
            time.sleep(0.5)
            subprocess.run(["import", "-display", display, "-window", "root", str(shot)], check=True, timeout=30)
            measured = subprocess.run(["convert", str(shot), "-format", "%[fx:mean]", "info:"], capture_output=True,
                                      text=True, timeout=30)
            brightness = float(measured.stdout or 0)
        assert brightness >= 0.2, f"nothing drawn on {display} (mean {brightness}); see {shot}"
        # And when nobody answers it, the command line chooses, and the demo ends well
        rest, _ = demo.communicate(timeout=600)
        text = "".join(output) + rest
        assert demo.returncode == 0, text[-4000:]
        assert "the command line chooses instead" in text
        assert "'The harbour this morning'" in text.split("The room's timeline")[1]
        for command in shown_commands(text):
            assert_pasteable(command)
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)
