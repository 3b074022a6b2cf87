"""The share dialog delivering for real: a person shares from the desktop (`gio open`, "Open With"
with several files, a ferry: URI), the service starts ferry-ui by itself, the person picks rooms
and writes a message through AT-SPI and the keyboard under Xvfb, and what arrived is read back
from a real Synapse's room timeline with the harness's own client — never Ferry's word.

All UI tests share one desktop session (AT-SPI connects once per process); each test signs that
session in as a Matrix user of its own, with rooms of its own.
"""

from __future__ import annotations

import subprocess
import threading
import time

import pyatspi

import pytest

from ferryenv import pdf_bytes, wait_for
from hostileproxy import HostileProxy
from matrixflow import (bodies, get_property, msgtypes, png_of_size, set_power_level, sign_in, sign_out,
                        wait_for_state)
from test_ui_dialog import dialog_for, keep_screenshot
from uidesktop import (N, T, click, find, focused, names_of, has_state, no_windows, press, signed_out, type_text,
                       ui_app)

APP_ID = "io.github.ferryshare.Ferry"


# --- given ------------------------------------------------------------------------------------------

def signed_in_as(session, server, user) -> None:
    signed_out(session)
    sign_in(session, server, user)


@pytest.fixture
def person(ui, homeserver):
    """A Matrix user of the test's own, and the desktop's Ferry signed in as them."""
    user = homeserver.new_user("ui")
    signed_in_as(ui.session, homeserver, user)
    return user


def picture(session, name: str, seed: int = 0, size: tuple[int, int] = (480, 320)):
    """A picture; each test names its files differently, so a dialog's header names its share alone."""
    path = session.files / name
    path.write_bytes(png_of_size(*size, seed=seed))
    return path


def friend(server, display_name: str):
    """Another person on the server, with a display name."""
    user = server.new_user(display_name.split()[0].lower())
    server.call("PUT", f"/_matrix/client/v3/profile/{user.user_id}/displayname", user.token,
                json_body={"displayname": display_name})
    return user


def gradient(top: str, bottom: str, size: int = 128) -> bytes:
    """A picture ImageMagick draws, for a person's or a room's avatar."""
    return subprocess.run(["convert", "-size", f"{size}x{size}", f"gradient:{top}-{bottom}", "png:-"], check=True,
                          capture_output=True).stdout


def colour_near_start(ui, tmp_path, node) -> tuple[int, int, int]:
    """The colour on screen where a row shows its avatar: 28 pixels in from its start, half-way
    down (the avatar is 32 pixels, after the row's 12-pixel margin)."""
    extents = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    shot = tmp_path / "row.png"
    subprocess.run(["import", "-display", ui.display, "-window", "root", str(shot)], check=True, timeout=30)
    x, y = extents.x + 28, extents.y + extents.height // 2
    raw = subprocess.run(["convert", str(shot), "-crop", f"1x1+{x}+{y}", "-depth", "8", "rgb:-"], check=True,
                         capture_output=True).stdout
    return raw[0], raw[1], raw[2]


def room_with(server, owner, name: str, members=(), encrypted: bool = False) -> str:
    room = server.create_room(owner.token, name=name, encrypted=encrypted)
    for member in members:
        server.invite(owner.token, room, member.user_id)
        server.join(member.token, room)
    return room


# --- when -------------------------------------------------------------------------------------------

def open_with_ferry(session, *paths) -> str:
    """Opens files the way a file manager's "Open With → Ferry" does (D-Bus activation, Open with
    every URI; `gio open` for one, which opens each file on its own); returns the new share's id."""
    before = set(session.share_ids())
    command = ("gio", "open", *paths) if len(paths) == 1 else ("gapplication", "launch", APP_ID, *paths)
    done = session.run(*command)
    assert done.returncode == 0, done.stderr
    [share_id] = wait_for(lambda: set(session.share_ids()) - before, timeout=10, what="the new share")
    return share_id


