"""Uploading ahead: a large file shared straight to rooms starts uploading while Ferry is still
copying it into its spool, so the copy and the upload overlap. It must change nothing a person or
the room can see: the file arrives once, whole, also when the early upload is cut off half-way;
nothing reaches the server for an encrypted room, or before a person has chosen where a share goes.

What was uploaded is read from Synapse's media admin API; which way the upload went is the one
thing only the service's log can tell."""

from __future__ import annotations

import os
import time

import pytest

from ferryenv import EX_OK, file_uri
from matrixflow import complete_share, new_share_id, sign_in, user_media, wait_for_state

# Over the size from which Ferry uploads ahead (8 MiB), and not a multiple of a copy chunk.
LARGE = (24 << 20) + 12345
EARLY = "file uploaded while it was staged"
# How AsyncHTTPClient names a connection the server closed in the middle of a request.
DROPPED = "remoteConnectionClosed"


@pytest.fixture(scope="module")
def sender(new_session, homeserver):
    """(session, user): a Ferry signed in as a user of its own on the shared server."""
    user = homeserver.new_user("aheadsender")
    session = new_session()
    sign_in(session, homeserver, user)
    yield session, user
    session.stop()


def large_file(session, name: str) -> tuple:
    data = os.urandom(LARGE)
    path = session.files / name
    path.write_bytes(data)
    return path, data


def early_upload_logged(session, share_id: str) -> bool:
    return any(EARLY in line and share_id in line for line in session.log_tail(5000).splitlines())


def test_a_large_file_sent_to_a_room_is_uploaded_while_it_is_staged_and_only_once(sender, homeserver):
    session, user = sender
    room = homeserver.create_room(user.token, name="Big file")
    path, data = large_file(session, "recording.bin")
    media_before = len(user_media(homeserver, user.user_id))

    # When a person sends a large file to a room and waits
    done = session.ferry("send", path, "--to", room)

    # Then the room holds one m.file whose content is the file, byte for byte
    assert done.returncode == EX_OK, done.stderr
    [event] = homeserver.messages(user.token, room)
    assert event["content"]["msgtype"] == "m.file"
    assert event["content"]["info"]["size"] == LARGE
    assert homeserver.download(user.token, event["content"]["url"]) == data
    # And the server holds exactly one new upload: the early one was used, not repeated
    media = user_media(homeserver, user.user_id)
    assert len(media) == media_before + 1
    assert early_upload_logged(session, new_share_id(done)), session.log_tail()


def test_a_large_file_for_an_encrypted_room_is_uploaded_early_but_encrypted(sender, homeserver):
    session, user = sender
    room = homeserver.create_room(user.token, name="Secret film", encrypted=True)
    path, _ = large_file(session, "secret.bin")
    media_before = len(user_media(homeserver, user.user_id))

    # When a large file is shared to an end-to-end encrypted room
    share_id = session.share_ok(uris=[file_uri(path)], destinations=[room])

    # Then it is uploaded while it is staged, as for a plain room, but encrypted: one upload,
    # whose bytes are not the file's, and one m.room.encrypted carrying its key
    wait_for_state(session, share_id, "sent")
    assert early_upload_logged(session, share_id)
    assert len(user_media(homeserver, user.user_id)) == media_before + 1
    assert homeserver.messages(user.token, room) == []
    [event] = homeserver.events(user.token, room, "m.room.encrypted")
    assert event["sender"] == user.user_id
    # (test_encrypted_delivery reads such files back with clients of its own)


def test_a_large_file_for_a_plain_and_an_encrypted_room_is_not_uploaded_early(sender, homeserver):
    session, user = sender
    plain = homeserver.create_room(user.token, name="Plain film")
    secret = homeserver.create_room(user.token, name="Secret film too", encrypted=True)
    path, data = large_file(session, "both.bin")
    media_before = len(user_media(homeserver, user.user_id))

    # When it goes to both kinds of room at once
    share_id = session.share_ok(uris=[file_uri(path)], destinations=[plain, secret])

    # Then no early upload (it could be only one of the two kinds): each room gets its own
    wait_for_state(session, share_id, "sent")
    assert not early_upload_logged(session, share_id)
    assert len(user_media(homeserver, user.user_id)) == media_before + 2
    [event] = homeserver.messages(user.token, plain)
    assert homeserver.download(user.token, event["content"]["url"]) == data
    assert len(homeserver.events(user.token, secret, "m.room.encrypted")) == 1


def test_a_large_file_waiting_for_its_destination_is_not_uploaded_before_one_is_chosen(sender, homeserver):
    session, user = sender
    room = homeserver.create_room(user.token, name="Chosen later")
    path, data = large_file(session, "later.bin")
    media_before = len(user_media(homeserver, user.user_id))

    # When a large file is shared with no destination yet (the dialog would ask where to)
    share_id = session.share_ok(uris=[file_uri(path)])
    assert session.get_share(share_id)["state"] == "awaiting-destination"

    # Then nothing reaches the server while the person chooses (an upload of this size on loopback
    # takes a fraction of this wait)
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        assert len(user_media(homeserver, user.user_id)) == media_before
        time.sleep(0.1)

    # And once the room is chosen, the file goes there, uploaded once
    complete_share(session, share_id, [room]).expect_ok()
    wait_for_state(session, share_id, "sent")
    [event] = homeserver.messages(user.token, room)
    assert homeserver.download(user.token, event["content"]["url"]) == data
    assert len(user_media(homeserver, user.user_id)) == media_before + 1
    assert not early_upload_logged(session, share_id)


def test_a_large_file_with_a_message_is_one_event_captioned_with_it_from_the_early_upload(sender, homeserver):
    session, user = sender
    room = homeserver.create_room(user.token, name="Captioned")
    path, data = large_file(session, "talk.bin")

    # When a large file and a message are sent together
    done = session.ferry("send", path, "--to", room, "--message", "The talk, as promised")

    # Then the room holds one event: the file, with the message as its caption, from the upload
    # begun while it was staged
    assert done.returncode == EX_OK, done.stderr
    [event] = homeserver.messages(user.token, room)
    assert (event["content"]["msgtype"], event["content"]["body"]) == ("m.file", "The talk, as promised")
    assert event["content"]["filename"] == "talk.bin"
    assert homeserver.download(user.token, event["content"]["url"]) == data
    assert early_upload_logged(session, new_share_id(done)), session.log_tail()


def test_an_early_upload_cut_off_mid_body_is_not_used_and_the_file_still_arrives_whole_once(through_proxy, homeserver):
    # Given a Ferry whose server drops the first upload's connection once it has taken 1 MiB of it
    session, user, room, proxy = through_proxy(user="aheadcut", room="Cut short")
    cut = proxy.answer("POST", r"/_matrix/media/v3/upload", stop_reading_after=1 << 20, times=1)
    path, data = large_file(session, "cut.bin")

    # When a large file is sent to a room (its upload starts while it is staged)
    done = session.ferry("send", path, "--to", room, timeout=120)

    # Then the cut upload was the early one, and it was not used: the sender uploaded the
    # staged copy itself, and the room holds the file once, byte for byte, from one upload
    assert done.returncode == EX_OK, (done.stderr, session.log_tail())
    assert cut.hits == 1
    [not_used] = [line for line in session.log_tail(5000).splitlines() if "early upload not used" in line]
    assert DROPPED in not_used, not_used
    assert not early_upload_logged(session, new_share_id(done))
    [event] = homeserver.messages(user.token, room)
    assert homeserver.download(user.token, event["content"]["url"]) == data
    assert len(user_media(homeserver, user.user_id)) == 1
