"""The sender: what a share becomes in a Matrix room, read back from Synapse's timeline with the
harness's own client. Composition rules (the product design): plain text → one m.text; a link,
with or without a message → one m.text holding both; files → the message first as its own
m.text, then each file as its own event typed from its content type; order kept; several
destinations get the same, each tracked in "deliveries"; a user id means the DM with that person.

One signed-in Ferry serves the module; every test makes rooms (and people) of its own."""

from __future__ import annotations

import json
import urllib.parse
import uuid

import pytest

from ferryenv import EX_OK, file_uri, pdf_bytes, wait_for
from matrixflow import (binary_bytes, bodies, complete_share, deliveries, member_event, mp4_bytes, msgtypes, new_share_id,
                        png_of_size, sign_in, wait_for_state, wav_bytes)


@pytest.fixture(scope="module")
def sender(new_session, homeserver):
    """(session, user): a Ferry signed in as a user of its own on the shared server."""
    user = homeserver.new_user("sender")
    session = new_session()
    sign_in(session, homeserver, user)
    yield session, user
    session.stop()


def room_of(homeserver, user, name: str) -> str:
    return homeserver.create_room(user.token, name=name)


def test_plain_text_is_one_m_text_and_ferry_text_waits_until_it_is_there(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Plain")

    # When a person runs `ferry text` to a room (it waits until sent)
    done = session.ferry("text", "Hello from Ferry ✓", "--to", room)

    # Then it exits 0 once the room already holds exactly one m.text with that body
    assert done.returncode == EX_OK, done.stderr
    events = homeserver.messages(user.token, room)
    assert [(e["content"]["msgtype"], e["content"]["body"]) for e in events] == [("m.text", "Hello from Ferry ✓")]
    assert events[0]["sender"] == user.user_id
    assert session.get_share(new_share_id(done))["state"] == "sent"


def test_a_link_alone_is_one_m_text_with_the_link(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Link")
    link = "https://example.org/articles/42?ref=ferry"

    # When a link is shared to the room
    share_id = session.share_ok(text=link, destinations=[room])

    # Then the room holds one m.text whose body is the link
    wait_for_state(session, share_id, "sent")
    events = homeserver.wait_for_messages(user.token, room, count=1)
    assert msgtypes(events) == ["m.text"]
    assert events[0]["content"]["body"].strip() == link


def test_a_link_with_a_message_is_one_m_text_holding_both(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Link and message")
    link, message = "https://example.org/news/today", "Have a look at this"

    # When a link is shared with a message
    share_id = session.share_ok(text=link, message=message, destinations=[room])

    # Then the room holds exactly one m.text carrying the message and the link together
    wait_for_state(session, share_id, "sent")
    events = homeserver.wait_for_messages(user.token, room, count=1)
    assert msgtypes(events) == ["m.text"], bodies(events)
    body = events[0]["content"]["body"]
    assert message in body and link in body, body


def test_a_ferry_uri_naming_a_room_only_suggests_it_and_is_sent_once_a_person_chooses(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Web share target")
    query = urllib.parse.urlencode({"text": "Worth reading", "url": "https://example.org/post?id=7", "to": room},
                                   quote_via=urllib.parse.quote)

    # When a web page hands Ferry a ferry: URI naming the room (through gio open, D-Bus activated)
    before = set(session.share_ids())
    done = session.run("gio", "open", f"ferry:share?{query}")
    assert done.returncode == 0, done.stderr

    # Then nothing is sent: the share waits for a person, with the room only suggested
    [share_id] = wait_for(lambda: list(set(session.share_ids()) - before), timeout=10, what="the link's share")
    share = session.get_share(share_id)
    assert share["state"] == "awaiting-destination", share
    assert share["suggested-destinations"] == [room] and share.get("destinations", []) == [], share
    assert homeserver.messages(user.token, room) == []

    # When the person chooses that room (the dialog's Send, here through CompleteShare)
    complete_share(session, share_id, [room]).expect_ok()

    # Then the room gets one m.text with the text and the link
    events = homeserver.wait_for_messages(user.token, room, count=1)
    assert msgtypes(events) == ["m.text"]
    body = events[0]["content"]["body"]
    assert "Worth reading" in body and "https://example.org/post?id=7" in body


def test_an_image_is_m_image_with_mimetype_size_width_height_and_its_bytes(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Image")
    photo = session.files / "wide-photo.png"
    photo.write_bytes(png_of_size(7, 3, seed=5))

    # When the picture is sent alone
    done = session.ferry("send", photo, "--to", room)
    assert done.returncode == EX_OK, done.stderr

    # Then the room holds one m.image described by its info, whose content is the file
    [event] = homeserver.messages(user.token, room)
    content = event["content"]
    assert content["msgtype"] == "m.image"
    assert content["body"] == "wide-photo.png"
    assert content["info"]["mimetype"] == "image/png"
    assert content["info"]["size"] == photo.stat().st_size
    assert (content["info"]["w"], content["info"]["h"]) == (7, 3)
    assert homeserver.download(user.token, content["url"]) == photo.read_bytes()


def test_files_with_a_message_are_the_message_then_each_file_as_its_own_event_in_order(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Album")
    files = [
        ("cover.png", png_of_size(4, 6, seed=1), "m.image", "image/png"),
        ("report.pdf", pdf_bytes(), "m.file", "application/pdf"),
        ("clip.mp4", mp4_bytes(), "m.video", "video/mp4"),
        ("voice.wav", wav_bytes(), "m.audio", "audio/x-wav"),
        ("data.xyzunknown", binary_bytes(2048), "m.file", "application/octet-stream"),
    ]
    paths = []
    for name, data, _msgtype, _mime in files:
        path = session.files / name
        path.write_bytes(data)
        paths.append(path)

    # When they are shared in one share, with a message
    share_id = session.share_ok(uris=[file_uri(p) for p in paths], message="Files from today", destinations=[room])

    # Then the room holds the message first, as its own m.text, then each file in the order given
    wait_for_state(session, share_id, "sent")
    events = homeserver.wait_for_messages(user.token, room, count=1 + len(files))
    assert msgtypes(events) == ["m.text"] + [f[2] for f in files], bodies(events)
    assert events[0]["content"]["body"] == "Files from today"
    for event, (name, data, msgtype, mime) in zip(events[1:], files):
        content = event["content"]
        # The file's name is its body (no caption: the message went on its own) or its filename.
        assert content.get("filename", content["body"]) == name, content
        assert content["info"]["mimetype"] == mime, content
        assert content["info"]["size"] == len(data), content
        assert homeserver.download(user.token, content["url"]) == data, name
        if msgtype == "m.file":
            assert content["filename"] == name, content
    image = events[1]["content"]["info"]
    assert (image["w"], image["h"]) == (4, 6)


def test_files_without_a_message_are_only_the_files(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "No message")
    first, second = session.files / "first.png", session.files / "second.png"
    first.write_bytes(png_of_size(2, 2, seed=11))
    second.write_bytes(png_of_size(2, 2, seed=12))

    # When two pictures are sent with no message
    done = session.ferry("send", first, second, "--to", room)
    assert done.returncode == EX_OK, done.stderr

    # Then the room holds exactly the two images, in order, and no text
    events = homeserver.messages(user.token, room)
    assert msgtypes(events) == ["m.image", "m.image"]
    assert bodies(events) == ["first.png", "second.png"]


def test_several_destinations_each_get_the_same_and_are_tracked_one_by_one(sender, homeserver):
    session, user = sender
    # Given three rooms: one by id, one by its alias, one by id again
    first = room_of(homeserver, user, "Dest one")
    alias_localpart = f"dest-two-{uuid.uuid4().hex[:8]}"
    second = homeserver.create_room(user.token, name="Dest two", alias_localpart=alias_localpart)
    alias = f"#{alias_localpart}:{homeserver.server_name}"
    third = room_of(homeserver, user, "Dest three")
    photo = session.files / "everyone.png"
    photo.write_bytes(png_of_size(3, 3, seed=21))

    # When one share of a picture with a message goes to all three
    done = session.ferry("send", photo, "--message", "For all of you", "--to", first, "--to", alias, "--to", third)
    assert done.returncode == EX_OK, done.stderr
    share = session.get_share(new_share_id(done))

    # Then each room holds the picture with the message as its caption, once
    for room in (first, second, third):
        events = homeserver.messages(user.token, room)
        assert msgtypes(events) == ["m.image"], (room, bodies(events))
        assert bodies(events) == ["For all of you"]
        assert events[0]["content"]["filename"] == "everyone.png"
    # And the share tracks each destination, in the order given, as sent with its room and counts
    tracked = deliveries(share)
    assert [d["destination"] for d in tracked] == [first, alias, third]
    assert [d["room-id"] for d in tracked] == [first, second, third]
    for delivery in tracked:
        assert delivery["state"] == "sent", delivery
        assert delivery["events-sent"] == delivery["events-total"] == 1, delivery
        assert delivery["bytes-sent"] == delivery["bytes-total"] >= photo.stat().st_size, delivery
    assert share["state"] == "sent"
    # And the command line's JSON says the same per destination as GetShare
    shown = session.ferry("show", share["id"], "--json")
    assert shown.returncode == EX_OK, shown.stderr
    listed = json.loads(shown.stdout)["deliveries"]
    assert [(d["destination"], d["room_id"], d["state"], d["events_sent"], d["events_total"], d["bytes_sent"],
             d["retry_at"], d["error"]) for d in listed] == [
        (d["destination"], d["room-id"], "sent", 1, 1, d["bytes-sent"], None, None) for d in tracked]


def test_a_user_id_with_a_direct_chat_goes_to_that_chat(sender, homeserver, matrix_user):
    session, user = sender
    # Given a DM with a friend, recorded in m.direct as clients do
    friend = matrix_user("friend")
    dm = homeserver.create_room(user.token, is_direct=True, invite=[friend.user_id])
    homeserver.join(friend.token, dm)
    homeserver.set_direct(user.token, {**homeserver.direct(user.token), friend.user_id: [dm]})
    rooms_before = set(homeserver.joined_rooms(user.token))

    # When a text is shared to the friend's user id
    done = session.ferry("text", "Just for you", "--to", friend.user_id)
    assert done.returncode == EX_OK, done.stderr

    # Then it lands in that DM, and no new room was made
    assert bodies(homeserver.messages(friend.token, dm)) == ["Just for you"]
    assert set(homeserver.joined_rooms(user.token)) == rooms_before
    assert deliveries(session.get_share(new_share_id(done)))[0]["room-id"] == dm


def test_a_user_id_without_a_direct_chat_makes_a_new_one_recorded_in_m_direct(sender, homeserver, matrix_user):
    session, user = sender
    # Given a person Ferry's user has no chat with
    stranger = matrix_user("stranger")
    rooms_before = set(homeserver.joined_rooms(user.token))

    # When a text is shared to that person's user id
    done = session.ferry("text", "Hello, new friend", "--to", stranger.user_id)
    assert done.returncode == EX_OK, done.stderr

    # Then a new room exists, recorded in the sender's m.direct for that person
    [dm] = set(homeserver.joined_rooms(user.token)) - rooms_before
    assert homeserver.direct(user.token).get(stranger.user_id) == [dm]
    # And the person is invited to it as a direct chat
    invite = member_event(homeserver, user.token, dm, stranger.user_id)
    assert invite["content"]["membership"] == "invite"
    assert invite["content"].get("is_direct") is True
    # And the chat is end-to-end encrypted from its start, as Element makes them: the text is
    # in it as one m.room.encrypted, never as a plain m.room.message (test_encrypted_delivery
    # reads such texts with clients of its own)
    homeserver.join(stranger.token, dm)
    assert homeserver.call("GET", f"/_matrix/client/v3/rooms/{urllib.parse.quote(dm)}/state/m.room.encryption/",
                           stranger.token)["algorithm"] == "m.megolm.v1.aes-sha2"
    assert homeserver.messages(stranger.token, dm) == []
    assert len(homeserver.events(stranger.token, dm, "m.room.encrypted")) == 1

    # When a second text goes to the same person
    again = session.ferry("text", "And again", "--to", stranger.user_id)
    assert again.returncode == EX_OK, again.stderr

    # Then it uses the same DM: no second room
    assert set(homeserver.joined_rooms(user.token)) - rooms_before == {dm}
    assert len(homeserver.events(stranger.token, dm, "m.room.encrypted")) == 2


def test_staged_files_are_removed_once_the_share_is_sent(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Staging")
    photo = session.files / "staged.png"
    photo.write_bytes(png_of_size(2, 2, seed=31))

    # When a picture is shared and delivered
    share_id = session.share_ok(uris=[file_uri(photo)], destinations=[room])
    wait_for_state(session, share_id, "sent")
    homeserver.wait_for_messages(user.token, room, count=1)

    # Then its staged copy is gone from the spool, and the original is untouched
    wait_for(lambda: not session.spool_dir(share_id).exists(), timeout=10,
             what=f"the spool directory of {share_id} to be removed")
    assert photo.exists()


def test_no_wait_returns_at_once_and_the_share_is_delivered_anyway(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "No wait")

    # When `ferry text --no-wait` is used
    done = session.ferry("text", "Fire and forget", "--to", room, "--no-wait")

    # Then it prints the share id and exits 0, and the text arrives by itself, once
    assert done.returncode == EX_OK, done.stderr
    share_id = new_share_id(done)
    wait_for_state(session, share_id, "sent")
    assert bodies(homeserver.wait_for_messages(user.token, room, count=1)) == ["Fire and forget"]


def test_share_changed_reports_the_deliveries_on_the_way_to_sent(sender, homeserver):
    session, user = sender
    room = room_of(homeserver, user, "Progress")
    photo = session.files / "progress.png"
    photo.write_bytes(png_of_size(5, 5, seed=41))

    # When a share is delivered while a client listens to ShareChanged
    with session.signals() as signals:
        share_id = session.share_ok(uris=[file_uri(photo)], destinations=[room])
        wait_for_state(session, share_id, "sent")
        last = signals.wait_for_signal("ShareChanged",
                                       lambda s: s.first_string == share_id and 'string "sent"' in s.raw)

    # Then the signals carry the share's deliveries, the last one as sent
    assert "deliveries" in last.raw
    homeserver.wait_for_messages(user.token, room, count=1)
