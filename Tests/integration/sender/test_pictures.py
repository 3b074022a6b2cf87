"""Pictures as the best clients send them: a thumbnail for a large one (upright, within 800 × 600,
JPEG or PNG for transparency), the size it is shown at, a blurhash; in an encrypted room the
thumbnail encrypted like the file. Pictures are made with ImageMagick and read back with it, the
blurhash with the Python implementation on PyPI, the encrypted thumbnail by matrix-nio: none of
it is Ferry's code, nor GdkPixbuf, which Ferry reads pictures with."""

from __future__ import annotations

import hashlib
import struct
import subprocess

import blurhash
import pytest

from eventschemas import schema_errors
from ferryenv import EX_OK
from hostileproxy import HostileProxy
from matrixflow import sign_in, sign_in_call, signed_in_session
from nioreaders import READERS


def magick(*arguments: str, output: str) -> bytes:
    """A picture ImageMagick draws, written as `output` (e.g. "jpeg:-")."""
    return subprocess.run(["convert", *arguments, output], check=True, capture_output=True).stdout


def identify(data: bytes) -> tuple[str, int, int]:
    """(format, width, height) as ImageMagick reads the bytes."""
    found = subprocess.run(["identify", "-format", "%m %w %h", "-"], input=data, check=True,
                           capture_output=True).stdout.decode().split()
    return found[0], int(found[1]), int(found[2])


def pixel(data: bytes, x: int, y: int) -> tuple[int, int, int]:
    """The 8-bit RGB colour at (x, y)."""
    raw = subprocess.run(["convert", "-", "-crop", f"1x1+{x}+{y}", "-depth", "8", "rgb:-"], input=data,
                         check=True, capture_output=True).stdout
    return raw[0], raw[1], raw[2]


def alpha(data: bytes, x: int, y: int) -> int:
    """The 8-bit opacity at (x, y)."""
    raw = subprocess.run(["convert", "-", "-crop", f"1x1+{x}+{y}", "-depth", "8", "rgba:-"], input=data,
                         check=True, capture_output=True).stdout
    return raw[3]