def open_dialog(ui, title: str):
    """The dialog the service started for the share titled `title`, with nobody launching ferry-ui."""
    window = dialog_for(ui_app(), title)
    assert not ui.ui_processes, "the test launched ferry-ui itself"
    assert ui.dialog_pids(), "no ferry-ui in the session"
    return window


def type_sign_in(server, user) -> None:
    """On the sign-in page, focus in Homeserver: the server, the user, the password, and Enter."""
    type_text(server.base_url)
    press("Tab")
    type_text(user.user_id)
    press("Tab")
    type_text(user.password)
    press("Return")


def search_and_pick(window, typed: str, room_name: str) -> None:
    """Types part of a room's name into the focused search field and picks the first match with Enter."""
    def in_search() -> bool:
        return (focused(window) or window).name == T("Search rooms and people")

    try:
        wait_for(in_search, timeout=10, what="focus in the search field")
    except AssertionError as error:
        # Where focus went instead: the clue a failure here needs.
        node = focused(window)
        where = f"{node.getRoleName()} {node.name!r}" if node else "nothing"
        raise AssertionError(f"{error}; focused instead: {where}") from None
    find(window, T("Choose {name}", name=room_name), "check box", timeout=15)  # the list is there
    type_text(typed)
    wait_for(lambda: names_of(window, "check box") == [T("Choose {name}", name=room_name)], timeout=10,
             what=f"only {room_name} left after typing {typed!r}")
    press("Return")
    wait_for(lambda: has_state(find(window, T("Choose {name}", name=room_name), "check box"), "checked"), timeout=5,
             what=f"{room_name} ticked")


def next_page(window) -> None:
    button = find(window, "Next", "push button")
    wait_for(lambda: has_state(button, "sensitive"), timeout=5, what="Next enabled")
    click(button)
    wait_for(lambda: (focused(window) or window).name in (T("Message"), T("Caption")), timeout=10,
             what="focus in the message (the caption, for one file)")


def share(window) -> None:
    click(find(window, T("Share", "button"), "push button"))


def room_messages(server, user, room: str) -> list[dict]:
    return server.messages(user.token, room)


# --- the tests --------------------------------------------------------------------------------------

def test_a_file_opened_with_gio_open_goes_to_the_room_picked_by_typing_with_the_message_as_its_caption(
        ui, homeserver, person, tmp_path):
    # Given two rooms and a picture
    holiday = homeserver.create_room(person.token, name="Holiday Photos")
    team = homeserver.create_room(person.token, name="Design Team")
    photo = picture(ui.session, "beach.png", seed=3)

    # When the picture is opened with Ferry, the dialog the service starts gets "holi" typed,
    # Enter, Next, a message and Share
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)
    search_and_pick(window, "holi", "Holiday Photos")
    next_page(window)
    find(window, T("Recipients: {names}", names="Holiday Photos"), "label")
    find(window, T("Preview of {name}", name=photo.name))
    assert focused(window).name == T("Caption"), "one picture: its message is its caption"
    type_text("Look at this")
    keep_screenshot(ui, tmp_path, "share-dialog-page2.png")
    share(window)

    # Then the dialog closes once sent, and the room holds the picture, the message its caption
    wait_for(no_windows, timeout=60, what="the dialog to close once sent")
    events = homeserver.wait_for_messages(person.token, holiday, count=1)
    assert [(e["content"]["msgtype"], e["content"]["body"], e["content"]["filename"]) for e in events] == [
        ("m.image", "Look at this", photo.name)]
    assert homeserver.download(person.token, events[0]["content"]["url"]) == photo.read_bytes()
    # And the room not picked has nothing
    assert room_messages(homeserver, person, team) == []


