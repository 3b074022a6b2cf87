"""What a running process holds in memory, read the way a debugger reads it (/proc/PID/maps and
/proc/PID/mem; the tests run as a user that may, or the reading is skipped). For checks that key
material Ferry held only briefly is gone from it, not just unreferenced."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# Writable private mappings: the heap, stacks, anonymous memory. Mapped files are not secrets.
_MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) ([r-][w-][x-][ps]) \S+ \S+ (\d+)\s*(.*)$")


def places_holding(pid: int, needles: dict[str, bytes]) -> list[str]:
    """Which of `needles` (name → bytes) appear in the process's writable memory, and where."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        memory = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except PermissionError:
        pytest.skip("this user may not read another process's memory")
    found = []
    with memory:
        for line in maps:
            match = _MAPPING.match(line)
            if not match or match.group(3)[1] != "w" or match.group(3)[3] != "p" or match.group(5).startswith("/"):
                continue
            start, end = int(match.group(1), 16), int(match.group(2), 16)
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            for name, needle in needles.items():
                if needle in data:
                    found.append(f"{name} in {match.group(5) or 'anonymous memory'} at {start:#x}")
    return found
