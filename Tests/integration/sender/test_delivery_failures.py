"""When delivery cannot go ahead: a file over the server's upload limit, a room encrypted in a way Ferry cannot speak, a room
that does not exist, a room that refuses the user (and Retry once it no longer does), the
homeserver away for a while, a share cancelled while it waits, and a server that answers 429.

What arrived (or did not) is read back from Synapse: its timeline and its media admin API."""

from __future__ import annotations

import json
import re
import urllib.parse
import uuid

import pytest

from ferryenv import EX_OK, file_uri, wait_for
from matrixflow import (EX_FAILED, binary_bytes, bodies, cancel, deliveries, error_sentence, get_property, get_status,
                        msgtypes, new_share_id, png_of_size, retry, set_power_level, sign_in, user_media,
                        wait_for_share, wait_for_state)


@pytest.fixture(scope="module")
def sender(new_session, homeserver):
    """(session, user): a Ferry signed in as a user of its own on the shared server."""
    user = homeserver.new_user("failsender")
    session = new_session()
    sign_in(session, homeserver, user)
    yield session, user
    session.stop()


@pytest.fixture(scope="module")
def small_uploads(new_homeserver):
    """A server that takes uploads of 64 KiB at most."""
    server = new_homeserver(max_upload_size="64K")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def slow_messages(new_homeserver):
    """A server that lets one message a second through, two at a burst, and answers 429 beyond."""
    server = new_homeserver(rate_limits={"rc_message": {"per_second": 1, "burst_count": 2}})
    yield server
    server.stop()


def assert_failed_delivery(share, error: str) -> dict:
    assert share["state"] == "failed", share
    [delivery] = [d for d in deliveries(share) if d["state"] == "failed"]
    assert delivery["error-name"] == "io.github.ferryshare.Ferry.Error." + error, delivery
    assert len(delivery.get("error-message", "").split()) >= 3, f"no sentence: {delivery}"
    return delivery


def test_a_file_over_the_servers_upload_limit_fails_with_file_too_large_for_server_before_uploading(
        new_session, small_uploads):
    # Given Ferry signed in on a server that takes 64 KiB at most, and a 100 KiB file
    server = small_uploads
    user = server.new_user("bigfile")
    session = new_session()
    sign_in(session, server, user)
    room = server.create_room(user.token, name="Small uploads")
    big = session.files / "big.xyzunknown"
    big.write_bytes(binary_bytes(100 * 1024))

    # When it is sent to a room there
    done = session.ferry("send", big, "--to", room)

    # Then the command fails with a sentence, and the share says FileTooLargeForServer for that room
    assert done.returncode != EX_OK, done.stderr
    error_sentence(done)
    share = session.get_share(new_share_id(done))
    assert_failed_delivery(share, "FileTooLargeForServer")
    # And nothing was uploaded (checked before uploading) and nothing was posted
    assert user_media(server, user.user_id) == []
    assert server.messages(user.token, room) == []


def encrypted_by_an_unknown_algorithm(homeserver, token: str, name: str) -> str:
    """A room encrypted by an algorithm Ferry does not speak: it can only refuse it."""
    room = homeserver.create_room(token, name=name)
    homeserver.call("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/state/m.room.encryption/", token,
                    json_body={"algorithm": "org.example.unknown.v9"})
    return room


def test_a_room_encrypted_by_an_unknown_algorithm_is_refused_before_anything_is_sent(sender, homeserver):
    session, user = sender
    # Given a room encrypted by an algorithm Ferry does not speak
    room = encrypted_by_an_unknown_algorithm(homeserver, user.token, "Secret")
    photo = session.files / "private.png"
    photo.write_bytes(png_of_size(3, 3, seed=3))
    media_before = len(user_media(homeserver, user.user_id))

    # When a picture with a message is shared there
    share_id = session.share_ok(uris=[file_uri(photo)], message="Private", destinations=[room])

    # Then that delivery fails with EncryptedRoom
    share = wait_for_state(session, share_id, "failed")
    assert_failed_delivery(share, "EncryptedRoom")
    # And nothing reached the room, in plain text or otherwise, and nothing was uploaded
    timeline = homeserver.events(user.token, room)
    assert [e for e in timeline if e["type"] in ("m.room.message", "m.room.encrypted")] == []
    assert len(user_media(homeserver, user.user_id)) == media_before


