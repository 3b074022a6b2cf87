"""The configurable limits (FERRY_MAX_FILE_SIZE, FERRY_MAX_ITEMS, from the bus daemon's environment
as an activated service sees it) and files this user cannot read."""

from __future__ import annotations

import os

import pytest

from ferryenv import EX_DATAERR, EX_NOINPUT, file_uri, png_bytes, write_png


@pytest.fixture(scope="module")
def small_limits(new_session):
    """A session whose service accepts files up to 1,000 bytes and 3 files a share."""
    session = new_session(FERRY_MAX_FILE_SIZE="1000", FERRY_MAX_ITEMS="3")
    yield session
    session.stop()


def sized_file(path, size: int):
    image = png_bytes()
    path.write_bytes(image + b"\0" * (size - len(image)))
    assert path.stat().st_size == size
    return path


def test_file_at_the_size_limit_is_accepted(small_limits, tmp_path):
    exact = sized_file(tmp_path / "exactly-1000.png", 1000)
    share = small_limits.get_share(small_limits.share_ok(uris=[file_uri(exact)]))
    assert share["items"][0]["size"] == 1000


def test_file_over_the_size_limit_is_refused_by_name(small_limits, tmp_path):
    # Given a file one byte over the limit
    big = sized_file(tmp_path / "one-too-big.png", 1001)
    before = small_limits.share_ids()

    # When it is shared through D-Bus and through the command line
    reply = small_limits.share(uris=[file_uri(big)])
    done = small_limits.ferry("send", big)

    # Then both refuse it as too large, naming it, and nothing is shared
    message = reply.expect_error("FileTooLarge")
    assert "one-too-big.png" in message
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
    assert f"ferry: {message}" in done.stderr
    assert small_limits.share_ids() == before


def test_as_many_files_as_the_limit_are_accepted(small_limits, tmp_path):
    files = [write_png(tmp_path / f"{n}.png", seed=n) for n in range(3)]
    share = small_limits.get_share(small_limits.share_ok(uris=[file_uri(f) for f in files]))
    assert len(share["items"]) == 3


def test_more_files_than_the_limit_are_refused(small_limits, tmp_path):
    # Given one file more than the limit
    files = [write_png(tmp_path / f"{n}.png", seed=n) for n in range(4)]
    before = small_limits.share_ids()
    pid = small_limits.name_owner_pid()

    # When they are shared in one call, and with the command line
    reply = small_limits.share(uris=[file_uri(f) for f in files])
    done = small_limits.ferry("send", *files)

    # Then both refuse them as too many, saying the limit, and the service carries on
    message = reply.expect_error("TooManyItems")
    assert "3" in message and "4" in message, message
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
    assert f"ferry: {message}" in done.stderr
    assert small_limits.share_ids() == before
    assert small_limits.name_owner_pid() == pid


# -- unreadable files ---------------------------------------------------------------------------------
#
# Tests usually run as root, for whom mode 000 still reads. The session below runs the bus, the
# service it activates and the clients without the capabilities that bypass file permissions
# (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, dropped from the bounding and inheritable sets so no
# child gets them back), which makes root obey mode bits like any user.

DROP_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
            "--inh-caps", "-dac_override,-dac_read_search", "--"]


@pytest.fixture(scope="module")
def no_override(new_session):
    session = new_session(wrapper=DROP_DAC if os.geteuid() == 0 else ())
    yield session
    session.stop()


def unreadable_file(tmp_path):
    path = write_png(tmp_path / "locked.png")
    path.chmod(0o000)
    return path, "locked.png"


def file_in_closed_folder(tmp_path):
    folder = tmp_path / "closed-folder"
    folder.mkdir()
    path = write_png(folder / "behind.png")
    folder.chmod(0o000)
    return path, "behind.png"


@pytest.mark.parametrize("make", [unreadable_file, file_in_closed_folder], ids=lambda f: f.__name__)
def test_file_this_user_cannot_read_is_permission_denied(no_override, tmp_path, make):
    # Given a file the session's user cannot read (checked with cat as that user)
    path, name = make(tmp_path)
    try:
        assert no_override.run("cat", path).returncode != 0, "the test user can read the file"
        earlier = no_override.share_ok(text="earlier")
        pid = no_override.name_owner_pid()

        # When it is shared through D-Bus and the command line
        reply = no_override.share(uris=[file_uri(path)])
        done = no_override.ferry("send", path)

        # Then both say permission denied, naming it; the service is up and the earlier share there
        message = reply.expect_error("PermissionDenied")
        assert name in message, message
        assert done.returncode == EX_NOINPUT, (done.returncode, done.stderr)
        assert f"ferry: {message}" in done.stderr
        assert no_override.name_owner_pid() == pid
        assert no_override.get_share(earlier)["state"] == "awaiting-sign-in"
    finally:
        for p in (tmp_path / "closed-folder", path):
            if p.exists() or p.is_symlink():
                p.chmod(0o700)


def test_a_share_that_would_fill_the_disk_is_refused_before_any_copy_and_texts_still_go(new_session, tmp_path):
    # Given a service whose disk reserve is more than this disk has free
    session = new_session(FERRY_DISK_RESERVE=str(2**62))
    photo = write_png(tmp_path / "no-room.png")

    # When a file is shared through D-Bus and through the command line
    reply = session.share(uris=[file_uri(photo)])
    done = session.ferry("send", photo)

    # Then both are refused with NotEnoughSpace, a sentence about free space, and exit 74;
    # nothing was staged and the service is still up
    assert "free disk space" in reply.expect_error("NotEnoughSpace")
    assert done.returncode == 74, (done.returncode, done.stderr)
    assert "free disk space" in done.stderr
    assert session.share_ids() == []
    assert session.spool_entries() == set()
    # And a text, which needs no copy, is still accepted
    session.share_ok(text="words take no disk space worth counting")
    session.stop()


def test_a_text_too_large_as_the_server_counts_it_is_refused_at_intake(bus):
    # Given words under each field's own limit that make an event over the server's 65,536 bytes:
    # control characters are six bytes each in the event's JSON, and a message goes out with its link
    escaped = "\u0001" * 12_000
    link, message = "https://example.org/" + "a" * 32_000, "m" * 32_000
    before = bus.share_ids()

    # When they are shared, through D-Bus and the command line
    first = bus.share(text=escaped, destinations=["!room:example.org"])
    second = bus.share(text=link, message=message, destinations=["!room:example.org"])
    done = bus.ferry("text", "-", "--to", "!room:example.org", input=escaped)

    # Then each is refused with TextTooLong and a sentence saying "as sent", exit 65; nothing was accepted
    assert "as sent" in first.expect_error("TextTooLong")
    assert "as sent" in second.expect_error("TextTooLong")
    assert done.returncode == EX_DATAERR, (done.returncode, done.stderr)
    assert bus.share_ids() == before
