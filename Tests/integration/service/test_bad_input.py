"""Bad input, every kind the issue lists: each is refused with a stable D-Bus error name and a
sentence that names the bad item; the command line exits with the documented code and prints the
same sentence; and the service stays up with everything it had already accepted."""

from __future__ import annotations

import os
import re
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
from gi.repository import GLib

from ferryenv import (EX_DATAERR, EX_NOINPUT, FerrySession, file_uri, sha256, write_png)


@dataclass
class BadInput:
    """One bad input, as a Share intent and (where the command line can say it) as ferry argv."""

    intent: dict[str, Any]
    errors: tuple[str, ...]           # acceptable short error names (one, except where the platform decides)
    names: tuple[str, ...] = ()       # what the sentence must mention
    argv: list[Any] | None = None     # the same input through the command line
    exit_code: int | dict[str, int] = EX_DATAERR  # or by the error the service chose
    keep: list[Any] = field(default_factory=list)  # objects to keep alive (sockets)


def _good(tmp: Path) -> Path:
    return write_png(tmp / "good.png", seed=5)


def missing(tmp):
    path = tmp / "missing.png"
    return BadInput({"uris": [file_uri(path)]}, ("FileNotFound",), ("missing.png",), ["send", path], EX_NOINPUT)


def directory(tmp):
    path = tmp / "a-folder"
    path.mkdir()
    write_png(path / "inside.png")
    return BadInput({"uris": [file_uri(path)]}, ("IsDirectory",), ("a-folder",), ["send", path])


def fifo(tmp):
    path = tmp / "pipe.png"
    os.mkfifo(path)
    return BadInput({"uris": [file_uri(path)]}, ("NotRegularFile",), ("pipe.png",), ["send", path])


def unix_socket(tmp):
    path = tmp / "listening.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    return BadInput({"uris": [file_uri(path)]}, ("NotRegularFile",), ("listening.sock",), ["send", path],
                    keep=[listener])


def dev_zero(tmp):
    return BadInput({"uris": ["file:///dev/zero"]}, ("NotRegularFile",), ("/dev/zero",), ["send", "/dev/zero"])


def dev_urandom(tmp):
    return BadInput({"uris": ["file:///dev/urandom"]}, ("NotRegularFile",), ("/dev/urandom",),
                    ["send", "/dev/urandom"])


def symlink_loop(tmp):
    a, b = tmp / "loop-a.png", tmp / "loop-b.png"
    a.symlink_to(b.name)
    b.symlink_to(a.name)
    return BadInput({"uris": [file_uri(a)]}, ("SymlinkLoop",), ("loop-a.png",), ["send", a])


def dangling_symlink(tmp):
    link = tmp / "dangling.png"
    link.symlink_to(tmp / "gone.png")
    return BadInput({"uris": [file_uri(link)]}, ("DanglingSymlink",), ("dangling.png",), ["send", link], EX_NOINPUT)


def empty_file(tmp):
    path = tmp / "empty.png"
    path.write_bytes(b"")
    return BadInput({"uris": [file_uri(path)]}, ("EmptyFile",), ("empty.png",), ["send", path])


def empty_share(tmp):
    return BadInput({}, ("EmptyShare",))


def empty_uris(tmp):
    return BadInput({"uris": []}, ("EmptyShare",))


def empty_text(tmp):
    return BadInput({"text": ""}, ("EmptyText",), (), ["text", ""])


def blank_text(tmp):
    return BadInput({"text": " \n\t "}, ("EmptyText",), (), ["text", " \n\t "])


def text_too_long(tmp):
    text = "x" * 32_769
    return BadInput({"text": text}, ("TextTooLong",), ("text",), ["text", text])


def message_too_long(tmp):
    good, message = _good(tmp), "m" * 32_769
    return BadInput({"uris": [file_uri(good)], "message": message}, ("TextTooLong",), ("message",),
                    ["send", good, "--message", message])


def subject_too_long(tmp):
    subject = "s" * 1_025
    return BadInput({"text": "hello", "subject": subject}, ("TextTooLong",), ("subject",),
                    ["text", "hello", "--subject", subject])


def uris_as_string(tmp):
    good = _good(tmp)
    return BadInput({"uris": GLib.Variant("s", file_uri(good))}, ("InvalidArgument",), ("uris",))


def uris_as_integers(tmp):
    return BadInput({"uris": GLib.Variant("ai", [1, 2])}, ("InvalidArgument",), ("uris",))


def text_as_integer(tmp):
    return BadInput({"text": GLib.Variant("i", 7)}, ("InvalidArgument",), ("text",))


def destinations_as_string(tmp):
    good = _good(tmp)
    return BadInput({"uris": [file_uri(good)], "destinations": GLib.Variant("s", "!room:example.org")},
                    ("InvalidArgument",), ("destinations",))


