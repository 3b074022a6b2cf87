"""Cancel is final at every moment: once it has answered success, nothing more of the share reaches
any room, also when it comes while the file's upload runs; and when it comes while an event request
is already on its way, it says it came too late for that destination and stops everything after it.

The moments are held open by a proxy in front of a real Synapse (hostileproxy): the proxy keeps the
upload or the event request waiting, the test cancels, then the proxy lets the request through."""

from __future__ import annotations

import threading

import pytest

from ferryenv import EX_OK, wait_for, write_png
from matrixflow import cancel, deliveries, new_share_id, wait_for_state

SEND = r"/send/m\.room\.message/"
UPLOAD = r"/_matrix/media/v3/upload"


@pytest.fixture()
def held(through_proxy):
    """(session, user, room, proxy): Ferry signed in through a proxy that can hold requests."""
    return through_proxy(user="canceller", room="Cancel is final")


def room_bodies(homeserver, user, room) -> list[str]:
    return [e["content"].get("body") for e in homeserver.messages(user.token, room) if e["type"] == "m.room.message"]


def test_cancel_while_the_upload_runs_sends_nothing_to_the_room(held, homeserver):
    session, user, room, proxy = held
    release = threading.Event()
    # Given a photo with a message, whose upload the server holds until the test lets it go
    rule = proxy.answer("POST", UPLOAD, passthrough=True, hold=release)
    photo = write_png(session.files / "held.png")
    done = session.ferry("send", photo, "--to", room, "--message", "about the photo", "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    wait_for(lambda: rule.hits == 1, timeout=30, what="the upload held by the proxy")

    # When the person cancels while the upload runs, and then the upload completes
    answer = cancel(session, share_id)
    release.set()

    # Then Cancel answered success and the photo never reaches the room
    answer.expect_ok()
    wait_for_state(session, share_id, "cancelled", timeout=10)
    wait_for(lambda: rule.done == 1, timeout=30, what="the held upload to complete")
    session.ferry("status")  # a round trip to the service after the upload's answer
    assert "held.png" not in room_bodies(homeserver, user, room)
    assert session.get_share(share_id)["state"] == "cancelled"


def test_cancel_while_the_event_is_on_its_way_says_too_late_and_stops_the_rest(held, homeserver):
    session, user, room, proxy = held
    release = threading.Event()
    # Given a text and a photo for one room: the text's event request is held on its way
    rule = proxy.answer("PUT", SEND, passthrough=True, hold=release)
    photo = write_png(session.files / "after.png")
    done = session.ferry("send", photo, "--to", room, "--message", "first the words", "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    wait_for(lambda: rule.hits == 1, timeout=30, what="the message's event request held by the proxy")

    # When the person cancels now, then the held request goes through
    answer = cancel(session, share_id)
    release.set()

    # Then Cancel says it came too late for that room, the share is cancelled, the words arrived once
    # and the photo after them never does
    assert room in answer.expect_error("TooLateToCancel")
    wait_for(lambda: rule.done == 1, timeout=30, what="the held event request to complete")
    # (the share shows exactly what went out: the event that was on its way is recorded)
    wait_for(lambda: [d["events-sent"] for d in deliveries(session.get_share(share_id))] == [1], timeout=10,
             what="the event that was on its way recorded on the share")
    assert session.get_share(share_id)["state"] == "cancelled"
    assert room_bodies(homeserver, user, room) == ["first the words"]