def test_page_one_lists_recent_rooms_first_and_an_encrypted_room_as_a_choice_with_a_lock(
        ui, homeserver, person, tmp_path):
    # Given rooms with people in them, a direct chat, one room end-to-end encrypted, and one a
    # share went to before (a recent)
    # (Bob with a picture of his own, magenta; Holiday Photos with the room's, blue)
    ana, bob, chen = friend(homeserver, "Ana Lima"), friend(homeserver, "Bob Martin"), friend(homeserver, "Chen Wei")
    homeserver.call("PUT", f"/_matrix/client/v3/profile/{bob.user_id}/avatar_url", bob.token,
                    json_body={"avatar_url": homeserver.upload(bob.token, gradient("#ff40ff", "#c000c0"), "image/png")})
    team = room_with(homeserver, person, "Design Team", [ana, bob, chen])
    room_with(homeserver, person, "Secret Plans", [ana], encrypted=True)
    holiday = room_with(homeserver, person, "Holiday Photos", [bob, chen])
    homeserver.call("PUT", f"/_matrix/client/v3/rooms/{holiday}/state/m.room.avatar/", person.token,
                    json_body={"url": homeserver.upload(person.token, gradient("#4060ff", "#0020c0"), "image/png")})
    room_with(homeserver, person, "Book Club", [ana, chen])
    direct = homeserver.create_room(person.token, is_direct=True, invite=[bob.user_id])
    homeserver.join(bob.token, direct)
    homeserver.set_direct(person.token, {bob.user_id: [direct]})
    earlier = ui.session.share_ok(text="Agenda for Monday", destinations=[team])
    wait_for_state(ui.session, earlier, "sent")

    # When a picture is opened with Ferry
    photo = picture(ui.session, "sunset.png", seed=4)
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)

    # Then the recent room comes first, in its own list
    recent = wait_for(lambda: names_of(find(window, "Recent destinations", "list"), "list item"),
                      timeout=15, what="recent destinations")
    assert recent == ["Design Team"]
    find(window, "Bob Martin", "list item")
    # And the encrypted room is a choice like any other, saying it is encrypted, with a lock
    secret = find(window, "Secret Plans", "list item")
    assert has_state(secret, "sensitive")
    assert T("{detail} · end-to-end encrypted", detail="").strip(" ·") in secret.description
    assert T("Choose {name}", name="Secret Plans") in names_of(window, "check box")
    find(secret, "End-to-end encrypted", "image")
    # And the direct chat shows Bob's picture and Holiday Photos the room's, where the other rows
    # keep their initials
    def magenta(colour) -> bool:
        return colour[0] > 150 and colour[2] > 150 and colour[1] < 100

    def blue(colour) -> bool:
        return colour[2] > 150 and colour[0] < 100 and colour[1] < 130

    bob_row, holiday_row = find(window, "Bob Martin", "list item"), find(window, "Holiday Photos", "list item")
    wait_for(lambda: magenta(colour_near_start(ui, tmp_path, bob_row)), timeout=15, what="Bob's picture")
    wait_for(lambda: blue(colour_near_start(ui, tmp_path, holiday_row)), timeout=15, what="the room's picture")
    book_club = colour_near_start(ui, tmp_path, find(window, "Book Club", "list item"))
    assert not magenta(book_club) and not blue(book_club), book_club
    # And Next waits for a choice
    assert not has_state(find(window, "Next", "push button"), "sensitive")
    wait_for(lambda: (focused(window) or window).name == T("Search rooms and people"), timeout=5, what="focus")
    keep_screenshot(ui, tmp_path, "share-dialog-page1.png")


def spinners(window) -> list[str]:
    """The spinners showing (GTK 4.8 gives a spinner the role filler and its type's name)."""
    return [name for name in names_of(window, "filler") if name == "GtkSpinner"]


