"""The real-homeserver harness itself: if these fail, no Matrix test of Ferry can be believed.

Each test checks a harness method against what Synapse really does, with the facts Ferry's sender
relies on (ordering, idempotent transaction ids, 401/413/429 shapes) asserted along the way.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

from homeserver import Homeserver, HomeserverError, MatrixError


def bodies(events):
    return [e["content"]["body"] for e in events]


def test_a_registered_user_signs_in_and_keeps_its_device_when_signing_in_again(homeserver):
    # given an account made through the shared-secret registration API
    localpart, password = f"alice-{uuid.uuid4().hex[:8]}", "correct horse"
    user_id = homeserver.register(localpart, password)
    assert user_id == f"@{localpart}:ferry.test"
    # when it signs in, and again naming the same device
    token, device_id = homeserver.login(localpart, password)
    again, same_device = homeserver.login(user_id, password, device_id=device_id)
    # then both tokens belong to that user and device, and they differ
    assert homeserver.whoami(token) == {"user_id": user_id, "device_id": device_id, "is_guest": False}
    assert same_device == device_id and again != token
    assert homeserver.whoami(again)["device_id"] == device_id


def test_a_wrong_password_is_403_m_forbidden(homeserver, matrix_user):
    user = matrix_user()
    with pytest.raises(MatrixError) as refused:
        homeserver.login(user.user_id, user.password + "x")
    assert (refused.value.status, refused.value.errcode) == (403, "M_FORBIDDEN")


def test_texts_come_back_from_the_timeline_in_order_and_a_repeated_txn_id_sends_nothing(homeserver, matrix_user):
    # given a room
    user = matrix_user()
    room = homeserver.create_room(user.token, name="Ordered")
    # when 25 texts go out over one kept-alive connection, the 3rd sent twice with its txn id
    sent = [f"text {i} ✓" for i in range(25)]
    event_ids = [homeserver.send_text(user.token, room, body, f"txn-{i}") for i, body in enumerate(sent)]
    repeated = homeserver.send_text(user.token, room, sent[2], "txn-2")
    # then reading back page by page (pages of 7) gives each exactly once, in order
    events = homeserver.messages(user.token, room, page_size=7)
    assert bodies(events) == sent
    assert [e["event_id"] for e in events] == event_ids
    assert repeated == event_ids[2]
    assert all(e["sender"] == user.user_id and e["content"]["msgtype"] == "m.text" for e in events)


def test_wait_for_messages_returns_once_they_are_there_and_fails_with_what_it_saw(homeserver, matrix_user):
    user = matrix_user()
    room = homeserver.create_room(user.token)
    homeserver.send_text(user.token, room, "only one")
    assert bodies(homeserver.wait_for_messages(user.token, room, count=1, timeout=5)) == ["only one"]
    started = time.monotonic()
    with pytest.raises(AssertionError, match="only one"):
        homeserver.wait_for_messages(user.token, room, count=2, timeout=0.5)
    assert time.monotonic() - started < 5


def test_uploaded_bytes_download_unchanged_and_the_media_config_names_the_limit(homeserver, matrix_user):
    user = matrix_user()
    data = os.urandom(300 * 1024)
    mxc = homeserver.upload(user.token, data, "application/octet-stream", filename="noise.bin")
    assert mxc.startswith("mxc://ferry.test/")
    assert homeserver.download(user.token, mxc) == data
    assert homeserver.media_config(user.token)["m.upload.size"] == 512 * 1024 * 1024


def test_rooms_aliases_invites_encryption_and_m_direct(homeserver, matrix_user):
    # given two people
    alice, bob = matrix_user("alice"), matrix_user("bob")
    # when alice makes a room with an alias, an encrypted room, and a DM with bob
    alias_localpart = f"photos-{uuid.uuid4().hex[:8]}"
    room = homeserver.create_room(alice.token, name="Photos", alias_localpart=alias_localpart, preset="public_chat")
    secret = homeserver.create_room(alice.token, name="Secret", encrypted=True)
    dm = homeserver.create_room(alice.token, is_direct=True, invite=[bob.user_id])
    homeserver.set_direct(alice.token, {bob.user_id: [dm]})
    # then the alias resolves, bob can join by it and accept the DM, state says what is encrypted
    assert homeserver.resolve_alias(f"#{alias_localpart}:ferry.test") == room
    assert homeserver.join(bob.token, f"#{alias_localpart}:ferry.test") == room
    assert homeserver.join(bob.token, dm) == dm
    assert {room, dm} <= set(homeserver.joined_rooms(bob.token))
    encryption = [e for e in homeserver.state(alice.token, secret) if e["type"] == "m.room.encryption"]
    assert encryption and encryption[0]["content"]["algorithm"] == "m.megolm.v1.aes-sha2"
    assert not [e for e in homeserver.state(alice.token, room) if e["type"] == "m.room.encryption"]
    assert homeserver.direct(alice.token) == {bob.user_id: [dm]}
    assert homeserver.direct(bob.token) == {}


def test_a_revoked_device_token_is_401_m_unknown_token_and_signing_in_again_works(homeserver, matrix_user):
    # given a user signed in on a device
    user = matrix_user()
    token, device_id = homeserver.login(user.user_id, user.password, device_id="FERRYTEST")
    room = homeserver.create_room(token)
    # when the server admin deletes that device
    homeserver.revoke_device(user.user_id, device_id)
    # then the token is refused the way Ferry must recognise
    with pytest.raises(MatrixError) as refused:
        homeserver.send_text(token, room, "after revocation")
    assert (refused.value.status, refused.value.errcode) == (401, "M_UNKNOWN_TOKEN")
    assert refused.value.body.get("soft_logout", False) is False
    assert device_id not in [d["device_id"] for d in homeserver.devices(user.user_id)]
    # and signing in again with the same device id gives a working token
    new_token, same = homeserver.login(user.user_id, user.password, device_id=device_id)
    assert same == device_id
    homeserver.send_text(new_token, room, "after signing in again")
    assert bodies(homeserver.messages(new_token, room)) == ["after signing in again"]


@pytest.fixture(scope="module")
def strict_homeserver(new_homeserver):
    """Low message rate limit and a small upload limit, for the 429 and 413 paths."""
    server = new_homeserver(max_upload_size="64K",
                            rate_limits={"rc_message": {"per_second": 2, "burst_count": 3}})
    yield server
    server.stop()


def test_a_low_rate_limit_answers_429_with_retry_after_ms_and_lets_the_retry_through(strict_homeserver):
    server = strict_homeserver
    user = server.new_user()
    room = server.create_room(user.token)
    # when more texts are sent at once than the burst allows
    with pytest.raises(MatrixError) as limited:
        for i in range(10):
            server.send_text(user.token, room, f"burst {i}", f"burst-{i}")
    # then the server says 429 M_LIMIT_EXCEEDED with how long to wait
    error = limited.value
    assert (error.status, error.errcode) == (429, "M_LIMIT_EXCEEDED")
    retry_after_ms = error.body["retry_after_ms"]
    assert isinstance(retry_after_ms, int) and 0 < retry_after_ms <= 10_000
    refused_at = len(server.messages(user.token, room))
    assert 1 <= refused_at < 10
    # and after waiting that long, the refused text (same txn id) goes through once
    time.sleep(retry_after_ms / 1000 + 0.05)
    server.send_text(user.token, room, f"burst {refused_at}", f"burst-{refused_at}")
    assert bodies(server.messages(user.token, room)) == [f"burst {i}" for i in range(refused_at + 1)]


def test_a_small_upload_limit_is_announced_and_enforced_with_413(strict_homeserver):
    server = strict_homeserver
    user = server.new_user()
    assert server.media_config(user.token)["m.upload.size"] == 64 * 1024
    assert server.download(user.token, server.upload(user.token, b"x" * 1024)) == b"x" * 1024
    with pytest.raises(MatrixError) as too_large:
        server.upload(user.token, b"x" * (64 * 1024 + 1))
    assert (too_large.value.status, too_large.value.errcode) == (413, "M_TOO_LARGE")


def test_an_expired_token_is_a_soft_logout(new_homeserver):
    # given a server whose access tokens live two seconds
    server = new_homeserver(config={"nonrefreshable_access_token_lifetime": "2s"})
    user = server.new_user()
    assert server.whoami(user.token)["user_id"] == user.user_id
    # when the token is older than that
    time.sleep(2.2)
    # then it is refused as a soft logout: sign in again, keep the device
    answer = server.request("GET", "/_matrix/client/v3/account/whoami", user.token)
    assert answer.status == 401
    assert answer.json()["errcode"] == "M_UNKNOWN_TOKEN" and answer.json()["soft_logout"] is True
    server.stop()


def test_stopping_killing_and_restarting_keep_the_port_and_the_data(fresh_homeserver):
    server = fresh_homeserver
    user = server.new_user()
    room = server.create_room(user.token)
    server.send_text(user.token, room, "before")
    port = server.port
    # when the server is killed, nothing answers
    server.kill()
    with pytest.raises(OSError):
        server.request("GET", "/_matrix/client/versions", timeout=2)
    # then started again (and restarted cleanly) it is the same server: port, token, timeline
    server.start()
    server.send_text(user.token, room, "after kill")
    server.restart()
    assert server.port == port and server.running
    server.send_text(user.token, room, "after restart")
    assert bodies(server.messages(user.token, room)) == ["before", "after kill", "after restart"]
    # and a new Homeserver on that directory (a script's second run) adopts port, secret and data
    server.stop()
    again = Homeserver(server.root).start()
    try:
        assert again.port == port
        assert again.new_user().user_id.endswith(":ferry.test")
        assert len(again.messages(user.token, room)) == 3
    finally:
        again.stop()


def test_a_server_that_cannot_start_says_why(tmp_path):
    server = Homeserver(tmp_path, config={"database": {"name": "no-such-engine"}})
    with pytest.raises(HomeserverError) as failed:
        server.start(timeout=30)
    assert "no-such-engine" in str(failed.value)
    assert not server.running
