"""A service waiting for the next share keeps little mapped (issue 19): once it has had nothing to
do for half a second, its program's code leaves its resident memory (it stays in the page cache for
the next call), and the next share is taken as before. Not while a code page has been written (a
debugger's breakpoint)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ferryenv import wait_for
from hostileproxy import HostileProxy
from matrixflow import sign_in, sign_in_call, wait_for_state


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


def test_after_a_send_the_code_goes_once_the_outbox_has_nothing_left(fresh_bus, homeserver):
    session = fresh_bus
    program = session.prefix / "bin" / "ferry"
    # Given a service signed in, that has just sent a text (the outbox's work, then nothing)
    user = homeserver.new_user("quiet")
    room = homeserver.create_room(user.token, name="Quiet Harbour")
    sign_in(session, homeserver, user)
    pid = session.name_owner_pid()
    busy = busy_code_kb(session, pid, program, shares=1)
    sent = session.share_ok(text="sent, then quiet", destinations=[room])
    wait_for_state(session, sent, "sent")
    busy = max(busy, code_kb(pid, program))

    # Then once it has nothing left to do, its code leaves the working set too
    quiet = settled_code_kb(pid, program, below=busy // 2)
    assert quiet < busy // 2, f"code mapped {busy} KB busy, still {quiet} KB after the send"
    assert homeserver.messages(user.token, room)[-1]["content"]["body"] == "sent, then quiet"


def test_the_end_of_a_send_held_past_the_quiet_period_lets_what_it_ran_go(new_session, homeserver):
    """The end of the outbox's work restarts the quiet period, as an answered call does. Watched
    from the homeserver's side only: a Share1 call of the test's own would restart it anyway."""
    proxy = HostileProxy(homeserver).start()
    try:
        # Given a signed-in service whose event request the homeserver holds for longer than the quiet period
        user = homeserver.new_user("heldsend")
        room = homeserver.create_room(user.token, name="Held Harbour")
        session = new_session()
        sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
        program = session.prefix / "bin" / "ferry"
        pid = session.name_owner_pid()
        release = threading.Event()
        rule = proxy.answer("PUT", r"/send/m\.room\.message/", passthrough=True, hold=release)
        session.share_ok(text="held, then sent", destinations=[room])
        wait_for(lambda: rule.hits == 1, timeout=30, what="the event request held by the proxy")
        # (while it is held the service is quiet: its code goes)
        held = settled_code_kb(pid, program, below=code_kb(pid, program) // 2)

        # When the event goes through, and what finishing the send runs is mapped back
        release.set()
        wait_for(lambda: any(e["content"].get("body") == "held, then sent" for e in homeserver.messages(user.token, room)),
                 timeout=30, what="the message in the room")
        finished = wait_for(lambda: (kb := code_kb(pid, program)) > held + 256 and kb, timeout=10,
                            what="the code that finishes a send mapped back")

        # Then, with no call since, that code leaves the working set too
        quiet = settled_code_kb(pid, program, below=held + (finished - held) // 2)
        assert quiet < held + (finished - held) // 2, \
            f"code mapped {held} KB while held, {finished} KB once sent, still {quiet} KB after"
    finally:
        proxy.stop()


def test_a_written_code_page_keeps_the_code_mapped(fresh_bus):
    """A debugger's breakpoint or a uprobe is a write into a private copy of a code page: dropping
    that copy would silently remove it. Written here the way a debugger writes (/proc/PID/mem, the
    byte that is there already)."""
    session = fresh_bus
    program = session.prefix / "bin" / "ferry"
    session.share_ok(text="before the breakpoint")
    pid = session.name_owner_pid()
    code = next(line.split()[0] for line in Path(f"/proc/{pid}/maps").read_text().splitlines()
                if line.split()[1] == "r-xp" and line.split()[-1] == str(program))
    address = (int(code.split("-")[0], 16) + 2 * 4096)
    try:
        with open(f"/proc/{pid}/mem", "r+b", buffering=0) as memory:
            memory.seek(address)
            byte = memory.read(1)
            memory.seek(address)
            memory.write(byte)
    except PermissionError as error:
        pytest.skip(f"this machine does not let the tests write another process's memory ({error})")

    # When the service has been quiet for longer than the quiet period, its code stays mapped
    busy = busy_code_kb(session, pid, program)
    time.sleep(3)
    quiet = code_kb(pid, program)
    assert quiet >= busy // 2, f"code mapped {busy} KB busy, {quiet} KB quiet, with a page written"
    # And it still takes shares
    session.share_ok(text="after the breakpoint")
    assert session.name_owner_pid() == pid
