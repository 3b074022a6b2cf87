"""Videos and sounds as the best clients send them: `m.video` with its duration, the size it is
shown at and a poster frame as its thumbnail; `m.audio` with its duration. The files are made by
GStreamer's test sources (gst-launch-1.0), their durations read back by mutagen (pure Python, not
GStreamer, which Ferry reads them with), the posters by ImageMagick, the encrypted ones by
matrix-nio."""

from __future__ import annotations

import hashlib
import struct
import subprocess
from pathlib import Path

import blurhash
import mutagen
import pytest

from eventschemas import schema_errors
from ferryenv import EX_OK
from matrixflow import sign_in, signed_in_session
from nioreaders import READERS
from test_pictures import identify, pixel


def gst(pipeline: str, output: Path) -> bytes:
    """A file GStreamer's test sources make, written by the pipeline's filesink at `output`."""
    subprocess.run(["gst-launch-1.0", "-q", *pipeline.replace("OUT", str(output)).split()], check=True,
                   capture_output=True, timeout=60)
    return output.read_bytes()


def phone_video(output: Path, width: int = 1280, height: int = 720, frames: int = 50) -> bytes:
    """An MP4 as phones record them: H.264 and AAC, 25 frames a second, SMPTE colour bars."""
    return gst(f"videotestsrc num-buffers={frames} pattern=smpte ! video/x-raw,width={width},height={height},"
               "framerate=25/1 ! x264enc ! mp4mux name=mux ! filesink location=OUT "
               "audiotestsrc num-buffers=86 ! avenc_aac ! mux.", output)


def boxes(data: bytes, start: int, end: int):
    """(type, start, end) of each ISO BMFF box between start and end."""
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        yield kind, at, at + size
        at += size


def turned_upright(mp4: bytes) -> bytes:
    """The MP4 with its video track's matrix turned a quarter clockwise, as a phone held upright
    records: the frames stay stored landscape, players show them portrait. The video track is the
    `trak` in `moov` whose handler is `vide`."""
    [(_, moov, moov_end)] = [b for b in boxes(mp4, 0, len(mp4)) if b[0] == b"moov"]
    for kind, trak, trak_end in boxes(mp4, moov + 8, moov_end):
        if kind != b"trak":
            continue
        parts = {k: (s, e) for k, s, e in boxes(mp4, trak + 8, trak_end)}
        media = parts[b"mdia"]
        handler = {k: s for k, s, e in boxes(mp4, media[0] + 8, media[1])}[b"hdlr"]
        if mp4[handler + 16:handler + 20] != b"vide":
            continue
        tkhd = parts[b"tkhd"][0]
        matrix = tkhd + 8 + 4 + (32 if mp4[tkhd + 8] == 1 else 20) + 8 + 8
        quarter = struct.pack(">9i", 0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000)
        return mp4[:matrix] + quarter + mp4[matrix + 36:]
    raise AssertionError("no video track")


def length_ms(path: Path) -> float:
    return mutagen.File(path).info.length * 1000


def is_white(colour: tuple[int, int, int]) -> bool:
    return all(c > 170 for c in colour) and max(colour) - min(colour) < 30


def is_blue(colour: tuple[int, int, int]) -> bool:
    return colour[2] > 150 and colour[0] < 80 and colour[1] < 80


@pytest.fixture(scope="module")
def sender(new_session, homeserver):
    user = homeserver.new_user("media")
    session = signed_in_session(new_session, homeserver, user)
    yield session, user
    session.stop()


def send(session, homeserver, user, path: Path, room_name: str) -> dict:
    room = homeserver.create_room(user.token, name=room_name)
    done = session.ferry("send", path, "--to", room)
    assert done.returncode == EX_OK, done.stderr
    [event] = homeserver.messages(user.token, room)
    return event


