"""Exactly one service owns the state directory: a second `ferry service` (another bus, the same home)
exits at once, says why, and touches neither the spool nor the outbox."""

from __future__ import annotations

import os

from ferryenv import file_uri, write_png


def test_a_second_service_on_another_bus_exits_at_once_and_changes_nothing(fresh_bus, new_session, tmp_path):
    session = fresh_bus
    # Given a running service with a share waiting, and a stray spool directory
    # that only the first service's start-up sweep may remove
    share_id = session.share_ok(uris=[file_uri(write_png(session.files / "kept.png"))])
    pid = session.name_owner_pid()
    state = session.get_share(share_id)["state"]
    stray = session.state_dir / "spool" / "stray-left-by-a-crash"
    stray.mkdir(parents=True)
    database = session.database
    before = (database.stat().st_mtime_ns, sorted(os.listdir(session.state_dir / "spool")))

    # When a second service starts for the same state directory on a bus of its own
    other = new_session()
    done = other.run(session.prefix / "bin" / "ferry", "service", "--idle-timeout", "2", timeout=20,
                     env={"XDG_STATE_HOME": session.env["XDG_STATE_HOME"]})

    # Then it exits at once with "try again later", naming the owner, and nothing changed
    assert done.returncode == 75, (done.returncode, done.stderr)
    assert "another Ferry service" in done.stderr and str(pid) in done.stderr, done.stderr
    assert (database.stat().st_mtime_ns, sorted(os.listdir(session.state_dir / "spool"))) == before
    assert not other.name_has_owner("io.github.ferryshare.Ferry")
    # And the first service still has the share
    assert session.name_owner_pid() == pid
    assert session.get_share(share_id)["state"] == state
    other.stop()
