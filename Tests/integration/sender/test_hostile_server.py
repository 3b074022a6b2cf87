"""A homeserver that answers with numbers no one should trust: the real sender meets them through a
proxy in front of a real Synapse (hostileproxy), and the service neither crashes nor waits forever.

Before Ferry clamped them, a `retry_after_ms` of 2^63 - 1 trapped the sender (`Int64 * 1000`) after
the retry time was committed, and a `Retry-After` of the same size trapped the HTTP layer: the
service crashed, and again at every start."""

from __future__ import annotations

import time

import pytest

from ferryenv import EX_OK
from hostileproxy import HostileProxy
from matrixflow import deliveries, new_share_id, retry, sign_in_call, wait_for_share, wait_for_state

SEND = r"/send/m\.room\.message/"
HOUR_US = 3600 * 1_000_000

HOSTILE_RATE_LIMITS = {
    "huge-ms": ({"errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": 2**63 - 1}, {}),
    "ms-overflowing-int64": ({"errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": 10**30}, {}),
    "ms-just-over-int64-over-1000": ({"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": 9_300_000_000_000_000}, {}),
    "negative-ms": ({"errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": -5}, {}),
    "fractional-ms": ({"errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": 0.5}, {}),
    "textual-ms": ({"errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": "soon"}, {}),
    "huge-header": ({"errcode": "M_LIMIT_EXCEEDED"}, {"Retry-After": str(2**63 - 1)}),
    "header-overflowing-after-1000": ({"errcode": "M_LIMIT_EXCEEDED"}, {"Retry-After": "9223372036854775"}),
    "date-header-far-ahead": ({}, {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}),
}


@pytest.fixture(scope="module")
def hostile_ferry(new_session, homeserver):
    """(session, user, room, proxy): Ferry signed in through a hostile proxy in front of Synapse, one
    for the whole module (conftest's through_proxy makes one per test; these cases share a sign-in),
    stopped however the module ends."""
    proxy = HostileProxy(homeserver).start()
    try:
        user = homeserver.new_user("hostile")
        session = new_session()
        try:
            sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
            room = homeserver.create_room(user.token, name="Hostile numbers")
            yield session, user, room, proxy
        finally:
            session.stop()
    finally:
        proxy.stop()


@pytest.mark.parametrize("case", sorted(HOSTILE_RATE_LIMITS))
def test_a_hostile_retry_after_never_crashes_the_service_nor_schedules_beyond_an_hour(hostile_ferry, homeserver, case):
    session, user, _, proxy = hostile_ferry
    room = homeserver.create_room(user.token, name=f"Hostile numbers: {case}")
    body, headers = HOSTILE_RATE_LIMITS[case]
    # Given a server that answers the next message with 429 and a hostile retry time
    rule = proxy.answer("PUT", SEND, status=429, body=body, headers=headers)
    text = f"hostile numbers: {case}"

    # When a text is shared
    done = session.ferry("text", text, "--to", room, "--no-wait")
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    pid = session.name_owner_pid()

    # Then the hostile answer was met, and the share waits for its retry, scheduled within the hour
    share = wait_for_share(session, share_id, lambda s: s["state"] in ("sending", "sent") and rule.hits == 1
                           and (s["state"] == "sent" or [d["state"] for d in deliveries(s)] == ["retrying"]),
                           timeout=60, what="the 429 answered and the delivery retrying (or already sent)")
    now_us = time.time() * 1_000_000
    if share["state"] == "sending":
        retry_at = deliveries(share)[0]["retry-at"]
        assert now_us - 5_000_000 <= retry_at <= now_us + HOUR_US + 5_000_000, (case, retry_at - now_us)
    # And the service that met it is the same process, still up
    assert session.name_owner_pid() == pid, f"the service restarted: {session.log_tail()}"

    # When the person retries now, the text arrives, exactly once
    if share["state"] == "sending":
        retry(session, share_id).expect_ok()
    wait_for_state(session, share_id, "sent", timeout=60)
    events = homeserver.wait_for_messages(user.token, room, count=1)
    assert [e["content"]["body"] for e in events].count(text) == 1
    assert session.name_owner_pid() == pid


def test_a_hostile_upload_limit_means_no_known_limit_rather_than_a_failed_share(hostile_ferry, homeserver, tmp_path):
    session, user, room, proxy = hostile_ferry
    # Given a server whose media config says the upload limit is negative, then fractional
    for size in (-1, 1.5, "big", 1e300):
        proxy.answer("GET", r"/media/config", body={"m.upload.size": size}, times=1)
        path = tmp_path / f"limit-{size}.bin"
        path.write_bytes(b"ferry" * 100)
        # When a file is shared
        done = session.ferry("send", path, "--to", room)
        # Then it is delivered (the server itself would still refuse what it will not take)
        assert done.returncode == EX_OK, (size, done.stderr, session.log_tail())


def test_a_redirect_to_another_origin_is_not_followed_and_nothing_is_resent_there(hostile_ferry, homeserver):
    import socket
    session, user, _, proxy = hostile_ferry
    room = homeserver.create_room(user.token, name="Redirected")
    # Given a server that answers the message with a 307 to another origin, where something listens
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    elsewhere = f"http://127.0.0.1:{listener.getsockname()[1]}/steal"
    proxy.answer("PUT", SEND, status=307, headers={"Location": elsewhere}, body={})

    # When a text is shared
    done = session.ferry("text", "not for strangers", "--to", room)

    # Then the share fails with the server's refusal, and nothing reached the other origin
    assert done.returncode != EX_OK
    try:
        connection, _ = listener.accept()
        connection.settimeout(2)
        leaked = connection.recv(65536)
    except OSError:
        leaked = b""
    listener.close()
    assert leaked == b"", f"Ferry followed the redirect: {leaked[:200]!r}"
    assert "not for strangers" not in [e["content"].get("body") for e in homeserver.messages(user.token, room)]
