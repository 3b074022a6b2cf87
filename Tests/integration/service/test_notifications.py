"""What Ferry tells the person through desktop notifications (GNotification → the session's
org.freedesktop.Notifications, here a recording server of the test's own): a share that needs
sign-in, a share that was sent (to which room), a share that failed (with a Retry action)."""

from __future__ import annotations

import urllib.parse
import uuid

from matrixflow import (action_labels, notification_text, notifications, sign_in, start_notification_server,
                        wait_for_notification, wait_for_state, wait_until_sent)


def test_a_share_waiting_for_sign_in_raises_a_notification_that_leads_to_sign_in(new_session):
    # Given a desktop session with a notification server, and nobody signed in to Ferry
    session = new_session()
    record = start_notification_server(session)

    # When a share arrives
    session.share_ok(text="Needs an account first")

    # Then a notification says that signing in is needed, and offers a way there
    notification = wait_for_notification(record, lambda n: "sign" in notification_text(n).lower(),
                                         what="a notification about signing in")
    assert notification["actions"], f"no action leads to sign-in: {notification}"


def test_a_sent_share_is_announced_with_the_rooms_name(new_session, homeserver, matrix_user):
    # Given Ferry signed in, a notification server, and a room with a name
    session = new_session()
    record = start_notification_server(session)
    user = matrix_user("notified")
    sign_in(session, homeserver, user)
    name = f"Holiday photos {uuid.uuid4().hex[:6]}"
    room = homeserver.create_room(user.token, name=name)

    # When a text is shared there and delivered
    share_id = session.share_ok(text="Postcard", destinations=[room])
    wait_for_state(session, share_id, "sent")

    # Then a notification names the room it went to
    wait_for_notification(record, lambda n: name in notification_text(n), what=f"a notification naming {name!r}")


def test_a_failed_share_is_announced_with_a_retry_action(new_session, homeserver, matrix_user):
    # Given Ferry signed in, a notification server, and a room encrypted by an algorithm Ferry does
    # not speak (it never sends there)
    session = new_session()
    record = start_notification_server(session)
    user = matrix_user("notfailed")
    sign_in(session, homeserver, user)
    room = homeserver.create_room(user.token, name="Encrypted")
    homeserver.call("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/state/m.room.encryption/", user.token,
                    json_body={"algorithm": "org.example.unknown.v9"})

    # When a text is shared there and fails
    share_id = session.share_ok(text="Will fail", destinations=[room])
    wait_for_state(session, share_id, "failed")

    # Then a notification says so and offers Retry
    wait_for_notification(record, lambda n: any(label.lower() == "retry" for label in action_labels(n)),
                          what="a notification with a Retry action")


def test_a_burst_of_sent_shares_is_told_in_one_notification_that_counts_them(new_session, homeserver, matrix_user):
    # Given twelve shares for one room waiting while nobody is signed in, and a notification server
    session = new_session()
    record = start_notification_server(session)
    user = matrix_user("burst")
    name = f"Burst {uuid.uuid4().hex[:6]}"
    room = homeserver.create_room(user.token, name=name)
    share_ids = [session.share_ok(text=f"Burst {n}", destinations=[room]) for n in range(12)]

    # When signing in sends them all, one after the other
    sign_in(session, homeserver, user)
    wait_until_sent(session, share_ids)

    # Then one notification, updated as they arrive, ends up counting all twelve…
    wait_for_notification(record, lambda n: f"12 shares sent to {name}" in notification_text(n),
                          what="a notification counting the twelve shares")
    # …instead of one notification per share
    told = [n for n in notifications(record) if name in notification_text(n)]
    assert len(told) < 12, f"{len(told)} notifications for 12 shares: {told}"