def message_with_text_and_no_files(tmp):
    return BadInput({"text": "hello", "message": "and a message"}, ("InvalidArgument",), ("message",))


def mailto_scheme(tmp):
    uri = "mailto:someone@example.org"
    return BadInput({"uris": [uri]}, ("UnsupportedScheme",), ("mailto",), ["open", uri])


def sftp_location_not_mounted(tmp):
    # Without GVfs's sftp backend the scheme is unsupported; with it, the location is not mounted.
    uri = "sftp://nobody@host.invalid/home/nobody/photo.png"
    return BadInput({"uris": [uri]}, ("UnsupportedScheme", "RemoteReadFailed"), ("sftp",), ["open", uri],
                    exit_code={"UnsupportedScheme": EX_DATAERR, "RemoteReadFailed": EX_NOINPUT})


def file_uri_with_remote_host(tmp):
    uri = "file://otherhost/etc/hosts"
    return BadInput({"uris": [uri]}, ("RemoteHost",), ("otherhost",), ["open", uri])


def ferry_uri_that_is_not_share(tmp):
    uri = "ferry:frobnicate?text=hello"
    return BadInput({"uris": [uri]}, ("InvalidURI",), ("frobnicate",), ["open", uri])


def not_a_uri(tmp):
    return BadInput({"uris": ["no scheme at all"]}, ("InvalidURI",), ("no scheme at all",))


def invalid_destination(tmp):
    good = _good(tmp)
    return BadInput({"uris": [file_uri(good)], "destinations": ["bogus-room"]}, ("InvalidDestination",),
                    ("bogus-room",), ["send", good, "--to", "bogus-room"])


def one_bad_among_good(tmp):
    first, last = write_png(tmp / "first.png", seed=1), write_png(tmp / "last.png", seed=2)
    bad = tmp / "the-missing-one.png"
    return BadInput({"uris": [file_uri(first), file_uri(bad), file_uri(last)]}, ("FileNotFound",),
                    ("the-missing-one.png",), ["send", first, bad, last], EX_NOINPUT)


def one_empty_among_good(tmp):
    first, last = write_png(tmp / "first.png", seed=1), write_png(tmp / "last.png", seed=2)
    bad = tmp / "zero-bytes.png"
    bad.write_bytes(b"")
    return BadInput({"uris": [file_uri(first), file_uri(last), file_uri(bad)]}, ("EmptyFile",),
                    ("zero-bytes.png",), ["send", first, last, bad])


CASES: list[Callable[[Path], BadInput]] = [
    missing, directory, fifo, unix_socket, dev_zero, dev_urandom, symlink_loop, dangling_symlink, empty_file,
    empty_share, empty_uris, empty_text, blank_text, text_too_long, message_too_long, subject_too_long,
    uris_as_string, uris_as_integers, text_as_integer, destinations_as_string, message_with_text_and_no_files,
    mailto_scheme, sftp_location_not_mounted, file_uri_with_remote_host, ferry_uri_that_is_not_share, not_a_uri,
    invalid_destination, one_bad_among_good, one_empty_among_good,
]

# Inputs only a D-Bus client can make: the command line types its own a{sv}.
D_BUS_ONLY = {empty_share, empty_uris, uris_as_string, uris_as_integers, text_as_integer, destinations_as_string,
              message_with_text_and_no_files, not_a_uri}
CLI_CASES = [case for case in CASES if case not in D_BUS_ONLY]


@dataclass
class Baseline:
    """What the service had before a bad call, to check it still has it afterwards."""

    pid: int
    share_id: str
    share: dict
    staged_sha: str
    ids: list[str]
    spool: set[str]

    @classmethod
    def take(cls, session: FerrySession, share_id: str) -> "Baseline":
        pid = session.name_owner_pid()
        assert pid, "the service is not running"
        return cls(pid, share_id, session.get_share(share_id), sha256(session.spool_dir(share_id) / "0"),
                   session.share_ids(), session.spool_entries())

    def assert_unharmed(self, session: FerrySession) -> None:
        assert session.name_owner_pid() == self.pid, "the service crashed or was restarted by bad input"
        assert session.get_share(self.share_id) == self.share, "an earlier share changed"
        assert sha256(session.spool_dir(self.share_id) / "0") == self.staged_sha
        assert session.share_ids() == self.ids, "a share was created from bad input"
        assert session.spool_entries() == self.spool, "bad input left files in the spool"


@pytest.fixture(scope="module")
def earlier_share(bus, tmp_path_factory) -> str:
    """A share accepted before any bad input, that must survive all of it."""
    photo = write_png(tmp_path_factory.mktemp("earlier") / "earlier.png", seed=9)
    return bus.share_ok(uris=[file_uri(photo)], message="accepted before the bad input")