def test_a_room_ferry_cannot_encrypt_for_among_several_destinations_leaves_the_others_going(sender, homeserver):
    session, user = sender
    # Given a plain room and one Ferry cannot encrypt for
    plain = homeserver.create_room(user.token, name="Plain")
    secret = encrypted_by_an_unknown_algorithm(homeserver, user.token, "Secret too")

    # When one text goes to both
    share_id = session.share_ok(text="To both rooms", destinations=[secret, plain])

    # Then the plain room gets it, the encrypted one nothing, and the share failed for that one only
    share = wait_for_state(session, share_id, "failed")
    assert bodies(homeserver.wait_for_messages(user.token, plain, count=1)) == ["To both rooms"]
    assert homeserver.messages(user.token, secret) == []
    states = {d["destination"]: d["state"] for d in deliveries(share)}
    assert states == {secret: "failed", plain: "sent"}
    assert_failed_delivery(share, "EncryptedRoom")


def test_ferry_text_exits_1_when_one_of_several_destinations_could_not_be_reached(sender, homeserver):
    session, user = sender
    # Given a plain room and one Ferry cannot encrypt for
    plain = homeserver.create_room(user.token, name="Plain for the CLI")
    secret = encrypted_by_an_unknown_algorithm(homeserver, user.token, "Secret for the CLI")

    # When `ferry text` sends to both and waits
    done = session.ferry("text", "Partly delivered", "--to", plain, "--to", secret)

    # Then it exits 1 (accepted, not delivered everywhere) with a sentence, and the plain room has it
    assert done.returncode == EX_FAILED, (done.returncode, done.stderr)
    error_sentence(done)
    assert bodies(homeserver.messages(user.token, plain)) == ["Partly delivered"]
    assert homeserver.messages(user.token, secret) == []


def test_a_room_alias_that_does_not_exist_fails_with_room_not_found(sender, homeserver):
    session, user = sender
    alias = f"#nowhere-{uuid.uuid4().hex[:8]}:{homeserver.server_name}"

    # When a text is shared to an alias nobody made
    done = session.ferry("text", "Into the void", "--to", alias)

    # Then the command fails with a sentence, and the delivery says RoomNotFound
    assert done.returncode != EX_OK, done.stderr
    error_sentence(done)
    assert_failed_delivery(session.get_share(new_share_id(done)), "RoomNotFound")


def test_retry_after_a_forbidden_room_sends_only_what_failed(sender, homeserver, matrix_user):
    session, user = sender
    # Given a room where Ferry's user may not post (events need power 50), and an ordinary room
    owner = matrix_user("owner")
    strict = homeserver.create_room(owner.token, name="Announcements", invite=[user.user_id])
    homeserver.join(user.token, strict)
    set_power_level(homeserver, owner.token, strict, events_default=50)
    ordinary = homeserver.create_room(user.token, name="Ordinary")

    # When a text goes to both
    share_id = session.share_ok(text="Retry me", destinations=[ordinary, strict])

    # Then the ordinary room has it, the strict one refused it (Forbidden), and the share failed
    share = wait_for_state(session, share_id, "failed")
    assert_failed_delivery(share, "Forbidden")
    assert bodies(homeserver.wait_for_messages(user.token, ordinary, count=1)) == ["Retry me"]
    assert homeserver.messages(user.token, strict) == []

    # When the owner lets the user post, and the person retries from the command line
    set_power_level(homeserver, owner.token, strict, users={user.user_id: 50})
    done = session.ferry("retry", share_id)
    assert done.returncode == EX_OK, done.stderr

    # Then the strict room gets it once, and the ordinary room is not sent to again
    wait_for_state(session, share_id, "sent")
    assert bodies(homeserver.wait_for_messages(user.token, strict, count=1)) == ["Retry me"]
    assert bodies(homeserver.messages(user.token, ordinary)) == ["Retry me"]
    # And a sent share cannot be retried; an unknown one is no such share
    retry(session, share_id).expect_error("NotRetryable")
    retry(session, "no-such-share-id").expect_error("NoSuchShare")


