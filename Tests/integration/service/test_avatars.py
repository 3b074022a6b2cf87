"""People's and rooms' pictures: ListDestinations names each destination's picture ("avatar", an
mxc:// URI: the room's own, the other person's for a direct chat), and GetAvatar makes one a file
in $XDG_CACHE_HOME/ferry, fetched once through authenticated media. The pictures are drawn by
ImageMagick, set on a real Synapse through its own API, and read back with ImageMagick."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from urllib.parse import quote

from gi.repository import GLib

from hostileproxy import HostileProxy
from matrixflow import list_destinations, png_of_size, sign_in, sign_in_call


def square(colour: str, size: int = 200) -> bytes:
    return subprocess.run(["convert", "-size", f"{size}x{size}", f"xc:{colour}", "png:-"], check=True,
                          capture_output=True).stdout


def picture(path: str) -> tuple[str, int, int, tuple[int, int, int]]:
    """(format, width, height, the colour in the middle) as ImageMagick reads the file."""
    found = subprocess.run(["identify", "-format", "%m %w %h", path], check=True, capture_output=True,
                           text=True).stdout.split()
    width, height = int(found[1]), int(found[2])
    raw = subprocess.run(["convert", path, "-crop", f"1x1+{width // 2}+{height // 2}", "-depth", "8", "rgb:-"],
                         check=True, capture_output=True).stdout
    return found[0], width, height, (raw[0], raw[1], raw[2])


def set_profile_picture(homeserver, user, colour: str) -> str:
    uri = homeserver.upload(user.token, square(colour), "image/png")
    homeserver.call("PUT", f"/_matrix/client/v3/profile/{quote(user.user_id)}/avatar_url", user.token,
                    {"avatar_url": uri})
    return uri


def set_room_picture(homeserver, user, room: str, colour: str) -> str:
    uri = homeserver.upload(user.token, square(colour), "image/png")
    homeserver.call("PUT", f"/_matrix/client/v3/rooms/{quote(room)}/state/m.room.avatar/", user.token, {"url": uri})
    return uri


def get_avatar(session, account: str, uri: str, size: int = 64):
    return session.gdbus_call("GetAvatar", GLib.Variant("s", account), GLib.Variant("s", uri),
                              GLib.Variant("u", size), timeout=30)


def red(colour) -> bool:
    return colour[0] > 200 and colour[1] < 60 and colour[2] < 60


def blue(colour) -> bool:
    return colour[2] > 200 and colour[0] < 60 and colour[1] < 60


def green(colour) -> bool:
    return colour[1] > 100 and colour[0] < 60 and colour[2] < 60


def test_rooms_and_people_are_listed_with_their_pictures_and_each_becomes_a_file(new_session, homeserver,
                                                                                 matrix_user):
    # Given a room with a red picture, a direct chat and an unnamed room with a friend whose own
    # picture is blue, a room without one, and an account whose own picture is green
    me, friend = matrix_user("pictured"), matrix_user("friend")
    t = uuid.uuid4().hex[:6]
    photos = homeserver.create_room(me.token, name=f"Photos {t}")
    room_uri = set_room_picture(homeserver, me, photos, "red")
    bare = homeserver.create_room(me.token, name=f"Bare {t}")
    dm = homeserver.create_room(me.token, is_direct=True, invite=[friend.user_id])
    friend_uri = set_profile_picture(homeserver, friend, "blue")
    homeserver.join(friend.token, dm)
    homeserver.set_direct(me.token, {friend.user_id: [dm]})
    pair = homeserver.create_room(me.token, invite=[friend.user_id])
    homeserver.join(friend.token, pair)
    set_profile_picture(homeserver, me, "lime")
    session = new_session()
    sign_in(session, homeserver, me)

    # When the destinations are listed
    found = {entry["id"]: entry for entry in list_destinations(session).expect_ok()}

    # Then each names its picture: the room's own, the friend's for the direct chat, none for the bare room
    assert found[photos]["avatar"] == room_uri
    assert found[dm]["avatar"] == friend_uri
    # (an unnamed room of two shows the other person, as clients show it)
    assert found[pair]["avatar"] == friend_uri
    assert "avatar" not in found[bare]

    # And GetAvatar makes each a file in Ferry's cache, the picture it names, square and at least the
    # size asked (the server scales to the nearest of its own sizes: Synapse's next is 96)
    cache = Path(session.env["XDG_CACHE_HOME"]) / "ferry" / "avatars"
    room_file = get_avatar(session, me.user_id, room_uri).expect_ok()[0]
    assert Path(room_file).parent == cache
    kind, width, height, colour = picture(room_file)
    assert width == height and 64 <= width < 200 and red(colour), (kind, width, height, colour)
    assert blue(picture(get_avatar(session, me.user_id, friend_uri, 96).expect_ok()[0])[3])
    # And "" asks for the account's own picture, from its profile
    own = get_avatar(session, me.user_id, "").expect_ok()[0]
    assert green(picture(own)[3])
    # And the files are the person's alone
    assert cache.stat().st_mode & 0o777 == 0o700 and Path(room_file).stat().st_mode & 0o777 == 0o600


def test_a_picture_is_fetched_once_then_served_from_the_cache_also_after_a_restart(new_session, homeserver,
                                                                                   matrix_user):
    # Given an account signed in through a proxy that counts the media requests
    me = matrix_user("cached")
    room = homeserver.create_room(me.token, name="Cached")
    uri = set_room_picture(homeserver, me, room, "red")
    proxy = HostileProxy(homeserver).start()
    try:
        session = new_session()
        sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()

        # When the same picture is asked for three times, a dialog's rows at once and again after a restart
        first = get_avatar(session, me.user_id, uri).expect_ok()[0]
        second = get_avatar(session, me.user_id, uri).expect_ok()[0]
        session.kill_service()
        third = get_avatar(session, me.user_id, uri).expect_ok()[0]

        # Then the server was asked once, and every answer is the same file
        thumbnails = [path for _, path, _ in proxy.log if "/media/thumbnail/" in path]
        assert len(thumbnails) == 1, proxy.log
        assert "/_matrix/client/v1/media/thumbnail/" in thumbnails[0] and "width=64" in thumbnails[0]
        assert first == second == third
        # And a picture at another size is another request
        get_avatar(session, me.user_id, uri, 128).expect_ok()
        assert len([path for _, path, _ in proxy.log if "/media/thumbnail/" in path]) == 2
    finally:
        proxy.stop()


def test_bad_arguments_are_refused_with_a_named_error_and_a_missing_picture_is_none(new_session, homeserver,
                                                                                    matrix_user):
    me = matrix_user("asker")
    session = new_session()
    sign_in(session, homeserver, me)

    for account, uri, size in ((me.user_id, "https://example.org/a.png", 64), (me.user_id, "mxc://a/b/c", 64),
                               (me.user_id, "mxc://ferry.test/../x", 64), (me.user_id, "", 0),
                               (me.user_id, "", 4096), ("not a user", "", 64)):
        reply = get_avatar(session, account, uri, size)
        assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument", (uri, size, reply)
        assert reply.error_message, "a sentence says what is wrong"
    # An account that is not signed in here
    reply = get_avatar(session, "@someone:ferry.test", "")
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.NotSignedIn", reply
    # No picture set, and a picture the server does not have: none, the initials stay
    assert get_avatar(session, me.user_id, "").expect_ok()[0] == ""
    assert get_avatar(session, me.user_id, "mxc://ferry.test/NoSuchMedia").expect_ok()[0] == ""
    # And the service is still up
    assert list_destinations(session).ok


def test_a_server_that_cannot_answer_is_homeserver_unreachable_and_nothing_is_kept(new_session, homeserver,
                                                                                    matrix_user):
    me = matrix_user("away")
    room = homeserver.create_room(me.token, name="Away")
    uri = set_room_picture(homeserver, me, room, "red")
    proxy = HostileProxy(homeserver).start()
    failing = proxy.answer("GET", r"/media/thumbnail/", status=502, body={"errcode": "M_UNKNOWN", "error": "away"},
                           times=1)
    try:
        session = new_session()
        sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()

        reply = get_avatar(session, me.user_id, uri)
        assert reply.error_name == "io.github.ferryshare.Ferry.Error.HomeserverUnreachable", reply
        assert failing.hits == 1
        # Asked again once the server answers, the picture comes
        assert red(picture(get_avatar(session, me.user_id, uri).expect_ok()[0])[3])
    finally:
        proxy.stop()


def test_what_is_not_a_small_picture_is_no_picture_and_nothing_is_kept(new_session, homeserver, matrix_user):
    """A server answering a thumbnail with a picture 16384 pixels wide (a few KB of PNG, a
    gigabyte once decoded in the UI), or with more than 2 MB: neither reaches the cache."""
    me = matrix_user("bombed")
    room = homeserver.create_room(me.token, name="Bombs")
    uri = set_room_picture(homeserver, me, room, "red")
    wide = png_of_size(16384, 4)
    proxy = HostileProxy(homeserver).start()
    proxy.answer("GET", r"/media/thumbnail/.*width=64", status=200, body=wide, headers={"Content-Type": "image/png"})
    proxy.answer("GET", r"/media/thumbnail/.*width=96", status=200, body=b"\x89PNG" + bytes(3 << 20),
                 headers={"Content-Type": "image/png"})
    try:
        session = new_session()
        sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()

        assert get_avatar(session, me.user_id, uri, 64).expect_ok()[0] == ""
        assert get_avatar(session, me.user_id, uri, 96).expect_ok()[0] == ""
        cache = Path(session.env["XDG_CACHE_HOME"]) / "ferry" / "avatars"
        assert not cache.exists() or not list(cache.iterdir())
        # And the service is still up and answers the next picture
        assert red(picture(get_avatar(session, me.user_id, uri, 128).expect_ok()[0])[3])
    finally:
        proxy.stop()


def test_a_server_older_than_authenticated_media_is_asked_at_its_own_endpoint(new_session, homeserver, matrix_user):
    """Matrix 1.11 moved thumbnails to /_matrix/client/v1/media; a server from before answers
    M_UNRECOGNIZED there, and has them at /_matrix/media/v3."""
    me = matrix_user("older")
    room = homeserver.create_room(me.token, name="Older")
    uri = set_room_picture(homeserver, me, room, "red")
    proxy = HostileProxy(homeserver).start()
    proxy.answer("GET", r"/_matrix/client/v1/media/thumbnail/", status=404,
                 body={"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"})
    older = proxy.answer("GET", r"/_matrix/media/v3/thumbnail/", status=200, body=square("blue", 96),
                         headers={"Content-Type": "image/png"})
    try:
        session = new_session()
        sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()

        path = get_avatar(session, me.user_id, uri).expect_ok()[0]

        assert older.hits == 1 and blue(picture(path)[3])
    finally:
        proxy.stop()
