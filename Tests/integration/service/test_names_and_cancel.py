"""File names that try to lie on a terminal, and cancelling shares."""

from __future__ import annotations

import json

import pytest
from gi.repository import GLib

from ferryenv import EX_DATAERR, EX_OK, file_uri, write_png

# name on disk → how docs/CONTRACT.md says the command line shows it (None: only "not raw")
TRICKY_NAMES = {
    "a\nb.png": "a\\nb.png",
    "x\u202egnp.exe": "x\\u{202E}gnp.exe",
    "tab\there.png": None,
    "esc\x1b[31mred.png": None,
    "bell\x07.png": None,
    "isolate\u2066.png": None,
}
RAW_DANGER = ["\u202e", "\u2066", "\x1b", "\x07"]


@pytest.mark.parametrize("name", list(TRICKY_NAMES), ids=lambda n: n.encode("unicode_escape").decode())
def test_tricky_file_name_is_stored_exactly_and_shown_escaped(bus, tmp_path, name):
    # Given a PNG whose name holds a newline, control or bidi character
    photo = write_png(tmp_path / name)

    # When it is shared through D-Bus (its URI percent-encodes the name)
    share_id = bus.share_ok(uris=[file_uri(photo)])

    # Then GetShare and the JSON output carry the name exactly
    assert bus.get_share(share_id)["items"][0]["name"] == name
    shown_json = bus.ferry("show", share_id, "--json")
    assert shown_json.returncode == EX_OK, shown_json.stderr
    assert json.loads(shown_json.stdout)["items"][0]["name"] == name

    # And the human output of show and shares shows it escaped, never raw
    for argv in (["show", share_id], ["shares"]):
        done = bus.ferry(*argv)
        assert done.returncode == EX_OK, done.stderr
        assert name not in done.stdout, f"`ferry {' '.join(argv)}` prints the raw name"
        for danger in RAW_DANGER:
            assert danger not in done.stdout, f"`ferry {' '.join(argv)}` prints {danger!r}"
    if TRICKY_NAMES[name]:
        assert TRICKY_NAMES[name] in bus.ferry("show", share_id).stdout


def test_tricky_name_sent_from_the_command_line_is_kept(bus, tmp_path):
    name = "line\nbreak\u202e.png"
    photo = write_png(tmp_path / name)
    done = bus.ferry("send", photo)
    assert done.returncode == EX_OK, done.stderr
    assert bus.get_share(done.stdout.strip())["items"][0]["name"] == name


def test_missing_file_with_a_tricky_name_is_named_safely_in_the_error(bus, tmp_path):
    # Given a missing file whose name has a newline and a bidi override
    path = tmp_path / "evil\n\u202egnp.exe"

    # When it is shared
    message = bus.share(uris=[file_uri(path)]).expect_error("FileNotFound")

    # Then the sentence names it with the characters escaped
    assert "\n" not in message and "\u202e" not in message, message
    assert "evil" in message


def cancel(session, share_id):
    return session.gdbus_call("Cancel", GLib.Variant("s", share_id))


def test_cancel_removes_the_staged_files_and_announces_the_change(bus, tmp_path):
    # Given a share waiting for sign-in, with a staged file
    share_id = bus.share_ok(uris=[file_uri(write_png(tmp_path / "cancel.png"))])
    assert bus.spool_dir(share_id).is_dir()

    with bus.signals() as monitor:
        # When it is cancelled
        cancel(bus, share_id).expect_ok()

        # Then it is cancelled, its staged copy is gone, and ShareChanged says so
        monitor.wait_for_signal("ShareChanged", lambda s: s.first_string == share_id)
    share = bus.get_share(share_id)
    assert share["state"] == "cancelled"
    assert not bus.spool_dir(share_id).exists()
    assert share["updated"] >= share["created"]
    [row] = [r for r in bus.db_rows("share") if r["id"] == share_id]
    assert row["state"] == "cancelled"


def test_cancelling_twice_is_not_cancellable(bus):
    # Given a cancelled share
    share_id = bus.share_ok(text="cancel me twice")
    cancel(bus, share_id).expect_ok()

    # When it is cancelled again, through D-Bus and the command line
    message = cancel(bus, share_id).expect_error("NotCancellable")
    done = bus.ferry("cancel", share_id)

    # Then both refuse, naming the share, and it stays cancelled
    assert share_id in message
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
    assert f"ferry: {message}" in done.stderr
    assert bus.get_share(share_id)["state"] == "cancelled"


def test_cancel_of_a_text_share_leaves_other_shares_alone(bus):
    keep = bus.share_ok(text="keep me")
    drop = bus.share_ok(text="drop me")
    cancel(bus, drop).expect_ok()
    assert bus.get_share(keep)["state"] == "awaiting-sign-in"
