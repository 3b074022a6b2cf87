"""Ferry's storage cannot be turned against the person: a symbolic link planted in its spool or
next to its database never makes Ferry read, delete or overwrite a file outside them, and its state
directory is made private (0700) at start.

Before the fix, the spool sweep at start followed a link named like a share and deleted every file
in the folder it pointed at, and a share's folder swapped for a link sent whatever file it led to."""

from __future__ import annotations

import os
import stat

from ferryenv import EX_OK
from matrixflow import deliveries, new_share_id, sign_in, wait_for_state


def test_a_link_planted_in_the_spool_is_removed_and_what_it_points_at_is_kept(new_session):
    session = new_session()
    # Given a folder of the person's with a file in it
    precious = session.files / "precious"
    precious.mkdir(parents=True)
    (precious / "thesis.odt").write_text("four years of work")
    # And, in Ferry's spool, a link named like a leftover share pointing at that folder
    session.ferry("status")  # the service makes its state directory and spool
    planted = session.state_dir / "spool" / "01kplantedlink0000000000000"
    planted.symlink_to(precious, target_is_directory=True)
    session.kill_service()

    # When the service starts again and sweeps what no share needs from its spool
    done = session.ferry("status")
    assert done.returncode == EX_OK, done.stderr

    # Then the folder the link pointed at, with its file, is untouched, and the link is gone
    assert (precious / "thesis.odt").read_text() == "four years of work"
    assert not os.path.lexists(planted)
    session.stop()


def test_a_share_folder_swapped_for_a_link_sends_nothing_from_where_it_leads(new_session, homeserver):
    user = homeserver.new_user("swapped")
    room = homeserver.create_room(user.token, name="Swapped folders")
    session = new_session()
    # Given a photo shared while signed out, so its copy waits in the spool
    photo = session.files / "holiday.txt"
    photo.parent.mkdir(parents=True, exist_ok=True)
    photo.write_text("holiday notes")
    done = session.ferry("send", str(photo), "--to", room, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    # And its folder in the spool replaced by a link to a folder holding a secret under the same name
    secrets = session.files / "secrets"
    secrets.mkdir()
    folder = session.spool_dir(share_id)
    for entry in folder.iterdir():
        (secrets / entry.name).write_text("the private key")
        entry.unlink()
    folder.rmdir()
    folder.symlink_to(secrets, target_is_directory=True)

    # When the person signs in
    sign_in(session, homeserver, user)

    # Then the share fails with StagedCopyLost, and nothing reached the room
    share = wait_for_state(session, share_id, "failed", timeout=60)
    [delivery] = deliveries(share)
    assert delivery["error-name"] == "io.github.ferryshare.Ferry.Error.StagedCopyLost", delivery
    assert homeserver.messages(user.token, room) == [] or all(
        e["type"] != "m.room.message" for e in homeserver.messages(user.token, room))
    # And the secret is still there: removing the failed share's copies did not follow the link
    assert all(p.read_text() == "the private key" for p in secrets.iterdir())
    assert any(secrets.iterdir())
    session.stop()


def test_a_state_directory_open_to_others_is_made_private_at_start(new_session):
    session = new_session()
    session.ferry("status")
    session.kill_service()
    os.chmod(session.state_dir, 0o755)
    os.chmod(session.state_dir / "spool", 0o777)

    done = session.ferry("status")

    assert done.returncode == EX_OK, done.stderr
    assert stat.S_IMODE(os.stat(session.state_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(session.state_dir / "spool").st_mode) == 0o700
    session.stop()


def test_a_link_in_place_of_the_database_stops_the_service_with_a_sentence_and_writes_nothing(new_session):
    session = new_session()
    session.ferry("status")
    session.kill_service()
    # Given the outbox replaced by a link to a file of the person's
    elsewhere = session.files / "notes.txt"
    elsewhere.parent.mkdir(parents=True, exist_ok=True)
    elsewhere.write_text("my notes")
    for name in os.listdir(session.state_dir):
        if name.startswith("ferry.sqlite3"):
            os.unlink(session.state_dir / name)
    (session.state_dir / "ferry.sqlite3").symlink_to(elsewhere)

    # When something asks the service
    done = session.ferry("status")

    # Then it does not start, the file the link leads to is unchanged, and the log says why
    assert done.returncode != EX_OK
    assert elsewhere.read_text() == "my notes"
    assert "symbolic link" in session.log_path.read_text()
    session.stop()
