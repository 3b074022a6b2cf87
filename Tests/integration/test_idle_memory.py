"""A service waiting for the next share keeps little mapped (issue 19): once no call has come for
half a second, its program's code leaves the working set (it stays in the page cache for the next
call), and the next share is taken as before. Not under a debugger, whose breakpoints live in
those pages."""

from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path

import pytest

PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207


def code_kb(pid: int, program: Path) -> int:
    """Resident KB of the program's executable mappings (its libraries not counted)."""
    total, executable = 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:
            executable = "x" in fields[1] and len(fields) >= 6 and fields[5] == str(program)
        elif executable and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def busy_code_kb(session, pid: int, program: Path, shares: int = 8) -> int:
    """The most code mapped right after each of a few shares (quiet periods restart with each)."""
    most = 0
    for n in range(shares):
        session.share_ok(text=f"a share to keep the service busy {n}")
        most = max(most, code_kb(pid, program))
    return most


def settled_code_kb(pid: int, program: Path, below: int, timeout: float = 15) -> int:
    """Waits (up to `timeout`) for the code mapped to fall below `below`; returns the last reading."""
    deadline = time.monotonic() + timeout
    while (now := code_kb(pid, program)) >= below and time.monotonic() < deadline:
        time.sleep(0.2)
    return now


def test_a_quiet_service_lets_its_code_go_and_takes_the_next_share_as_before(fresh_bus):
    session = fresh_bus
    program = session.prefix / "bin" / "ferry"
    # Given a service that has just answered shares (the code they ran is mapped)
    first = session.share_ok(text="before the quiet")
    pid = session.name_owner_pid()
    busy = busy_code_kb(session, pid, program)
    assert busy > 0, "no code of the program found mapped"

    # When no call comes for a while, then most of that code leaves the working set
    quiet = settled_code_kb(pid, program, below=busy // 2)
    assert quiet < busy // 2, f"code mapped {busy} KB busy, still {quiet} KB after the quiet period"

    # And the next share is taken by the same process, and the first is still there
    second = session.share_ok(text="after the quiet")
    assert session.name_owner_pid() == pid
    assert session.get_share(second)["items"][0]["text"] == "after the quiet"
    assert session.get_share(first)["items"][0]["text"] == "before the quiet"


def test_under_a_debugger_the_code_stays_mapped(fresh_bus):
    session = fresh_bus
    program = session.prefix / "bin" / "ferry"
    session.share_ok(text="before the debugger")
    pid = session.name_owner_pid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    # Given a tracer attached to the service's main thread (SEIZE leaves it running)
    if libc.ptrace(PTRACE_SEIZE, pid, None, None) != 0:
        pytest.skip(f"this machine does not let the tests ptrace ({os.strerror(ctypes.get_errno())})")
    try:
        busy = busy_code_kb(session, pid, program)
        # When no call comes for longer than the quiet period, the code stays mapped
        quiet = settled_code_kb(pid, program, below=busy // 2, timeout=3)
        assert quiet >= busy // 2, f"code mapped {busy} KB busy, {quiet} KB quiet, with a debugger attached"
    finally:
        # Detaching needs the tracee stopped: interrupt it, wait for the stop, let it go.
        libc.ptrace(PTRACE_INTERRUPT, pid, None, None)
        os.waitpid(pid, getattr(os, "__WALL", 0x40000000))
        assert libc.ptrace(PTRACE_DETACH, pid, None, None) == 0, os.strerror(ctypes.get_errno())
    # And once the debugger is gone, a quiet service lets its code go again
    busy = busy_code_kb(session, pid, program)
    assert settled_code_kb(pid, program, below=busy // 2) < busy // 2
