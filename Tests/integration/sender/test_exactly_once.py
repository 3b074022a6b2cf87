"""Exactly once, whatever happens between the click and the server: the service killed with
SIGKILL in the middle of draining 50 shares or of a share of files, the device's token revoked by
the server admin with shares queued, and a token that expires (soft logout). Counted only from
the room's timeline as Synapse serves it (Synapse forgets a deleted device's transaction ids, so
nothing Ferry or the server says about txn ids is trusted)."""

from __future__ import annotations

from collections import Counter

import pytest

from ferryenv import file_uri, wait_for
from matrixflow import binary_bytes, bodies, get_property, msgtypes, sign_in, wait_for_state

DRAIN = 50


def texts(prefix: str, count: int) -> list[str]:
    return [f"{prefix} {i:02d}" for i in range(count)]


def assert_each_exactly_once(events, expected: list[str]) -> None:
    counts = Counter(bodies(events))
    missing = [t for t in expected if counts[t] == 0]
    doubled = {t: n for t, n in counts.items() if n > 1}
    strangers = [t for t in counts if t not in expected]
    assert not missing and not doubled and not strangers, (
        f"missing {missing}, more than once {doubled}, unexpected {strangers}")


def all_states(session) -> Counter:
    return Counter(s["state"] for s in session.list_shares())


@pytest.mark.parametrize("kill_points, throttled", [
    pytest.param((1,), False, id="kill-after-the-first"),
    pytest.param((25,), False, id="kill-halfway"),
    pytest.param((45,), False, id="kill-near-the-end"),
    pytest.param((8, 30), False, id="kill-twice"),
    pytest.param((10,), True, id="kill-while-rate-limited"),
])
def test_kill_9_while_draining_50_shares_every_text_arrives_exactly_once(new_session, homeserver, kill_points, throttled):
    # Given 50 text shares to one room, made while signed out so none is on its way yet
    user = homeserver.new_user("drain")
    room = homeserver.create_room(user.token, name="Drain")
    if throttled:
        # Ten a second, one at a burst: the server answers 429 and the drain takes seconds.
        homeserver.override_rate_limit(user.user_id, messages_per_second=10, burst_count=1)
    session = new_session()
    expected = texts("drain", DRAIN)
    share_ids = [session.share_ok(text=t, destinations=[room]) for t in expected]
    assert all_states(session) == {"awaiting-sign-in": DRAIN}

    # When Ferry signs in and starts draining, and its service is killed with SIGKILL each time
    # the room has reached a kill point
    sign_in(session, homeserver, user)
    # And, each time, the service is activated again (any call does it: without systemd nothing
    # restarts it by itself) and left to resume on its own
    for point in kill_points:
        homeserver.wait_for_messages(user.token, room, count=point, timeout=60, interval=0.01)
        session.kill_service()
        assert get_property(session, "SignedIn") is True

    # Then every share is sent, and the room holds every text exactly once
    wait_for(lambda: all_states(session) == {"sent": DRAIN}, timeout=120, interval=0.2,
             what=f"all {DRAIN} shares to be sent")
    assert_each_exactly_once(homeserver.messages(user.token, room), expected)
    assert sorted(session.share_ids()) == sorted(share_ids)


def test_a_revoked_token_with_shares_queued_signs_out_and_each_arrives_once_after_signing_in_again(
        new_session, homeserver):
    # Given Ferry signed in, and the server admin deleting its device (revoking its token)
    user = homeserver.new_user("revoked")
    room = homeserver.create_room(user.token, name="Revoked")
    session = new_session()
    account = sign_in(session, homeserver, user)
    homeserver.revoke_device(user.user_id, account["device-id"])

    # When five texts are shared to the room (Ferry does not know yet)
    expected = texts("revoked", 5)
    with session.signals() as signals:
        share_ids = [session.share_ok(text=t, destinations=[room]) for t in expected]

        # Then the server's 401 signs Ferry out, SignInRequired says so, and the shares wait for sign-in
        signals.wait_for_signal("SignInRequired", timeout=30)
    wait_for(lambda: get_property(session, "SignedIn") is False, timeout=30, what="Ferry to be signed out")
    for share_id in share_ids:
        wait_for_state(session, share_id, "awaiting-sign-in", timeout=30)
    assert homeserver.messages(user.token, room) == []

    # When the person signs in again
    again = sign_in(session, homeserver, user)

    # Then Ferry keeps its device id, every share is sent, and each text is in the room exactly once
    assert again["device-id"] == account["device-id"]
    for share_id in share_ids:
        wait_for_state(session, share_id, "sent")
    assert_each_exactly_once(homeserver.wait_for_messages(user.token, room, count=len(expected)), expected)
    assert sorted(session.share_ids()) == sorted(share_ids)


