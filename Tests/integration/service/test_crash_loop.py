"""A share the service crashes on is given up after three crashes, instead of crashing the service at
every start; a share merely killed under it (SIGKILL, a power cut) is resumed however often it happens.

The crash is a real crash signal (SIGSEGV) delivered while the share's event request is in flight
(held by a proxy in front of a real Synapse), so the crash witness names that share."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from ferryenv import EX_OK, wait_for
from matrixflow import deliveries, new_share_id, wait_for_state

SEND = r"/send/m\.room\.message/"


@pytest.fixture()
def held(through_proxy):
    """(session, user, room, proxy): Ferry signed in through a proxy that can hold requests."""
    return through_proxy(user="crashy", room="Crash loop")


def interrupt_three_times(session, proxy, text: str, room: str, sig: int) -> str:
    """Shares `text`; three times, waits for its event request to be held, then sends `sig` to the service."""
    rule = proxy.answer("PUT", SEND, stall=60, status=500, body={"errcode": "M_UNKNOWN"}, times=3)
    done = session.ferry("text", text, "--to", room, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    for round in range(1, 4):
        wait_for(lambda: rule.hits == round, timeout=60, what=f"event request {round} held by the proxy")
        pid = session.name_owner_pid()
        assert pid, "the service is not running"
        session.kill_service(sig)
        # Anything that asks the service starts it again (D-Bus activation), as a person's next click would.
        session.get_share(share_id)
    return share_id


def test_a_share_the_service_crashed_on_three_times_is_failed_with_a_reason(held, homeserver):
    session, user, room, proxy = held
    # When the service crashes three times while sending the same share
    share_id = interrupt_three_times(session, proxy, "the poisonous share", room, signal.SIGSEGV)

    # Then at its next start that share is failed, saying why, and nothing reached the room
    share = wait_for_state(session, share_id, "failed", timeout=30)
    [delivery] = deliveries(share)
    assert delivery["error-name"] == "io.github.ferryshare.Ferry.Error.DeliveryFailed", delivery
    assert "stopped unexpectedly 3 times" in delivery["error-message"], delivery
    assert "the poisonous share" not in [e["content"].get("body") for e in homeserver.messages(user.token, room)]

    # And the service stays up and sends the next share
    done = session.ferry("text", "after the crashes", "--to", room)
    assert done.returncode == EX_OK, done.stderr
    assert "after the crashes" in [e["content"].get("body") for e in homeserver.messages(user.token, room)]


def test_a_share_killed_under_the_service_three_times_is_still_delivered_once(held, homeserver):
    session, user, room, proxy = held
    # When the service is killed (SIGKILL: no crash) three times while sending the same share
    share_id = interrupt_three_times(session, proxy, "killed but not guilty", room, signal.SIGKILL)

    # Then the share is resumed and delivered exactly once
    wait_for_state(session, share_id, "sent", timeout=60)
    bodies = [e["content"].get("body") for e in homeserver.messages(user.token, room)]
    assert bodies.count("killed but not guilty") == 1


def test_the_service_writes_no_core_file_and_is_not_dumpable(new_session):
    # Given a running service (it holds the seal key, tokens and ratchets in memory)
    session = new_session()
    session.busctl_call("GetStatus").expect_ok()
    pid = session.name_owner_pid()

    # Then the kernel allows it no core file, soft or hard limit, and the service says that the
    # kernel reports it not dumpable either (PR_GET_DUMPABLE; as root, nothing outside shows it)
    [limit] = [line for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
               if line.startswith("Max core file size")]
    assert limit.split()[4:6] == ["0", "0"], limit
    assert "core dumps are off" in session.log_tail(400)