def test_a_room_list_slow_to_come_shows_a_spinner_until_it_comes(ui, homeserver):
    # Given a person signed in through a homeserver that holds back its room list
    user = homeserver.new_user("slowlist")
    room_with(homeserver, user, "Slow Harbour")
    proxy = HostileProxy(homeserver).start()
    rooms_answered = threading.Event()
    try:
        signed_in_as(ui.session, proxy, user)
        proxy.answer("GET", r"/joined_rooms", passthrough=True, hold=rooms_answered, times=10)

        # When a picture is opened with Ferry
        photo = picture(ui.session, "harbour-at-dusk.png", seed=9)
        open_with_ferry(ui.session, photo)
        window = open_dialog(ui, photo.name)

        # Then, the list not being there after the spinner's delay, a spinner says it is coming
        # (DelayedSpinner makes it only then: a dialog that never waits long has none)
        wait_for(lambda: spinners(window), timeout=15, what="a spinner while the rooms are held back")
        assert T("Choose {name}", name="Slow Harbour") not in names_of(window, "check box")

        # And once the server answers, the rooms are there and the spinner is gone
        rooms_answered.set()
        find(window, T("Choose {name}", name="Slow Harbour"), "check box", timeout=15)
        wait_for(lambda: not spinners(window), timeout=5, what="the spinner gone")
    finally:
        rooms_answered.set()
        signed_out(ui.session)
        proxy.stop()


def test_escape_on_page_two_cancels_nothing_is_delivered_and_the_spool_is_empty(ui, homeserver, person):
    # Given a room and the dialog of a picture, on its second page
    room = homeserver.create_room(person.token, name="Holiday Photos")
    photo = picture(ui.session, "never-mind.png", seed=5)
    before = ui.session.spool_entries()
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)
    assert ui.session.spool_dir(share_id).exists()
    search_and_pick(window, "holi", "Holiday Photos")
    next_page(window)
    type_text("Never mind")

    # When the person presses Escape
    press("Escape")

    # Then the share is cancelled, its staged copy gone, ferry-ui gone, and the room got nothing
    wait_for_state(ui.session, share_id, "cancelled", timeout=15)
    # Removed just after the cancel is committed (ShareService.cancel): waited for, not raced.
    wait_for(lambda: not ui.session.spool_dir(share_id).exists(), timeout=10, what="the share's copies removed")
    assert ui.session.spool_entries() <= before
    wait_for(lambda: not ui.dialog_pids(), timeout=10, what="ferry-ui to exit with its last window")
    time.sleep(1)
    assert room_messages(homeserver, person, room) == []


def test_signed_out_the_dialog_signs_in_and_the_same_share_continues_to_page_one_and_goes_once(
        ui, homeserver, tmp_path):
    # Given nobody signed in, and a Matrix account with a room
    user = homeserver.new_user("signin-ui")
    signed_out(ui.session)
    room = homeserver.create_room(user.token, name="Holiday Photos")
    photo = picture(ui.session, "first-light.png", seed=6)

    # When a picture is opened with Ferry, the dialog opens on its sign-in page
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)
    assert ui.session.get_share(share_id)["state"] == "awaiting-sign-in"
    wait_for(lambda: (focused(window) or window).name == T("Homeserver"), timeout=10, what="focus in Homeserver")
    keep_screenshot(ui, tmp_path, "share-dialog-sign-in.png")

    # And the person types the server, the user and the password, and presses Enter
    type_sign_in(homeserver, user)

    # Then Ferry is signed in as that user, and the same window moves on to "Share to"
    wait_for(lambda: ui.session.signed_in(), timeout=30, what="Ferry signed in")
    assert get_property(ui.session, "AccountId") == user.user_id
    search_and_pick(window, "holi", "Holiday Photos")
    next_page(window)
    share(window)

    # And the share that waited is delivered, once
    wait_for_state(ui.session, share_id, "sent")
    wait_for(no_windows, timeout=30, what="the dialog to close once sent")
    time.sleep(1)
    events = room_messages(homeserver, user, room)
    assert [(e["content"]["msgtype"], e["content"]["body"]) for e in events] == [("m.image", photo.name)]