def test_a_token_revoked_in_the_middle_of_a_drain_loses_and_doubles_nothing(new_session, homeserver):
    # Given Ferry signed in and draining 20 texts slowly (the server lets five a second through)
    user = homeserver.new_user("midrevoke")
    room = homeserver.create_room(user.token, name="Mid-drain revocation")
    homeserver.override_rate_limit(user.user_id, messages_per_second=5, burst_count=1)
    session = new_session()
    account = sign_in(session, homeserver, user)
    expected = texts("mid", 20)
    with session.signals() as signals:
        share_ids = [session.share_ok(text=t, destinations=[room]) for t in expected]

        # When the device is deleted by the admin once a few texts are in the room
        homeserver.wait_for_messages(user.token, room, count=3, timeout=60, interval=0.02)
        homeserver.revoke_device(user.user_id, account["device-id"])

        # Then Ferry is signed out and asks for sign-in, the unsent shares waiting for it
        signals.wait_for_signal("SignInRequired", timeout=30)
    wait_for(lambda: get_property(session, "SignedIn") is False, timeout=30, what="Ferry to be signed out")
    wait_for(lambda: set(all_states(session)) <= {"sent", "awaiting-sign-in"}
             and all_states(session)["awaiting-sign-in"] > 0, timeout=30,
             what=f"every unsent share back in awaiting-sign-in: {all_states(session)}")

    # When the person signs in again
    sign_in(session, homeserver, user)

    # Then all 20 are sent and each text is in the room exactly once
    wait_for(lambda: all_states(session) == {"sent": len(expected)}, timeout=120, interval=0.2,
             what="all shares to be sent")
    assert_each_exactly_once(homeserver.messages(user.token, room), expected)
    assert sorted(session.share_ids()) == sorted(share_ids)


@pytest.mark.parametrize("kill_at", [1, 2, 3], ids=["after-the-message", "after-the-first-file", "after-the-second-file"])
def test_kill_9_in_the_middle_of_a_share_of_files_resumes_without_doubling_or_reordering(
        new_session, homeserver, kill_at):
    # Given a share of a message and four 8 MiB files to a room, made while signed out
    user = homeserver.new_user("filedrain")
    room = homeserver.create_room(user.token, name="Big files")
    session = new_session()
    names = [f"part-{i}.xyzunknown" for i in range(4)]
    paths = []
    for i, name in enumerate(names):
        path = session.files / name
        path.write_bytes(binary_bytes(8 * 1024 * 1024, seed=i))
        paths.append(path)
    share_id = session.share_ok(uris=[file_uri(p) for p in paths], message="Four big files", destinations=[room])

    # When Ferry signs in and its service is killed with SIGKILL once the room holds `kill_at` events
    sign_in(session, homeserver, user)
    homeserver.wait_for_messages(user.token, room, count=kill_at, timeout=60, interval=0.01)
    session.kill_service()

    # And the service is activated again and left to resume by itself
    assert get_property(session, "SignedIn") is True
    wait_for_state(session, share_id, "sent", timeout=120)

    # Then the room holds the message and each file exactly once, in order, each file's bytes intact
    events = homeserver.messages(user.token, room)
    assert bodies(events) == ["Four big files", *names]
    assert msgtypes(events) == ["m.text"] + ["m.file"] * len(names)
    for event, path in zip(events[1:], paths):
        assert homeserver.download(user.token, event["content"]["url"]) == path.read_bytes(), path.name


def test_an_expired_token_is_a_soft_logout_the_share_waits_and_arrives_once_after_sign_in(
        new_session, new_homeserver):
    # Given a server whose access tokens live five seconds and that gives no refresh tokens (Ferry
    # asks for one; test_expiring_sign_in covers a server that gives them), and Ferry signed in there
    server = new_homeserver(config={"nonrefreshable_access_token_lifetime": "5s",
                                    "refreshable_access_token_lifetime": None})
    user = server.new_user("expiring")
    room = server.create_room(user.token, name="Expiring")
    session = new_session()
    account = sign_in(session, server, user)
    # A token made after Ferry's: once it is refused, Ferry's is too.
    probe, _ = server.login(user.user_id, user.password)
    wait_for(lambda: server.request("GET", "/_matrix/client/v3/account/whoami", probe).status == 401,
             timeout=30, what="tokens of that age to expire")

    # When a text is shared to the room
    with session.signals() as signals:
        share_id = session.share_ok(text="After expiry", destinations=[room])

        # Then the soft logout signs Ferry out: SignInRequired, and the share waits for sign-in
        signals.wait_for_signal("SignInRequired", timeout=30)
    wait_for_state(session, share_id, "awaiting-sign-in", timeout=30)

    # When the person signs in again
    again = sign_in(session, server, user)

    # Then Ferry keeps its device, and the text arrives exactly once
    assert again["device-id"] == account["device-id"]
    wait_for_state(session, share_id, "sent")
    reader, _ = server.login(user.user_id, user.password)
    assert bodies(server.messages(reader, room)) == ["After expiry"]