def assert_names(message: str, names: tuple[str, ...]) -> None:
    for name in names:
        assert name in message, f"the sentence {message!r} does not name {name!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_bad_share_is_refused_by_name_and_harms_nothing(bus, earlier_share, tmp_path, case):
    # Given a running service holding an earlier share, and a bad input
    bad = case(tmp_path)
    baseline = Baseline.take(bus, earlier_share)

    # When a client passes the bad input to Share
    started = time.monotonic()
    reply = bus.share(timeout=10, **bad.intent)
    elapsed = time.monotonic() - started

    # Then it is refused at once with a documented error whose sentence names the bad item
    assert not reply.ok, f"accepted: {reply.stdout}"
    assert reply.error_name in {f"io.github.ferryshare.Ferry.Error.{e}" for e in bad.errors}, reply.stderr
    assert_names(reply.error_message, bad.names)
    assert elapsed < 5, f"refusing took {elapsed:.1f} s"
    # And the service is up with everything it had
    baseline.assert_unharmed(bus)


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda case: case.__name__)
def test_bad_input_on_the_command_line_exits_with_the_same_sentence(bus, earlier_share, tmp_path, case):
    # Given the same bad input, said on the command line
    bad = case(tmp_path)
    assert bad.argv is not None
    baseline = Baseline.take(bus, earlier_share)
    reply = bus.share(timeout=10, **bad.intent)
    assert not reply.ok

    # When ferry is run with it
    done = bus.ferry(*bad.argv, timeout=10)

    # Then it exits with the documented code and prints the service's sentence
    expected = bad.exit_code if isinstance(bad.exit_code, int) else bad.exit_code[reply.error_name.rsplit(".", 1)[-1]]
    assert done.returncode == expected, (done.returncode, done.stderr)
    assert f"ferry: {reply.error_message}" in done.stderr, (
        f"stderr {done.stderr!r} does not carry the sentence {reply.error_message!r}")
    assert done.stdout == "", "nothing on standard output when nothing was shared"
    baseline.assert_unharmed(bus)


def test_busctl_uris_as_a_string_is_an_invalid_argument(bus, earlier_share):
    # Given the service with an earlier share
    baseline = Baseline.take(bus, earlier_share)

    # When busctl passes "uris" as a string instead of an array
    reply = bus.busctl_call("Share", "a{sv}", "1", "uris", "s", "file:///x")

    # Then the call fails with a sentence about "uris", and nothing else changes
    assert reply.returncode != 0
    assert "uris" in reply.error_message, reply.error_message
    baseline.assert_unharmed(bus)


def test_ten_thousand_uris_are_refused_at_once(bus, earlier_share):
    # Given the service with an earlier share, and 10,000 URIs (files that do not even exist)
    baseline = Baseline.take(bus, earlier_share)
    uris = [f"file:///nonexistent/{n}.png" for n in range(10_000)]

    # When busctl passes them in one Share call
    reply = bus.busctl_call("Share", "a{sv}", "1", "uris", "as", str(len(uris)), *uris, timeout=15)

    # Then they are refused as too many (not as a missing file: the count is checked first)
    assert reply.returncode != 0
    assert re.search(r"10[,.\u202f\u00a0 ]?000", reply.error_message), reply.error_message
    assert "1,000" in reply.error_message or "1000" in reply.error_message, reply.error_message
    baseline.assert_unharmed(bus)


def test_ten_thousand_files_through_open_are_too_many_items(bus, earlier_share, tmp_path):
    # Given 10,000 paths given to gapplication launch (org.freedesktop.Application.Open)
    baseline = Baseline.take(bus, earlier_share)
    paths = [f"/nonexistent/{n}.png" for n in range(10_000)]

    # When they are opened as one
    done = bus.run("gapplication", "launch", "io.github.ferryshare.Ferry", *paths, timeout=20)

    # Then Open fails with TooManyItems
    assert done.returncode != 0
    assert "io.github.ferryshare.Ferry.Error.TooManyItems" in done.stderr, done.stderr
    baseline.assert_unharmed(bus)


def test_cancel_of_an_unknown_share_is_no_such_share(bus, earlier_share):
    baseline = Baseline.take(bus, earlier_share)
    unknown = "01hzzzzzzzzzzzzzzzzzzzzzzz"
    reply = bus.gdbus_call("Cancel", GLib.Variant("s", unknown))
    assert unknown in reply.expect_error("NoSuchShare")
    done = bus.ferry("cancel", unknown)
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
    assert "ferry: " in done.stderr
    baseline.assert_unharmed(bus)


def test_get_share_of_an_unknown_share_is_no_such_share(bus, earlier_share):
    unknown = "01hzzzzzzzzzzzzzzzzzzzzzzz"
    reply = bus.gdbus_call("GetShare", GLib.Variant("s", unknown))
    assert unknown in reply.expect_error("NoSuchShare")
    done = bus.ferry("show", unknown)
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