def test_shares_queued_while_the_homeserver_is_away_are_delivered_after_it_returns(new_session, fresh_homeserver):
    server = fresh_homeserver
    # Given Ferry signed in on a server, and a room there
    user = server.new_user("away")
    session = new_session()
    sign_in(session, server, user)
    room = server.create_room(user.token, name="Patience")

    # When the server stops and three texts are shared
    server.stop()
    texts = [f"while away {i}" for i in range(3)]
    share_ids = []
    for text in texts:
        done = session.ferry("text", text, "--to", room, "--no-wait")
        assert done.returncode == EX_OK, done.stderr
        share_ids.append(new_share_id(done))

    # Then each stays "sending", its delivery "retrying" with a time for the next try, and Ferry is offline.
    # A refused connection reaches the sender at once: the HTTP client does not keep retrying it for the
    # request's 30 s deadline (it did, and a share sat in "sending" with Online true all that time), so
    # the first share is retrying well inside that deadline.
    for share_id in share_ids:
        share = wait_for_share(
            session, share_id,
            lambda s: s["state"] == "sending" and [d["state"] for d in deliveries(s)] == ["retrying"],
            timeout=20, what="sending, with a retrying delivery, before a 30 s request deadline could pass")
        assert deliveries(share)[0]["retry-at"] > 0
    assert get_property(session, "Online") is False
    assert get_status(session)["online"] is False
    # And the command line's JSON says when the next try is, in UTC (null while a try runs)
    shown = session.ferry("show", share_ids[0], "--json")
    [waiting] = json.loads(shown.stdout)["deliveries"]
    if waiting["state"] == "retrying":
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", waiting["retry_at"]), waiting
    else:
        assert waiting["retry_at"] is None, waiting

    # When the server is back
    server.start()

    # Then every text arrives exactly once, and every share is sent
    for share_id in share_ids:
        wait_for_state(session, share_id, "sent", timeout=120)
    events = server.wait_for_messages(user.token, room, count=3)
    assert sorted(bodies(events)) == sorted(texts)
    assert get_property(session, "Online") is True


def test_cancel_of_a_waiting_share_removes_its_staged_files_and_sends_nothing(new_session, fresh_homeserver):
    server = fresh_homeserver
    # Given Ferry signed in, a room, and the server away so a share waits in the outbox
    user = server.new_user("cancel")
    session = new_session()
    sign_in(session, server, user)
    room = server.create_room(user.token, name="Cancelled")
    server.stop()
    photo = session.files / "never.png"
    photo.write_bytes(png_of_size(2, 2, seed=9))
    share_id = session.share_ok(uris=[file_uri(photo)], message="Never sent", destinations=[room])
    wait_for_state(session, share_id, "queued", "sending")
    assert session.spool_dir(share_id).is_dir()

    # When the person cancels it
    cancel(session, share_id).expect_ok()

    # Then it is cancelled and its staged copy is gone
    assert session.get_share(share_id)["state"] == "cancelled"
    wait_for(lambda: not session.spool_dir(share_id).exists(), timeout=10,
             what=f"the spool directory of {share_id} to be removed")

    # And when the server is back, only a later share arrives: the cancelled one never does
    server.start()
    marker = session.share_ok(text="After the cancel", destinations=[room])
    wait_for_state(session, marker, "sent", timeout=120)
    assert bodies(server.wait_for_messages(user.token, room, count=1)) == ["After the cancel"]
    assert session.get_share(share_id)["state"] == "cancelled"


def test_with_a_low_rate_limit_every_event_arrives_exactly_once(new_session, slow_messages):
    server = slow_messages
    # Given Ferry signed in on a server that answers 429 beyond one message a second
    user = server.new_user("ratelimited")
    session = new_session()
    sign_in(session, server, user)
    room = server.create_room(user.token, name="Slow")
    pictures = []
    for i in range(2):
        path = session.files / f"limited-{i}.png"
        path.write_bytes(png_of_size(2, 2, seed=50 + i))
        pictures.append(path)

    # When eight texts and a share of a message with two pictures are queued at once
    texts = [f"limited {i}" for i in range(8)]
    share_ids = [new_share_id(session.ferry("text", t, "--to", room, "--no-wait")) for t in texts]
    album = session.share_ok(uris=[file_uri(p) for p in pictures], message="Album under limits", destinations=[room])

    # Then all are sent, and the room holds every event exactly once, the album's in order
    for share_id in [*share_ids, album]:
        wait_for_state(session, share_id, "sent", timeout=120)
    events = server.wait_for_messages(user.token, room, count=len(texts) + 3)
    assert sorted(bodies(events)) == sorted(texts + ["Album under limits", "limited-0.png", "limited-1.png"])
    album_events = [e for e in events if e["content"]["body"] in ("Album under limits", "limited-0.png", "limited-1.png")]
    assert bodies(album_events) == ["Album under limits", "limited-0.png", "limited-1.png"]
    assert msgtypes(album_events) == ["m.text", "m.image", "m.image"]
    # And the server did answer 429 on the way (otherwise this test proved nothing)
    log = server.log_path.read_text(errors="replace")
    assert re.search(r'Processed request: .* 429 "PUT /_matrix/client/v3/rooms/\S+/send/m\.room\.message/', log), \
        "the server never answered 429: the limit did not bite"