def test_a_phone_video_goes_with_its_duration_size_and_a_poster_frame(sender, homeserver):
    session, user = sender
    # Given a two-second MP4 of colour bars, 1280 × 720 (white on the left, blue on the right at the top)
    path = session.files / "VID_20261129.mp4"
    video = phone_video(path)

    # When it is shared
    event = send(session, homeserver, user, path, "Videos")

    # Then it is a video of its duration (as mutagen reads the file, within 0.1 s) and size
    content = event["content"]
    assert content["msgtype"] == "m.video"
    info = content["info"]
    assert (info["w"], info["h"], info["mimetype"], info["size"]) == (1280, 720, "video/mp4", len(video))
    assert abs(info["duration"] - length_ms(path)) <= 100, (info["duration"], length_ms(path))
    assert schema_errors(event) == [], event
    # And its poster is the first frame, a JPEG within 800 × 600 as described
    poster = homeserver.download(user.token, info["thumbnail_url"])
    assert identify(poster) == ("JPEG", 800, 450)
    assert info["thumbnail_info"] == {"w": 800, "h": 450, "mimetype": "image/jpeg", "size": len(poster)}
    assert is_white(pixel(poster, 20, 50)) and is_blue(pixel(poster, 780, 50))
    assert blurhash.components(info["xyz.amorgan.blurhash"]) == (4, 3)
    # And the video arrives unchanged
    assert homeserver.download(user.token, content["url"]) == video


def test_a_video_recorded_upright_is_shown_upright(sender, homeserver):
    session, user = sender
    landscape = phone_video(session.files / "stored.mp4", width=640, height=480, frames=25)
    path = session.files / "VID_upright.mp4"
    path.write_bytes(turned_upright(landscape))

    event = send(session, homeserver, user, path, "Upright")

    info = event["content"]["info"]
    assert (info["w"], info["h"]) == (480, 640)
    poster = homeserver.download(user.token, info["thumbnail_url"])
    # Within 800 × 600: 450 × 600
    assert identify(poster) == ("JPEG", 450, 600)
    # Turned clockwise: the bars' top edge (white on the left, blue on the right) is now the right
    # edge, white at the top and blue at the bottom
    assert is_white(pixel(poster, 440, 20)) and is_blue(pixel(poster, 440, 580))


def test_a_webm_video_goes_as_a_video_too(sender, homeserver):
    session, user = sender
    path = session.files / "screencast.webm"
    gst("videotestsrc num-buffers=40 ! video/x-raw,width=320,height=240,framerate=20/1 ! vp8enc ! webmmux "
        "! filesink location=OUT", path)

    event = send(session, homeserver, user, path, "WebM")

    info = event["content"]["info"]
    assert (event["content"]["msgtype"], info["mimetype"]) == ("m.video", "video/webm")
    assert (info["w"], info["h"]) == (320, 240)
    assert abs(info["duration"] - 2000) <= 100
    # Smaller than the box: the poster is the frame at its own size
    assert info["thumbnail_info"]["w"] == 320 and info["thumbnail_info"]["h"] == 240
    assert schema_errors(event) == []


@pytest.mark.parametrize("name,pipeline", [
    ("memo.ogg", "audiotestsrc num-buffers=108 ! audio/x-raw,rate=44100 ! vorbisenc ! oggmux ! filesink location=OUT"),
    # VBR with its Xing header, as LAME writes an MP3
    ("song.mp3", "audiotestsrc num-buffers=130 ! audio/x-raw,rate=44100 ! lamemp3enc ! xingmux ! filesink location=OUT"),
])
def test_a_sound_goes_with_its_duration(sender, homeserver, name, pipeline):
    session, user = sender
    path = session.files / name
    sound = gst(pipeline, path)

    event = send(session, homeserver, user, path, name)

    content = event["content"]
    assert content["msgtype"] == "m.audio"
    info = content["info"]
    assert abs(info["duration"] - length_ms(path)) <= 100, (info["duration"], length_ms(path))
    assert "w" not in info and "thumbnail_url" not in info
    assert schema_errors(event) == [], event
    assert homeserver.download(user.token, content["url"]) == sound


def test_a_webm_recorded_as_a_stream_goes_without_a_guessed_duration(sender, homeserver):
    """A browser's recording (MediaRecorder) says no duration; GStreamer's guess from its first
    frames was 0.36 s for this 2 s file."""
    session, user = sender
    path = session.files / "recording.webm"
    gst("videotestsrc num-buffers=50 ! video/x-raw,width=320,height=240,framerate=25/1 ! vp8enc "
        "! webmmux streamable=true ! filesink location=OUT", path)

    info = send(session, homeserver, user, path, "Recording")["content"]["info"]

    assert "duration" not in info
    assert (info["w"], info["h"]) == (320, 240) and info["thumbnail_info"]["w"] == 320


