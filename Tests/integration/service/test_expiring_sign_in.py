"""Sign-ins whose access tokens expire (Matrix 1.3 refresh tokens), against Synapse's own: on its
server here an access token lasts three seconds, so every share below meets an expired one.

What must hold: a share goes out after one renewal and nobody is asked to sign in; the renewed
pair is kept where the sign-in is (the keyring, or the private file) before it is used, so a
restart, or a kill -9 between the server's answer and the keeping, never strands the sign-in; a
renewal the server refuses signs the account out with its shares kept, as an ended sign-in does.
Everything is read back from the server with the test's own token, and from the keyring over
the bus."""

from __future__ import annotations

import json
import threading
import time

import pytest

from ferryenv import EX_OK, wait_for
from hostileproxy import HostileProxy
from nioreaders import NioReader, reader_python
from matrixflow import (binary_bytes, bodies, files_containing, kept_pairs, sign_in, sign_in_call,
                        wait_for_state, wait_until_sent)

LIFETIME = 3


@pytest.fixture(scope="module")
def expiring(new_homeserver):
    """A Synapse whose refreshable access tokens last LIFETIME seconds."""
    server = new_homeserver(config={"refreshable_access_token_lifetime": f"{LIFETIME}s"})
    yield server
    server.stop()


def let_expire() -> None:
    time.sleep(LIFETIME + 1)


def test_a_password_sign_in_that_expires_is_renewed_and_shares_go_out_without_asking(new_session, expiring):
    # Given Ferry signed in with a password, keeping its sign-in in gnome-keyring
    session = new_session()
    session.start_keyring()
    user = expiring.new_user("expiring")
    room = expiring.create_room(user.token, name="Expiring tokens")
    sign_in(session, expiring, user)
    [first] = kept_pairs(session)
    # The server gave a refresh token and a lifetime, and Ferry keeps both, in the keyring only
    assert 0 < first["lifetime_ms"] <= LIFETIME * 1000
    assert files_containing(session.state_dir, first["refresh_token"].encode()) == []

    # When the access token has expired, and two texts and a file are sent
    let_expire()
    photo = session.files / "after-expiry.txt"
    photo.write_text("written while the token expired\n")
    for text in ("first after expiry", "second after expiry"):
        done = session.ferry("text", text, "--to", room)
        assert done.returncode == EX_OK, done.stderr
    done = session.ferry("send", photo, "--to", room)
    assert done.returncode == EX_OK, done.stderr

    # Then each arrived once, and Ferry is still signed in, nobody asked
    events = expiring.wait_for_messages(user.token, room, count=3)
    assert bodies(events) == ["first after expiry", "second after expiry", "after-expiry.txt"]
    assert session.signed_in()
    # And the keyring holds a renewed pair now (the refresh token rotated), one for this account
    [renewed] = kept_pairs(session)
    assert renewed["access_token"] != first["access_token"]
    assert renewed["refresh_token"] != first["refresh_token"]
    # And no token of either pair is in Ferry's log
    log = session.log_path.read_text(errors="replace")
    for pair in (first, renewed):
        assert pair["access_token"] not in log and pair["refresh_token"] not in log

    # When the service is killed, the token expires again, and a text is sent by a new service
    session.kill_service()
    let_expire()
    done = session.ferry("text", "after a restart", "--to", room)

    # Then it arrives: the restart read the newest pair, whose refresh token still worked
    assert done.returncode == EX_OK, done.stderr
    events = expiring.wait_for_messages(user.token, room, count=4)
    assert bodies(events)[-1] == "after a restart"
    assert session.signed_in()


def test_a_kill_between_the_servers_renewal_and_its_keeping_strands_nothing(new_session, expiring):
    # Given Ferry signed in through a proxy in front of the expiring server, its sign-in in the keyring
    proxy = HostileProxy(expiring).start()
    session = new_session()
    answer = threading.Event()
    try:
        session.start_keyring()
        user = expiring.new_user("killedrenewal")
        room = expiring.create_room(user.token, name="Killed during a renewal")
        sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
        [before] = kept_pairs(session)
        # And the server's answer to the next renewal held back at the proxy
        renewal = proxy.answer("POST", r"/_matrix/client/v3/refresh", passthrough=True, hold_answer=answer)

        # When the token has expired and a text is shared, and the service is killed with -9 once the
        # server has rotated the pair (its answer on the way, not yet read by Ferry)
        let_expire()
        share_id = session.share_ok(text="shared across a killed renewal", destinations=[room])
        wait_for(lambda: renewal.done == 1, timeout=30, what="the server to answer the renewal")
        session.kill_service()
        answer.set()
        # The keyring still holds the pair from before: the new one was never read
        assert kept_pairs(session) == [before]

        # Then a new service renews with the kept (spent, never-used) refresh token: Synapse takes it
        # again as the access token it was exchanged for was never used, and the share goes out once
        wait_until_sent(session, [share_id])
        events = expiring.wait_for_messages(user.token, room, count=1)
        assert bodies(events) == ["shared across a killed renewal"]
        # (The first answer died with the killed service's connection: the proxy logs only the second.)
        assert renewal.done == 1
        refreshes = [status for (method, path, status) in proxy.log if path.endswith("/refresh")]
        assert refreshes == [200], proxy.log
        assert session.signed_in()
        [after] = kept_pairs(session)
        assert after["refresh_token"] != before["refresh_token"]
    finally:
        answer.set()
        session.stop()
        proxy.stop()


