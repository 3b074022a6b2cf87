"""Ferry's own copy of a file gone or cut short fails that share with StagedCopyLost, naming the
file, and the other shares go on: not a transport error retried forever, and Ferry stays online."""

from __future__ import annotations

import pytest

from ferryenv import EX_OK, file_uri, write_png
from matrixflow import deliveries, get_property, new_share_id, sign_in, wait_for_state


@pytest.mark.parametrize("damage", ["removed", "cut-short"])
def test_a_lost_staged_copy_fails_its_share_by_name_and_the_others_go(new_session, homeserver, damage):
    user = homeserver.new_user("lostcopy")
    room = homeserver.create_room(user.token, name="Lost copies")
    session = new_session()
    # Given two shares accepted while signed out: a photo and a text
    photo = write_png(session.files / "holiday.png")
    done = session.ferry("send", photo, "--to", room, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    photo_share = new_share_id(done)
    done = session.ferry("text", "the other share", "--to", room, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    text_share = new_share_id(done)
    # And Ferry's copy of the photo is damaged in its spool
    [copy] = list(session.spool_dir(photo_share).iterdir())
    if damage == "removed":
        copy.unlink()
    else:
        copy.write_bytes(copy.read_bytes()[:10])

    # When the person signs in
    sign_in(session, homeserver, user)

    # Then the photo's share fails, naming the file, and the text arrives
    share = wait_for_state(session, photo_share, "failed", timeout=60)
    [delivery] = deliveries(share)
    assert delivery["error-name"] == "io.github.ferryshare.Ferry.Error.StagedCopyLost", delivery
    assert "holiday.png" in delivery["error-message"], delivery
    wait_for_state(session, text_share, "sent", timeout=60)
    assert [e["content"]["body"] for e in homeserver.messages(user.token, room)
            if e["type"] == "m.room.message"] == ["the other share"]
    # And Ferry does not think it is offline because of a file
    assert get_property(session, "Online") is True
    # And the command line says what failed, with the I/O error status
    shown = session.ferry("show", photo_share)
    assert "holiday.png" in shown.stdout + shown.stderr
    session.stop()
