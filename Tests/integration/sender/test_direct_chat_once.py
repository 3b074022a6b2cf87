"""Creating a direct chat is idempotent: a service killed after the server created the room but
before Ferry recorded it never creates a second room, nor invites the person a second time.

The window is held open by a proxy in front of a real Synapse: it passes createRoom on at once and
holds the server's answer while the test kills the service."""

from __future__ import annotations

import signal
import threading

from ferryenv import EX_OK, wait_for
from hostileproxy import HostileProxy
from matrixflow import new_share_id, sign_in_call, wait_for_state


def test_a_crash_between_create_room_and_recording_it_makes_no_second_room(new_session, homeserver, matrix_user):
    proxy = HostileProxy(homeserver).start()
    me, friend = matrix_user("dmonce"), matrix_user("dmfriend")
    session = new_session()
    sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()
    # Given a server whose answer to createRoom is held (the room exists on the server by then)
    release = threading.Event()
    held = proxy.answer("POST", r"/_matrix/client/v3/createRoom", passthrough=True, hold_answer=release, times=5)

    # When a text is shared to a person Ferry has no chat with, and the service is killed while the
    # answer is held
    done = session.ferry("text", "hello, once", "--to", friend.user_id, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    wait_for(lambda: held.done == 1, timeout=30, what="createRoom done on the server, its answer held")
    assert len(homeserver.joined_rooms(me.token)) == 1
    session.kill_service(signal.SIGKILL)
    release.set()

    # Then, started again, Ferry delivers the text into the room the server created: one room, one invite
    session.get_share(share_id)
    wait_for_state(session, share_id, "sent", timeout=60)
    [room] = homeserver.joined_rooms(me.token)
    # (the new chat is encrypted: one m.room.encrypted, no plain message)
    assert len(homeserver.events(me.token, room, "m.room.encrypted")) == 1
    assert homeserver.messages(me.token, room) == []
    assert homeserver.direct(me.token)[friend.user_id] == [room]
    assert held.hits == 1, "createRoom was asked again"
    session.stop()
    proxy.stop()
