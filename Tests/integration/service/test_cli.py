"""The `ferry` command line as a person uses it, against the installed service on a private bus."""

from __future__ import annotations

import json
import re

import pytest

from ferryenv import EX_DATAERR, EX_OK, EX_UNAVAILABLE, EX_USAGE, file_uri, write_png

CONTRACT_KEYS = {"id", "state", "action", "content_type", "items", "subject", "message", "destinations",
                 "source", "created_at", "updated_at", "error"}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def new_id(done) -> str:
    """`open`, `send` and `text` print the new id alone on standard output."""
    assert done.returncode == EX_OK, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].strip() == lines[0] and lines[0], f"stdout is not one id: {done.stdout!r}"
    assert done.stderr.strip(), "no sentence about what happens next on standard error"
    return lines[0]


def test_send_resolves_relative_paths_against_the_callers_directory(bus, tmp_path):
    # Given a PNG in the caller's working directory
    (tmp_path / "pics").mkdir()
    photo = write_png(tmp_path / "pics" / "relative.png")

    # When `ferry send` is given a relative path from there
    share_id = new_id(bus.ferry("send", "pics/relative.png", cwd=tmp_path))

    # Then the share names the file by its absolute URI
    share = bus.get_share(share_id)
    assert [i["uri"] for i in share["items"]] == [file_uri(photo)]
    assert share["source"] == "cli"
    assert share["state"] == "awaiting-sign-in"


def test_send_several_files_with_destination_and_message(bus, tmp_path):
    # Given two PNGs
    write_png(tmp_path / "a.png", seed=1)
    write_png(tmp_path / "b.png", seed=2)

    # When they are sent with a destination and a message
    share_id = new_id(bus.ferry("send", "a.png", "b.png", "--to", "!room:example.org",
                                "--to", "@bob:example.org", "--message", "Two pictures", cwd=tmp_path))

    # Then one share carries both, with the destinations and message
    share = bus.get_share(share_id)
    assert [i["name"] for i in share["items"]] == ["a.png", "b.png"]
    assert share["action"] == "send-multiple"
    # Both are PNGs: the common type is image/png itself (image/* is for PNG with JPEG, see the unit tests).
    assert share["content-type"] == "image/png"
    assert share["destinations"] == ["!room:example.org", "@bob:example.org"]
    assert share["message"] == "Two pictures"


def test_text_shares_text_and_subject(bus):
    share_id = new_id(bus.ferry("text", "Meeting moved to 3pm", "--subject", "Meeting"))
    share = bus.get_share(share_id)
    assert [(i["kind"], i["text"]) for i in share["items"]] == [("text", "Meeting moved to 3pm")]
    assert share["subject"] == "Meeting"


def test_text_that_is_a_url_is_a_link(bus):
    share = bus.get_share(new_id(bus.ferry("text", "https://example.org/")))
    assert [(i["kind"], i["text"]) for i in share["items"]] == [("link", "https://example.org/")]


def test_text_dash_reads_standard_input(bus):
    share = bus.get_share(new_id(bus.ferry("text", "-", input="line one\nline two\n")))
    [item] = share["items"]
    assert item["kind"] == "text"
    assert item["text"].rstrip("\n") == "line one\nline two"


def test_open_shares_file_uris(bus, tmp_path):
    photo = write_png(tmp_path / "open.png")
    share = bus.get_share(new_id(bus.ferry("open", file_uri(photo))))
    assert [i["uri"] for i in share["items"]] == [file_uri(photo)]


def test_open_shares_a_ferry_uri(bus):
    share = bus.get_share(new_id(bus.ferry("open", "ferry:share?url=https%3A%2F%2Fexample.org%2Fx")))
    assert [(i["kind"], i["text"]) for i in share["items"]] == [("link", "https://example.org/x")]


def test_show_json_has_every_documented_key(bus, tmp_path):
    # Given a share of one PNG
    photo = write_png(tmp_path / "json.png")
    share_id = new_id(bus.ferry("send", photo, "--message", "hi"))

    # When it is shown as JSON
    done = bus.ferry("show", share_id, "--json")

    # Then the object has the stable keys and values of docs/CONTRACT.md
    assert done.returncode == EX_OK, done.stderr
    shown = json.loads(done.stdout)
    assert CONTRACT_KEYS <= shown.keys()
    assert shown["id"] == share_id
    assert shown["state"] == "awaiting-sign-in"
    assert shown["action"] == "send"
    assert shown["content_type"] == "image/png"
    assert shown["message"] == "hi"
    assert shown["subject"] is None
    assert shown["destinations"] == []
    assert shown["source"] == "cli"
    assert shown["error"] is None
    assert ISO_UTC.match(shown["created_at"]) and ISO_UTC.match(shown["updated_at"]), shown
    [item] = shown["items"]
    assert item == {**item, "kind": "file", "name": "json.png", "content_type": "image/png",
                    "size": photo.stat().st_size, "uri": file_uri(photo)}


