"""What Ferry sends, checked against the Matrix specification's own event schemas (the YAML
JSON Schemas of `m.room.message` and its msgtypes, kept unchanged in Tests/integration/spec): a
text, a link, a picture with its caption, and a message with a picture, a video, a sound and a
file, each read back from Synapse's timeline as any client would see it."""

from __future__ import annotations

import copy

import pytest

from eventschemas import schema_errors
from ferryenv import EX_OK
from matrixflow import binary_bytes, mp4_bytes, msgtypes, png_of_size, signed_in_session, wav_bytes


@pytest.fixture(scope="module")
def sender(new_session, homeserver):
    user = homeserver.new_user("schemas")
    session = signed_in_session(new_session, homeserver, user)
    yield session, user
    session.stop()


def test_every_kind_of_message_ferry_sends_is_valid_under_the_specs_own_schema(sender, homeserver):
    session, user = sender
    room = homeserver.create_room(user.token, name="Schemas")
    picture = session.files / "harbour.png"
    picture.write_bytes(png_of_size(8, 6, seed=3))
    files = {"boat.png": png_of_size(4, 4, seed=4), "wake.mp4": mp4_bytes(), "horn.wav": wav_bytes(),
             "manifest.bin": binary_bytes(2048, seed=5)}
    for name, data in files.items():
        (session.files / name).write_bytes(data)

    # When a text naming @room, a link, a picture with a caption, and four files with a message are sent
    for command in (("text", "Hello @room and @someone:ferry.test"), ("text", "https://example.org/a?b=c"),
                    ("send", picture, "--message", "The harbour at dawn"),
                    ("send", *(session.files / name for name in files), "--message", "The crossing")):
        done = session.ferry(*command, "--to", room)
        assert done.returncode == EX_OK, done.stderr

    # Then the room holds each as the spec describes it
    events = homeserver.messages(user.token, room)
    assert msgtypes(events) == ["m.text", "m.text", "m.image", "m.text", "m.image", "m.video", "m.audio", "m.file"]
    for event in events:
        assert schema_errors(event) == [], event
        # And none pings anyone (Matrix 1.7 intentional mentions: an empty m.mentions)
        assert event["content"]["m.mentions"] == {}, event
    # And the caption is the picture's body, its name the filename (Matrix 1.10)
    caption = events[2]["content"]
    assert (caption["body"], caption["filename"]) == ("The harbour at dawn", "harbour.png")


def test_the_schema_check_finds_what_the_spec_forbids(sender, homeserver):
    """The check above cannot pass vacuously: events the spec does not allow fail it."""
    session, user = sender
    room = homeserver.create_room(user.token, name="Schema check")
    picture = session.files / "check.png"
    picture.write_bytes(png_of_size(2, 2, seed=6))
    done = session.ferry("send", picture, "--to", room)
    assert done.returncode == EX_OK, done.stderr
    [event] = homeserver.messages(user.token, room)
    assert schema_errors(event) == []

    for broken in ({"body": None}, {"url": "https://example.org/check.png"}, {"info": {"w": "two"}}):
        wrong = copy.deepcopy(event)
        for key, value in broken.items():
            if value is None:
                del wrong["content"][key]
            else:
                wrong["content"][key] = value
        assert schema_errors(wrong), broken