def test_a_renewal_the_server_refuses_signs_out_and_keeps_the_share(new_session, expiring):
    # Given Ferry signed in with a password, without a keyring (the sign-in in a private file)
    session = new_session()
    user = expiring.new_user("refusedrenewal")
    room = expiring.create_room(user.token, name="Refused renewal")
    sign_in(session, expiring, user)
    [kept_file] = list(session.state_dir.rglob("access-token-*"))
    first = json.loads(kept_file.read_text())
    # And a share after expiry that renews the pair and uses the new access token
    let_expire()
    done = session.ferry("text", "renewed once", "--to", room)
    assert done.returncode == EX_OK, done.stderr
    assert json.loads(kept_file.read_text())["refresh_token"] != first["refresh_token"]

    # When the service is stopped and the first pair put back (as from a backup): its refresh token
    # is spent and the access token it was exchanged for has been used
    session.kill_service()
    kept_file.write_text(json.dumps(first))
    let_expire()
    share_id = session.share_ok(text="after a refused renewal", destinations=[room])

    # Then Synapse refuses the renewal, Ferry is signed out, and the share waits for a sign-in
    wait_for_state(session, share_id, "awaiting-sign-in", timeout=30)
    assert not session.signed_in()
    assert not kept_file.exists()
    # And once the person signs in again it goes out, once
    sign_in(session, expiring, user)
    wait_until_sent(session, [share_id])
    events = expiring.wait_for_messages(user.token, room, count=2)
    assert bodies(events) == ["renewed once", "after a refused renewal"]


def test_an_upload_starts_with_a_fresh_token_and_one_that_outlives_any_token_fails_saying_so(new_session, expiring):
    # Given Ferry signed in through a proxy that reads uploads at 256 KiB a second (Synapse checks the
    # token once the whole body is in)
    proxy = HostileProxy(expiring).start()
    session = new_session()
    try:
        user = expiring.new_user("slowuploads")
        room = expiring.create_room(user.token, name="Slow uploads")
        sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
        proxy.answer("POST", r"/_matrix/media/v3/upload", passthrough=True, throttle=256 * 1024, times=2)
        small, large = session.files / "two-seconds.bin", session.files / "five-seconds.bin"
        small.write_bytes(binary_bytes(2 * 256 * 1024, seed=1))
        large.write_bytes(binary_bytes(5 * 256 * 1024, seed=2))

        # When a file taking two seconds to upload is sent with a token over a second old by the time
        # the upload starts (not yet near its end, where any request renews it first)
        time.sleep(1.0)
        done = session.ferry("send", small, "--to", room)

        # Then it was renewed before the upload: one upload, taken at once
        assert done.returncode == EX_OK, done.stderr
        uploads = [status for (method, path, status) in proxy.log if "/media/v3/upload" in path]
        assert uploads == [200], [(method, path[:60], status) for (method, path, status) in proxy.log]

        # When a file taking five seconds, longer than any token lives, is sent
        done = session.ferry("send", large, "--to", room)

        # Then it fails at once with a sentence saying why, not retried forever, and Ferry stays signed in
        assert done.returncode != EX_OK
        assert "ends each sign-in after 3 seconds" in done.stderr, done.stderr
        uploads = [status for (method, path, status) in proxy.log if "/media/v3/upload" in path]
        assert uploads == [200, 401], proxy.log
        assert session.signed_in()
        assert bodies(expiring.messages(user.token, room)) == ["two-seconds.bin"]
    finally:
        session.stop()
        proxy.stop()


def test_an_encrypted_room_keeps_working_across_renewals(new_session, expiring, tmp_path):
    # Given Ferry signed in on the expiring server, and a friend reading with libolm's matrix-nio
    # in an encrypted room with Ferry's person
    session = new_session()
    me, friend = expiring.new_user("encexpiring"), expiring.new_user("encreader")
    reader = NioReader(reader_python("nio25"), tmp_path / "reader", expiring.base_url, friend.user_id,
                       friend.password)
    try:
        room = expiring.create_room(me.token, name="Encrypted, expiring", encrypted=True, invite=[friend.user_id])
        expiring.join(friend.token, room)
        sign_in(session, expiring, me)

        # When texts are shared with a token expired before each (keys claimed, shared and the
        # room's readers tracked under three access tokens in turn)
        for text in ("first secret", "second secret"):
            let_expire()
            done = session.ferry("text", text, "--to", room)
            assert done.returncode == EX_OK, done.stderr

        # Then the reader decrypts both, and Ferry is still signed in
        texts = [e["content"]["body"] for e in reader.encrypted_messages(room)
                 if e["sender"] == me.user_id and e["decrypted"]]
        assert texts == ["first secret", "second secret"]
        assert session.signed_in()
    finally:
        reader.close()
        session.stop()