def test_shares_json_lists_newest_first(bus):
    # Given two shares, one after the other
    first = new_id(bus.ferry("text", "first of two"))
    second = new_id(bus.ferry("text", "second of two"))

    # When they are listed as JSON
    done = bus.ferry("shares", "--json")

    # Then it is an array of share objects, newest first
    assert done.returncode == EX_OK, done.stderr
    listed = json.loads(done.stdout)
    assert isinstance(listed, list)
    ids = [s["id"] for s in listed]
    assert ids.index(second) < ids.index(first)
    assert all(CONTRACT_KEYS <= s.keys() for s in listed)


def test_shares_and_show_print_something_readable(bus):
    share_id = new_id(bus.ferry("text", "readable"))
    listing = bus.ferry("shares")
    assert listing.returncode == EX_OK, listing.stderr
    assert share_id in listing.stdout
    shown = bus.ferry("show", share_id)
    assert shown.returncode == EX_OK, shown.stderr
    assert "awaiting-sign-in" in shown.stdout or "sign" in shown.stdout.lower()


def test_shares_writes_dates_as_iso_8601_without_a_locale_and_as_the_locale_does_with_one(bus):
    # Given a share
    share_id = new_id(bus.ferry("text", "dated"))
    # When it is listed under the C locale, the date is ISO 8601 (not the US order with a two-digit year)
    plain = bus.ferry("shares", env={"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    assert plain.returncode == EX_OK, plain.stderr
    row = next(line for line in plain.stdout.splitlines() if share_id in line)
    assert re.search(r"(^|\s)\d{4}-\d\d-\d\d \d\d:\d\d(\s|$)", row), row
    assert not re.search(r"\d\d/\d\d/\d\d", row), row
    # And under a German locale, as German writes a date
    german = bus.ferry("shares", env={"LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8"})
    assert german.returncode == EX_OK, german.stderr
    row = next(line for line in german.stdout.splitlines() if share_id in line)
    assert re.search(r"\d\d\.\d\d\.\d{4} \d\d:\d\d:\d\d", row), row


def test_show_accepts_a_unique_prefix_of_the_id(bus):
    share_id = new_id(bus.ferry("text", "prefix"))
    done = bus.ferry("show", share_id[:20], "--json")
    assert done.returncode == EX_OK, done.stderr
    assert json.loads(done.stdout)["id"] == share_id


def test_cancel_cancels(bus):
    share_id = new_id(bus.ferry("text", "to be cancelled"))
    done = bus.ferry("cancel", share_id)
    assert done.returncode == EX_OK, done.stderr
    assert bus.get_share(share_id)["state"] == "cancelled"


def test_version(bus):
    done = bus.ferry("--version")
    assert done.returncode == EX_OK, done.stderr
    assert re.search(r"\d+\.\d+", done.stdout), done.stdout


def test_help_lists_every_command(bus):
    done = bus.ferry("--help")
    assert done.returncode == EX_OK, done.stderr
    for command in ("open", "send", "text", "shares", "show", "cancel", "service"):
        assert re.search(rf"\b{command}\b", done.stdout), f"--help does not mention {command}:\n{done.stdout}"


@pytest.mark.parametrize("argv", [
    ["frobnicate"],
    ["send"],
    ["show"],
    ["cancel"],
    ["text"],
    ["shares", "--no-such-option"],
], ids=lambda argv: " ".join(argv) or "nothing")
def test_wrong_usage_exits_64(bus, argv):
    done = bus.ferry(*argv)
    assert done.returncode == EX_USAGE, (done.returncode, done.stderr)
    assert done.stderr.strip()


def test_non_utf8_text_is_refused_with_65(bus):
    # Given a command-line argument that is not valid UTF-8
    before = bus.share_ids()

    # When it is shared as text
    done = bus.ferry("text", b"caf\xe9 \xff")

    # Then it is bad input, said in a sentence, and nothing is shared
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
    assert done.stderr.startswith("ferry: "), done.stderr
    assert bus.share_ids() == before


def test_no_session_bus_exits_69(bus):
    done = bus.ferry("shares", env={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus.root}/no-such-bus"})
    assert done.returncode == EX_UNAVAILABLE, (done.returncode, done.stderr)
    assert done.stderr.startswith("ferry: "), done.stderr
    assert "session bus" in done.stderr, done.stderr
