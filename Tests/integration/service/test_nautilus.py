"""GNOME Files' "Share with Ferry…": Ferry's nautilus-python extension, installed into the prefix,
loaded through the introspection API Nautilus uses (Tests/integration/nautilusdriver.py) and
asked for the entries of a selection; activating the entry makes one share of the files, which
arrives in the room once a destination is chosen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ferryenv import file_uri
from matrixflow import complete_share, signed_in_session, wait_until_sent

DRIVER = Path(__file__).resolve().parents[1] / "nautilusdriver.py"

try:
    import gi

    gi.require_version("Nautilus", "4.0")
    HAVE_NAUTILUS = True
except (ImportError, ValueError):
    HAVE_NAUTILUS = False

pytestmark = pytest.mark.skipif(not HAVE_NAUTILUS, reason="needs nautilus-python's Nautilus 4.0 (make deps)")


def extension(session) -> Path:
    return session.prefix / "share" / "nautilus-python" / "extensions" / "ferry_share.py"


def drive(session, *arguments: str, env: dict[str, str] | None = None) -> list[dict]:
    done = subprocess.run([sys.executable, str(DRIVER), str(extension(session)), *arguments],
                          env={**os.environ, **session.env, **(env or {})}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])


def test_two_selected_files_get_one_entry_whose_share_arrives(new_session, homeserver):
    session = signed_in_session(new_session, homeserver, homeserver.new_user("files"))
    first, second = session.files / "notes.txt", session.files / "plan.pdf"
    first.write_text("Bring the charts.\n")
    second.write_bytes(b"%PDF-1.4\n% plan\n")
    before = set(session.share_ids())

    # When GNOME Files asks for the selection's entries
    [entry] = drive(session, file_uri(first), file_uri(second))

    # Then there is one, named as the person reads it, with Ferry's icon
    assert (entry["label"], entry["icon"]) == ("Share with Ferry…", "io.github.ferryshare.Ferry")

    # And activating it makes one share of both files, in order
    drive(session, "--activate", file_uri(first), file_uri(second))
    [share_id] = set(session.share_ids()) - before
    share = session.get_share(share_id)
    assert [item["name"] for item in share["items"]] == ["notes.txt", "plan.pdf"]
    assert share["source"] == "open"


def test_the_share_arrives_in_the_room_chosen_for_it(new_session, homeserver):
    owner = homeserver.new_user("files-room")
    session = signed_in_session(new_session, homeserver, owner)
    room = homeserver.create_room(owner.token, name="Files")
    photo = session.files / "harbour.txt"
    photo.write_text("The harbour at dawn.\n")
    before = set(session.share_ids())

    drive(session, "--activate", file_uri(photo))

    [share_id] = set(session.share_ids()) - before
    complete_share(session, share_id, [room]).expect_ok()
    wait_until_sent(session, [share_id])
    [event] = homeserver.messages(owner.token, room)
    assert event["content"]["filename"] == "harbour.txt"
    assert homeserver.download(owner.token, event["content"]["url"]) == b"The harbour at dawn.\n"


def test_no_entry_for_a_folder_or_a_file_in_the_trash(new_session):
    session = new_session()
    folder = session.files / "Holiday"
    folder.mkdir()
    loose = session.files / "one.txt"
    loose.write_text("one\n")

    assert drive(session, file_uri(folder)) == []
    # A folder among files: the whole selection cannot be shared, so nothing is offered
    assert drive(session, file_uri(loose), file_uri(folder)) == []
    assert drive(session, "trash:///one.txt") == []


def test_no_entry_where_ferrys_service_is_not_installed(new_session, tmp_path):
    session = new_session()
    loose = session.files / "one.txt"
    loose.write_text("one\n")
    # A session bus that knows no Ferry: the extension's own bus, started empty
    config = tmp_path / "empty-bus.conf"
    config.write_text(
        "<!DOCTYPE busconfig PUBLIC '-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN'"
        " 'http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd'>"
        "<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen>"
        "<policy context='default'><allow send_destination='*' eavesdrop='true'/><allow own='*'/></policy>"
        "</busconfig>")
    bus = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--print-address", "--nofork"],
                           stdout=subprocess.PIPE, text=True)
    try:
        address = bus.stdout.readline().strip()
        assert drive(session, file_uri(loose), env={"DBUS_SESSION_BUS_ADDRESS": address}) == []
    finally:
        bus.terminate()
        bus.wait(timeout=10)


def test_the_entry_speaks_the_persons_language(new_session):
    session = new_session()
    loose = session.files / "eins.txt"
    loose.write_text("eins\n")
    [entry] = drive(session, file_uri(loose), env={"LANGUAGE": "de", "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8"})
    assert entry["label"] == "Mit Ferry teilen …"