def test_a_video_whose_codec_this_system_lacks_keeps_its_duration_and_size(sender, homeserver):
    session, user = sender
    # An MP4 whose video says AV1, which no decoder here reads
    landscape = phone_video(session.files / "h264.mp4", width=640, height=480, frames=25)
    path = session.files / "VID_av1.mp4"
    path.write_bytes(landscape.replace(b"avc1", b"av01"))

    info = send(session, homeserver, user, path, "AV1")["content"]["info"]

    assert (info["w"], info["h"]) == (640, 480)
    assert abs(info["duration"] - length_ms(session.files / "h264.mp4")) <= 100
    assert "thumbnail_url" not in info and "thumbnail_info" not in info


def test_a_video_nothing_can_read_still_arrives_whole(sender, homeserver):
    session, user = sender
    path = session.files / "broken.mp4"
    broken = b"\x00\x00\x00\x20ftypisom" + bytes(range(256)) * 64
    path.write_bytes(broken)

    event = send(session, homeserver, user, path, "Broken video")

    content = event["content"]
    assert (content["msgtype"], content["info"]["mimetype"]) == ("m.video", "video/mp4")
    assert not {"duration", "w", "h", "thumbnail_url"} & content["info"].keys()
    assert homeserver.download(user.token, content["url"]) == broken


@pytest.fixture(scope="module")
def encrypting(new_session, homeserver):
    user = homeserver.new_user("e2ee-media")
    session = new_session()
    sign_in(session, homeserver, user)
    yield session, user
    session.stop()


@pytest.mark.parametrize("kind", READERS)
def test_an_encrypted_rooms_video_poster_is_encrypted_like_the_video(encrypting, homeserver, matrix_user,
                                                                     nio_reader, kind):
    session, me = encrypting
    friend = matrix_user("watcher")
    reader = nio_reader(kind, friend)
    room = homeserver.create_room(me.token, name="Secret videos", encrypted=True, invite=[friend.user_id])
    homeserver.join(friend.token, room)
    path = session.files / "secret.mp4"
    video = phone_video(path, frames=25)

    done = session.ferry("send", path, "--message", "Watch this", "--to", room)
    assert done.returncode == EX_OK, done.stderr

    # One event, the caption its body, decrypted by a client we did not write
    [event] = [e for e in reader.encrypted_messages(room) if e["sender"] == me.user_id]
    assert event["decrypted"], event
    content = event["content"]
    assert (content["msgtype"], content["body"], content["filename"]) == ("m.video", "Watch this", "secret.mp4")
    assert reader.download(content["file"])["sha256"] == hashlib.sha256(video).hexdigest()
    info = content["info"]
    assert (info["w"], info["h"]) == (1280, 720)
    assert abs(info["duration"] - length_ms(path)) <= 100
    # The poster is named only by its encrypted file object, and decrypts to the JPEG described
    assert "thumbnail_url" not in info
    poster = reader.download_bytes(info["thumbnail_file"])
    assert identify(poster) == ("JPEG", 800, 450)
    assert info["thumbnail_info"] == {"w": 800, "h": 450, "mimetype": "image/jpeg", "size": len(poster)}
    stored = homeserver.download(friend.token, info["thumbnail_file"]["url"])
    assert stored != poster and not stored.startswith(b"\xff\xd8")


@pytest.mark.parametrize("kind", READERS)
def test_an_encrypted_rooms_recording_keeps_its_duration(encrypting, homeserver, matrix_user, nio_reader, kind):
    session, me = encrypting
    friend = matrix_user("listener")
    reader = nio_reader(kind, friend)
    room = homeserver.create_room(me.token, name="Secret memos", encrypted=True, invite=[friend.user_id])
    homeserver.join(friend.token, room)
    path = session.files / "memo.ogg"
    sound = gst("audiotestsrc num-buffers=108 ! audio/x-raw,rate=44100 ! vorbisenc ! oggmux ! filesink location=OUT",
                path)

    done = session.ferry("send", path, "--to", room)
    assert done.returncode == EX_OK, done.stderr

    [event] = [e for e in reader.encrypted_messages(room) if e["sender"] == me.user_id]
    assert event["decrypted"], event
    content = event["content"]
    assert content["msgtype"] == "m.audio"
    assert reader.download(content["file"])["sha256"] == hashlib.sha256(sound).hexdigest()
    assert abs(content["info"]["duration"] - length_ms(path)) <= 100
