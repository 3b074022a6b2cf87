"""The upload timeout follows progress: a slow upload that keeps moving is never cut off, and one
that stops moving is given up after FERRY_UPLOAD_STALL_SECONDS and tried again, delivered once.

Before, an upload had a deadline of 2 minutes (plus a minute per 100 MB): a 40 MiB file over a
steady 200 KB/s link (3.5 minutes) was cut off at every attempt and never arrived."""

from __future__ import annotations

import os

from ferryenv import EX_OK

UPLOAD = r"/_matrix/media/v3/upload"


def files_in_room(homeserver, user, room) -> list[str]:
    return [e["content"]["body"] for e in homeserver.messages(user.token, room)
            if e["type"] == "m.room.message" and e["content"].get("msgtype") == "m.file"]


def test_a_40_mib_file_over_a_steady_200_kb_per_second_link_is_delivered_once(through_proxy, homeserver, tmp_path):
    session, user, room, proxy = through_proxy(user="slowlink", room="Slow link")
    # Given a link that carries the upload at 200 KB/s, and a 40 MiB file (3.5 minutes on that link)
    rule = proxy.answer("POST", UPLOAD, passthrough=True, throttle=200_000, times=10)
    big = tmp_path / "slow.bin"
    big.write_bytes(os.urandom(40 << 20))

    # When it is shared
    done = session.ferry("send", big, "--to", room, timeout=600)

    # Then it arrives once, in one upload
    assert done.returncode == EX_OK, (done.stderr, session.log_tail())
    assert files_in_room(homeserver, user, room) == ["slow.bin"]
    assert rule.hits == 1, f"the upload was cut off and tried {rule.hits} times"


def test_an_upload_that_stops_moving_is_given_up_and_tried_again_delivered_once(through_proxy, homeserver, tmp_path):
    session, user, room, proxy = through_proxy(user="slowlink", room="Slow link", FERRY_UPLOAD_STALL_SECONDS="3")
    # Given a server that stops reading the first upload after 1 MiB and holds the connection for a minute
    stuck = proxy.answer("POST", UPLOAD, stop_reading_after=1 << 20, stall=60, times=1)
    big = tmp_path / "stuck.bin"
    big.write_bytes(os.urandom(24 << 20))

    # When it is shared
    done = session.ferry("send", big, "--to", room, timeout=120)

    # Then the stuck upload was given up well before the server let go, tried again, and the file
    # arrived exactly once
    assert done.returncode == EX_OK, (done.stderr, session.log_tail())
    assert stuck.hits == 1
    assert files_in_room(homeserver, user, room) == ["stuck.bin"]
    assert "made no progress" in session.log_tail(400)
