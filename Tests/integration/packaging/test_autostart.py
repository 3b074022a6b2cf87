"""The login autostart entry runs `ferry service --if-pending`: it starts the service only when
shares wait to be sent (so a queue left at logout goes out without anyone touching Ferry), and
otherwise exits at once without creating anything."""

from __future__ import annotations

import subprocess

from ferryenv import wait_for
from matrixflow import sign_in, wait_for_state


def test_with_nothing_pending_it_exits_at_once_and_creates_nothing(fresh_bus):
    # Given a session where Ferry never ran
    assert not fresh_bus.state_dir.exists()

    # When the autostart entry's command runs at login
    done = fresh_bus.ferry("service", "--if-pending", timeout=10)

    # Then it exits at once, successfully, leaving no state and no service behind
    assert done.returncode == 0, done.stderr
    assert not fresh_bus.state_dir.exists()
    assert not fresh_bus.service_running()


def test_with_a_share_waiting_to_be_sent_it_runs_the_service_which_sends_it(new_session, fresh_homeserver):
    # Given a share that could not be sent before the session ended (the homeserver was away)
    user = fresh_homeserver.new_user("autostart")
    room = fresh_homeserver.create_room(user.token, name="Autostart")
    session = new_session(FERRY_RETRY_MAX_SECONDS="1")
    sign_in(session, fresh_homeserver, user)
    fresh_homeserver.stop()
    share_id = session.share_ok(text="sent after login", destinations=[room])
    wait_for_state(session, share_id, "sending")
    session.kill_service()
    fresh_homeserver.start()

    # When the next login runs the autostart entry's command
    service = subprocess.Popen([str(session.prefix / "bin" / "ferry"), "service", "--if-pending"], env=session.env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Then that process is the service, and it delivers the share by itself
        wait_for(lambda: session.name_owner_pid() == service.pid, timeout=20, what="the autostarted service on the bus")
        fresh_homeserver.wait_for_messages(user.token, room, count=1, timeout=60)
        assert [e["content"]["body"] for e in fresh_homeserver.messages(user.token, room)] == ["sent after login"]
    finally:
        service.kill()
        service.wait(timeout=10)