def with_orientation(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an EXIF segment whose only entry is its orientation (6: turn it a quarter
    clockwise to show it, as a phone held upright stores a photo)."""
    entry = struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) + entry + struct.pack(">I", 0)
    segment = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(segment) + 2) + segment + jpeg[2:]


def is_red(colour: tuple[int, int, int]) -> bool:
    return colour[0] > 180 and colour[2] < 80


def is_blue(colour: tuple[int, int, int]) -> bool:
    return colour[2] > 180 and colour[0] < 80


@pytest.fixture(scope="module")
def sender(new_session, homeserver):
    user = homeserver.new_user("pictures")
    session = signed_in_session(new_session, homeserver, user)
    yield session, user
    session.stop()


def send(session, homeserver, user, name: str, data: bytes, room_name: str) -> dict:
    """Shares one file into a new room of its own; returns the event it became."""
    room = homeserver.create_room(user.token, name=room_name)
    path = session.files / name
    path.write_bytes(data)
    done = session.ferry("send", path, "--to", room)
    assert done.returncode == EX_OK, done.stderr
    [event] = homeserver.messages(user.token, room)
    return event


def test_a_large_photo_goes_with_an_upright_thumbnail_its_shown_size_and_a_blurhash(sender, homeserver):
    session, user = sender
    # Given a 3000 × 2000 photo, red at the top and blue at the bottom as stored, which its EXIF
    # orientation says to show turned a quarter clockwise (2000 × 3000, blue on the left)
    stored = magick("-size", "3000x2000", "gradient:red-blue", "-quality", "90", output="jpeg:-")
    photo = with_orientation(stored, 6)

    # When it is shared
    event = send(session, homeserver, user, "IMG_0001.jpg", photo, "Photos")

    # Then the event is a picture of the size it is shown at, valid under the spec's schema
    content = event["content"]
    assert content["msgtype"] == "m.image"
    info = content["info"]
    assert (info["w"], info["h"], info["mimetype"], info["size"]) == (2000, 3000, "image/jpeg", len(photo))
    assert schema_errors(event) == [], event
    # And its thumbnail is a JPEG within 800 × 600, upright (blue on the left), as described
    thumbnail = homeserver.download(user.token, info["thumbnail_url"])
    assert identify(thumbnail) == ("JPEG", 400, 600)
    assert info["thumbnail_info"] == {"w": 400, "h": 600, "mimetype": "image/jpeg", "size": len(thumbnail)}
    assert is_blue(pixel(thumbnail, 5, 300)) and is_red(pixel(thumbnail, 394, 300))
    # And the blurhash decodes (by another implementation) to the same picture: blue left, red right
    hashed = info["xyz.amorgan.blurhash"]
    assert blurhash.components(hashed) == (4, 3)
    decoded = blurhash.decode(hashed, 4, 6)
    assert is_blue(tuple(round(c) for c in decoded[3][0])) and is_red(tuple(round(c) for c in decoded[3][3]))
    # And the original arrives unchanged
    assert homeserver.download(user.token, content["url"]) == photo


def test_a_picture_with_transparency_gets_a_png_thumbnail_that_keeps_it(sender, homeserver):
    session, user = sender
    picture = magick("-size", "1600x1200", "xc:none", "-fill", "red", "-draw", "rectangle 0,0 799,1199",
                     output="png32:-")

    event = send(session, homeserver, user, "overlay.png", picture, "Overlays")

    info = event["content"]["info"]
    thumbnail = homeserver.download(user.token, info["thumbnail_url"])
    assert identify(thumbnail) == ("PNG", 800, 600)
    # The left half red and opaque, the right half clear
    assert alpha(thumbnail, 100, 300) == 255 and alpha(thumbnail, 700, 300) == 0
    assert info["thumbnail_info"] == {"w": 800, "h": 600, "mimetype": "image/png", "size": len(thumbnail)}
    assert (info["w"], info["h"]) == (1600, 1200)
    assert schema_errors(event) == []


def test_a_screenshot_whose_alpha_channel_is_opaque_gets_a_jpeg_thumbnail(sender, homeserver):
    session, user = sender
    screenshot = magick("-size", "1600x1200", "gradient:white-black", output="png32:-")
    assert identify(screenshot) == ("PNG", 1600, 1200)

    event = send(session, homeserver, user, "Screenshot.png", screenshot, "Screenshots")

    info = event["content"]["info"]
    thumbnail = homeserver.download(user.token, info["thumbnail_url"])
    assert identify(thumbnail) == ("JPEG", 800, 600)
    assert info["thumbnail_info"]["mimetype"] == "image/jpeg"


def test_a_picture_shown_taller_than_the_box_gets_a_thumbnail_though_it_is_stored_within_it(sender, homeserver):
    session, user = sender
    # Stored 800 × 600, which needs no thumbnail; shown 600 × 800 (orientation 6), which does
    photo = with_orientation(magick("-size", "800x600", "gradient:red-blue", output="jpeg:-"), 6)

    event = send(session, homeserver, user, "portrait.jpg", photo, "Portraits")

    info = event["content"]["info"]
    assert (info["w"], info["h"]) == (600, 800)
    thumbnail = homeserver.download(user.token, info["thumbnail_url"])
    assert identify(thumbnail) == ("JPEG", 450, 600)


def test_a_small_picture_is_its_own_preview(sender, homeserver):
    session, user = sender
    picture = magick("-size", "300x200", "xc:red", output="png:-")

    event = send(session, homeserver, user, "dot.png", picture, "Small")

    info = event["content"]["info"]
    assert "thumbnail_url" not in info and "thumbnail_info" not in info
    assert (info["w"], info["h"]) == (300, 200)
    assert blurhash.components(info["xyz.amorgan.blurhash"]) == (4, 3)
    assert schema_errors(event) == []


@pytest.mark.parametrize("kind,mimetype", [("heic", "image/heif"), ("avif", "image/avif"), ("webp", "image/webp")])
def test_what_phones_send_goes_as_a_picture_with_its_thumbnail(sender, homeserver, kind, mimetype):
    """With the loaders the package recommends (heif-gdk-pixbuf, webp-pixbuf-loader)."""
    session, user = sender
    picture = magick("-size", "2000x1500", "gradient:red-blue", output=f"{kind}:-")

    event = send(session, homeserver, user, f"IMG_0003.{kind}", picture, kind)

    content = event["content"]
    assert (content["msgtype"], content["info"]["mimetype"]) == ("m.image", mimetype)
    assert (content["info"]["w"], content["info"]["h"]) == (2000, 1500)
    thumbnail = homeserver.download(user.token, content["info"]["thumbnail_url"])
    assert identify(thumbnail) == ("JPEG", 800, 600)
    assert is_red(pixel(thumbnail, 400, 5)) and is_blue(pixel(thumbnail, 400, 594))
    assert schema_errors(event) == []


def test_a_picture_no_decoder_can_read_still_arrives_whole(sender, homeserver):
    session, user = sender
    # A JPEG's first bytes and then noise: every client would try to show it, so it stays a picture
    broken = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40
    event = send(session, homeserver, user, "broken.jpg", broken, "Broken")
    content = event["content"]
    assert content["msgtype"] == "m.image" and "thumbnail_url" not in content["info"]
    assert homeserver.download(user.token, content["url"]) == broken

    # A HEIF no loader of this system reads is a file, which people can still open
    heif = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(range(256)) * 8
    event = send(session, homeserver, user, "IMG_0002.heic", heif, "Phone")
    content = event["content"]
    assert (content["msgtype"], content["info"]["mimetype"]) == ("m.file", "image/heif")
    assert homeserver.download(user.token, content["url"]) == heif


def test_a_thumbnail_whose_upload_keeps_failing_is_left_out_and_the_picture_goes(new_session, homeserver):
    # Given a server whose media store fails every thumbnail upload (502), and only those
    proxy = HostileProxy(homeserver).start()
    failing = proxy.answer("POST", r"/_matrix/media/v3/upload\?.*filename=thumbnail", status=502,
                           body={"errcode": "M_UNKNOWN", "error": "media store away"}, times=100)
    user = homeserver.new_user("thumbless")
    session = new_session(FERRY_RETRY_MAX_SECONDS="2")
    sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
    room = homeserver.create_room(user.token, name="No thumbnails")
    photo = magick("-size", "1600x1200", "gradient:red-blue", output="jpeg:-")
    path = session.files / "harbour.jpg"
    path.write_bytes(photo)
    try:
        # When a large photo is shared
        done = session.ferry("send", path, "--to", room)
        assert done.returncode == EX_OK, done.stderr
    finally:
        proxy.stop()

    # Then, after the first two attempts waited for the thumbnail, the third sent the photo without it
    assert failing.hits == 3
    [event] = homeserver.messages(user.token, room)
    info = event["content"]["info"]
    assert "thumbnail_url" not in info and "thumbnail_info" not in info
    assert (info["w"], info["h"]) == (1600, 1200)
    assert homeserver.download(user.token, event["content"]["url"]) == photo


@pytest.fixture(scope="module")
def encrypting(new_session, homeserver):
    user = homeserver.new_user("e2ee-pictures")
    session = new_session()
    sign_in(session, homeserver, user)
    yield session, user
    session.stop()


@pytest.mark.parametrize("kind", READERS)
def test_an_encrypted_rooms_thumbnail_is_encrypted_like_the_picture(encrypting, homeserver, matrix_user,
                                                                    nio_reader, kind):
    session, me = encrypting
    friend = matrix_user("viewer")
    reader = nio_reader(kind, friend)
    room = homeserver.create_room(me.token, name="Secret photos", encrypted=True, invite=[friend.user_id])
    homeserver.join(friend.token, room)
    photo = magick("-size", "1600x1200", "gradient:red-blue", output="jpeg:-")
    path = session.files / "secret.jpg"
    path.write_bytes(photo)

    done = session.ferry("send", path, "--message", "Only for you", "--to", room)
    assert done.returncode == EX_OK, done.stderr

    # One event: the picture, its caption the body (Matrix 1.10), decrypted by a client we did not write
    [event] = [e for e in reader.encrypted_messages(room) if e["sender"] == me.user_id]
    assert event["decrypted"], event
    content = event["content"]
    assert (content["msgtype"], content["body"], content["filename"]) == ("m.image", "Only for you", "secret.jpg")
    assert reader.download(content["file"])["sha256"] == hashlib.sha256(photo).hexdigest()
    info = content["info"]
    assert (info["w"], info["h"]) == (1600, 1200)
    # The thumbnail is named only by its encrypted file object, never by a plain URL
    assert "thumbnail_url" not in info and "url" not in event["content"]
    thumbnail_file = info["thumbnail_file"]
    thumbnail = reader.download_bytes(thumbnail_file)
    assert identify(thumbnail) == ("JPEG", 800, 600)
    assert info["thumbnail_info"] == {"w": 800, "h": 600, "mimetype": "image/jpeg", "size": len(thumbnail)}
    # What the server holds is ciphertext, not the JPEG
    stored = homeserver.download(friend.token, thumbnail_file["url"])
    assert stored != thumbnail and not stored.startswith(b"\xff\xd8")