def test_several_files_go_to_several_rooms_each_file_its_own_event_in_order(ui, homeserver, person):
    # Given two rooms, and two pictures and a PDF chosen together in a file manager
    team = homeserver.create_room(person.token, name="Design Team")
    club = homeserver.create_room(person.token, name="Book Club")
    first, second = picture(ui.session, "kitchen.png", seed=7), picture(ui.session, "garden.png", seed=8)
    document = ui.session.files / "notes.pdf"
    document.write_bytes(pdf_bytes())

    # When they are opened with Ferry together (Open with every URI, as "Open With" does)
    open_with_ferry(ui.session, first, second, document)
    window = open_dialog(ui, N("{count} file", "{count} files", 3))
    find(window, T("Choose {name}", name="Design Team"), "check box", timeout=15)
    click(find(window, T("Choose {name}", name="Design Team"), "check box"))
    click(find(window, T("Choose {name}", name="Book Club"), "check box"))
    next_page(window)
    find(window, T("Recipients: {names}", names="Design Team, Book Club"), "label")
    find(window, N("Preview of {count} file", "Preview of {count} files", 3))
    share(window)

    # Then each room holds the three files, each its own event, in the order they were given
    wait_for(no_windows, timeout=60, what="the dialog to close once sent")
    for room in (team, club):
        events = homeserver.wait_for_messages(person.token, room, count=3)
        assert bodies(events) == [first.name, second.name, document.name]
        assert msgtypes(events) == ["m.image", "m.image", "m.file"]


def test_a_shared_text_fills_the_message_and_the_edited_text_is_what_is_sent(ui, homeserver, person, tmp_path):
    # Given a room
    room = homeserver.create_room(person.token, name="Design Team")
    text = "The meeting moved to 3pm"

    # When a text is shared with no room (a ferry: URI, as from a browser's share button)
    done = ui.session.run("gio", "open", "ferry:share?text=" + text.replace(" ", "%20"))
    assert done.returncode == 0, done.stderr
    window = open_dialog(ui, text)
    search_and_pick(window, "design", "Design Team")
    next_page(window)
    keep_screenshot(ui, tmp_path, "share-dialog-page2-text.png")
    # And the person adds to it (the cursor waits after the text) and shares
    type_text(", room 4")
    share(window)

    # Then the room holds one m.text: the edited text, not the original as well
    wait_for(no_windows, timeout=60, what="the dialog to close once sent")
    events = homeserver.wait_for_messages(person.token, room, count=1)
    time.sleep(1)
    events = room_messages(homeserver, person, room)
    assert [(e["content"]["msgtype"], e["content"]["body"]) for e in events] == [("m.text", text + ", room 4")]


def test_a_link_naming_a_room_only_preselects_it_and_nothing_goes_until_share(ui, homeserver, person):
    # Given two rooms, and a ferry: link (as any web page may open) naming one of them
    room = homeserver.create_room(person.token, name="Harbour News")
    other = homeserver.create_room(person.token, name="Quiet Room")
    text = "Ferries run late today"
    done = ui.session.run("gio", "open", "ferry:share?text=" + text.replace(" ", "%20") + "&to=" + room.replace("!", "%21"))
    assert done.returncode == 0, done.stderr

    # Then the dialog opens with that room ticked, the other not, and nothing has been sent
    window = open_dialog(ui, text)
    wait_for(lambda: has_state(find(window, T("Choose {name}", name="Harbour News"), "check box", timeout=15), "checked"), timeout=10,
             what="the suggested room ticked")
    assert not has_state(find(window, T("Choose {name}", name="Quiet Room"), "check box"), "checked")
    assert room_messages(homeserver, person, room) == []

    # When the person goes on and shares, the text arrives there once
    next_page(window)
    share(window)
    wait_for(no_windows, timeout=60, what="the dialog to close once sent")
    homeserver.wait_for_messages(person.token, room, count=1)
    assert [e["content"]["body"] for e in room_messages(homeserver, person, room)] == [text]
    assert room_messages(homeserver, person, other) == []


