"""What Ferry promises about a share once Share has returned: it is on disk (a crash loses
nothing), its files are Ferry's own copies (the originals may go), and it is private."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import stat

from ferryenv import file_uri, pdf_bytes, sha256, wait_for, write_png


def test_share_survives_kill_9_right_after_share_returns(fresh_bus, tmp_path):
    # Given a share of two files, just accepted
    photo = write_png(tmp_path / "crash.png")
    paper = tmp_path / "crash.pdf"
    paper.write_bytes(pdf_bytes())
    share_id = fresh_bus.share_ok(uris=[file_uri(photo), file_uri(paper)], message="before the crash",
                                  destinations=["!room:example.org"])
    pid = fresh_bus.name_owner_pid()

    # When the service is killed with SIGKILL at once (before anything else can run)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not fresh_bus.service_running(), timeout=10, what="the killed service to leave the bus")

    # Then the next call re-activates a new service that has the share, unchanged
    share = fresh_bus.get_share(share_id)
    assert fresh_bus.name_owner_pid() not in (None, pid)
    assert share["state"] == "awaiting-sign-in"
    assert share["message"] == "before the crash"
    assert share["destinations"] == ["!room:example.org"]
    assert [(i["name"], i["content-type"], i["size"]) for i in share["items"]] == [
        ("crash.png", "image/png", photo.stat().st_size),
        ("crash.pdf", "application/pdf", paper.stat().st_size),
    ]
    assert sha256(fresh_bus.spool_dir(share_id) / "0") == sha256(photo)
    assert sha256(fresh_bus.spool_dir(share_id) / "1") == sha256(paper)


def test_every_share_is_listed_again_after_a_restart(fresh_bus, tmp_path):
    # Given three shares in different shapes, and one of them cancelled
    photo = write_png(tmp_path / "restart.png")
    ids = [fresh_bus.share_ok(uris=[file_uri(photo)]), fresh_bus.share_ok(text="a text"),
           fresh_bus.share_ok(text="https://example.org/")]
    fresh_bus.gdbus_call("Cancel", _s(ids[1])).expect_ok()
    before = {share["id"]: share for share in fresh_bus.list_shares()}

    # When the service is killed and comes back
    fresh_bus.kill_service()
    after = {share["id"]: share for share in fresh_bus.list_shares()}

    # Then every share is there, each in the state it was in
    assert after == before
    assert after[ids[1]]["state"] == "cancelled"


def test_a_start_removes_copies_no_share_needs_and_keeps_the_ones_that_wait(fresh_bus, tmp_path):
    # Given a file share waiting for sign-in, and the copies a crash between staging and commit
    # left behind for a share that never was
    photo = write_png(tmp_path / "waiting.png")
    waiting = fresh_bus.share_ok(uris=[file_uri(photo)])
    fresh_bus.kill_service()
    orphan = fresh_bus.spool_dir("01kzzzzzzzzzzzzzzzzzzzzzzz")
    orphan.mkdir(mode=0o700)
    (orphan / "0").write_bytes(b"half a copy")

    # When the service starts again
    assert fresh_bus.get_share(waiting)["state"] == "awaiting-sign-in"

    # Then the orphaned copies are gone, and the waiting share still has its file
    assert fresh_bus.spool_entries() == {waiting}
    assert sha256(fresh_bus.spool_dir(waiting) / "0") == sha256(photo)


def test_deleting_the_original_leaves_the_staged_copy_intact(bus, tmp_path):
    # Given a shared file, and a copy kept aside
    original = tmp_path / "delete-me.png"
    original.write_bytes(os.urandom(64 * 1024) + write_png(tmp_path / "seed.png").read_bytes())
    kept = tmp_path / "kept-copy"
    shutil.copyfile(original, kept)
    share_id = bus.share_ok(uris=[file_uri(original)])

    # When the original is deleted
    original.unlink()

    # Then the staged copy is byte for byte the file as it was shared
    staged = bus.spool_dir(share_id) / "0"
    assert sha256(staged) == sha256(kept)
    assert bus.get_share(share_id)["items"][0]["size"] == kept.stat().st_size


def test_changing_the_original_does_not_change_the_staged_copy(bus, tmp_path):
    # Given a shared file
    original = write_png(tmp_path / "edit-me.png", seed=3)
    shared_sha = sha256(original)
    share_id = bus.share_ok(uris=[file_uri(original)])

    # When the original is overwritten in place and grown
    with open(original, "r+b") as handle:
        handle.write(b"\xff" * 16)
        handle.seek(0, os.SEEK_END)
        handle.write(b"appended")

    # Then the staged copy is still what was shared
    assert sha256(bus.spool_dir(share_id) / "0") == shared_sha


def test_each_file_is_staged_at_its_position(bus, tmp_path):
    files = [write_png(tmp_path / f"pos{n}.png", seed=n) for n in range(3)]
    share_id = bus.share_ok(uris=[file_uri(f) for f in files])
    spool = bus.spool_dir(share_id)
    assert sorted(os.listdir(spool)) == ["0", "1", "2"]
    for position, original in enumerate(files):
        assert sha256(spool / str(position)) == sha256(original)


def test_state_is_private(bus, tmp_path):
    # Given a share with a staged file
    share_id = bus.share_ok(uris=[file_uri(write_png(tmp_path / "private.png"))])

    # Then the state directory, the database, the spool and the staged file are the user's alone
    def mode(path):
        return stat.S_IMODE(os.stat(path).st_mode)

    assert mode(bus.state_dir) == 0o700
    assert mode(bus.database) == 0o600
    assert mode(bus.state_dir / "spool") == 0o700
    assert mode(bus.spool_dir(share_id)) == 0o700
    assert mode(bus.spool_dir(share_id) / "0") == 0o600
    for sidecar in ("-wal", "-shm"):
        path = bus.database.with_name(bus.database.name + sidecar)
        if path.exists():
            assert mode(path) & 0o077 == 0, f"{path} is readable by others: {oct(mode(path))}"


def test_database_is_in_wal_mode(bus):
    bus.list_shares()  # the service has opened its outbox
    connection = sqlite3.connect(f"file:{bus.database}?mode=ro", uri=True)
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()


def _s(value: str):
    from gi.repository import GLib

    return GLib.Variant("s", value)