def test_a_shared_text_left_as_it_is_is_sent_as_it_is(ui, homeserver, person):
    # Given a room, and a text shared with no room
    room = homeserver.create_room(person.token, name="Book Club")
    text = "Chapter 12 for Thursday"
    done = ui.session.run("gio", "open", "ferry:share?text=" + text.replace(" ", "%20"))
    assert done.returncode == 0, done.stderr

    # When the person picks the room and shares without touching the message
    window = open_dialog(ui, text)
    search_and_pick(window, "book", "Book Club")
    next_page(window)
    share(window)

    # Then the room holds the text, once
    wait_for(no_windows, timeout=60, what="the dialog to close once sent")
    homeserver.wait_for_messages(person.token, room, count=1)
    time.sleep(1)
    assert [(e["content"]["msgtype"], e["content"]["body"]) for e in room_messages(homeserver, person, room)] == [
        ("m.text", text)]


def test_a_failure_shows_the_reason_and_retry_sends_once_allowed(ui, homeserver, person, tmp_path):
    # Given a room whose owner lets the person in but not post (events_default above the person's level)
    owner = homeserver.new_user("owner")
    room = homeserver.create_room(owner.token, name="Announcements")
    homeserver.invite(owner.token, room, person.user_id)
    homeserver.join(person.token, room)
    set_power_level(homeserver, owner.token, room, events_default=50)
    photo = picture(ui.session, "poster.png", seed=9)

    # When the person shares a picture there
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)
    search_and_pick(window, "announce", "Announcements")
    next_page(window)
    share(window)

    # Then the dialog stays, with the server's refusal in words and Retry
    error = find(window, lambda n: n.startswith(T("Error: {message}", message="")), "label", timeout=60)
    assert "post" in error.name.lower() or "permission" in error.name.lower() or "allowed" in error.name.lower(), \
        error.name
    retry = find(window, T("Retry", "button"), "push button")
    keep_screenshot(ui, tmp_path, "share-dialog-failed.png")

    # And once the owner lets the person post, Retry delivers it and the dialog closes
    set_power_level(homeserver, owner.token, room, users={person.user_id: 50})
    click(retry)
    wait_for(no_windows, timeout=60, what="the dialog to close once sent")
    events = homeserver.wait_for_messages(owner.token, room, count=1)
    assert [(e["content"]["msgtype"], e["content"]["body"], e["sender"]) for e in events] == [
        ("m.image", photo.name, person.user_id)]


def test_offline_a_banner_says_so_share_closes_at_once_and_it_goes_when_the_server_is_back(
        ui, fresh_homeserver, tmp_path):
    # Given Ferry signed in to a homeserver that has just stopped, and has noticed (a send failed)
    user = fresh_homeserver.new_user("offline")
    room = fresh_homeserver.create_room(user.token, name="Holiday Photos")
    signed_in_as(ui.session, fresh_homeserver, user)
    wait_for(lambda: ui.session.busctl_call("ListDestinations", "su", "", 0).ok, timeout=30,
             what="the rooms listed once")
    fresh_homeserver.stop()
    earlier = ui.session.share_ok(text="Sent while offline", destinations=[room])
    # (A send to a server that is away fails only when its request's deadline passes: 30 s.)
    wait_for(lambda: get_property(ui.session, "Online") is False, timeout=90, interval=0.5,
             what="Online to become false")

    # When a picture is opened with Ferry
    photo = picture(ui.session, "mountain.png", seed=10)
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)

    # Then the dialog says the share will go when the connection returns, and still lists the rooms
    find(window, lambda n: n.startswith(T("You are offline. The share will be sent when the connection returns.")))
    search_and_pick(window, "holi", "Holiday Photos")
    next_page(window)
    keep_screenshot(ui, tmp_path, "share-dialog-offline.png")
    # And Share closes the dialog at once, the share kept in the outbox
    share(window)
    wait_for(no_windows, timeout=5, what="the dialog to close at once")
    assert ui.session.get_share(share_id)["state"] in ("queued", "sending")

    # And once the server is back, both arrive
    fresh_homeserver.start()
    wait_for_state(ui.session, share_id, "sent")
    wait_for_state(ui.session, earlier, "sent")
    events = fresh_homeserver.wait_for_messages(user.token, room, count=2)
    assert sorted(bodies(events)) == sorted(["Sent while offline", photo.name])
    sign_out(ui.session)
