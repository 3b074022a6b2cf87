"""Where a share can go: ListDestinations and `ferry destinations` (joined rooms and direct chats
with their facts, recents first, filtered by a query, people from the user directory), and
CompleteShare for a share that waits for a destination.

The rooms are made through the harness's own client, so what Ferry lists is compared with what
the server really holds."""

from __future__ import annotations

import json
import re
import uuid

from ferryenv import EX_OK, file_uri, wait_for
from matrixflow import (EX_NOPERM, bodies, complete_share, error_sentence, list_destinations, msgtypes, png_of_size,
                        search_user_directory, sign_in, wait_for_state)

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
CLI_KEYS = {"id", "kind", "name", "alias", "user_id", "members", "encrypted", "last_activity", "recent", "account", "avatar"}


def tag() -> str:
    return uuid.uuid4().hex[:8]


def by_id(entries) -> dict[str, dict]:
    return {e["id"]: e for e in entries}


def destinations(session, query: str = "", limit: int = 0) -> list[dict]:
    return list_destinations(session, query, limit).expect_ok()


def test_joined_rooms_and_direct_chats_are_listed_with_their_facts(new_session, homeserver, matrix_user):
    # Given a person with a room (alias, two members), an encrypted room and a DM with a friend,
    # and an invitation they have not accepted
    me, friend, other = matrix_user("lister"), matrix_user("friend"), matrix_user("other")
    t = tag()
    photos = homeserver.create_room(me.token, name=f"Photos {t}", alias_localpart=f"photos-{t}",
                                    invite=[friend.user_id])
    homeserver.join(friend.token, photos)
    secret = homeserver.create_room(me.token, name=f"Secret {t}", encrypted=True)
    dm = homeserver.create_room(me.token, is_direct=True, invite=[friend.user_id])
    homeserver.join(friend.token, dm)
    homeserver.set_direct(me.token, {friend.user_id: [dm]})
    homeserver.create_room(other.token, name=f"Not joined {t}", invite=[me.user_id])
    session = new_session()
    sign_in(session, homeserver, me)

    # When a client lists the destinations
    found = by_id(destinations(session))

    # Then exactly the joined rooms and the DM are there, each described as the server knows it
    assert set(found) == {photos, secret, dm}, found
    room = found[photos]
    assert (room["kind"], room["name"], room["alias"]) == ("room", f"Photos {t}", f"#photos-{t}:ferry.test")
    assert room["members"] == 2 and room["encrypted"] is False and room["recent"] is False
    assert room["last-activity"] > 0
    assert found[secret]["encrypted"] is True and found[secret]["members"] == 1
    direct = found[dm]
    assert direct["kind"] == "direct" and direct["user-id"] == friend.user_id and direct["members"] == 2
    assert direct["name"], "a direct chat needs a name to show"
    # And each is the signed-in account's: a share to it goes out as that account
    assert {entry["account"] for entry in found.values()} == {me.user_id}


def test_recent_destinations_come_first_then_the_rooms_by_last_activity(new_session, homeserver, matrix_user):
    # Given three rooms made in the order A, B, C, and a later message in B
    me = matrix_user("recents")
    t = tag()
    a = homeserver.create_room(me.token, name=f"A {t}")
    b = homeserver.create_room(me.token, name=f"B {t}")
    c = homeserver.create_room(me.token, name=f"C {t}")
    homeserver.send_text(me.token, b, "B is busy")
    session = new_session()
    sign_in(session, homeserver, me)

    # Then, before any share, they are ordered by last activity, newest first
    listed = destinations(session)
    assert [e["id"] for e in listed] == [b, c, a]
    activity = [e["last-activity"] for e in listed]
    assert activity == sorted(activity, reverse=True)

    # When Ferry shares to A, and afterwards someone writes in C (so C is newer than A)
    share_id = session.share_ok(text="To A", destinations=[a])
    wait_for_state(session, share_id, "sent")
    homeserver.send_text(me.token, c, "C speaks after the share")

    # Then A, where Ferry shared, comes first and is marked recent; the others follow by activity
    listed = destinations(session)
    assert [e["id"] for e in listed] == [a, c, b]
    assert [e["recent"] for e in listed] == [True, False, False]


def test_the_query_filters_on_name_alias_and_user_id(new_session, homeserver, matrix_user):
    # Given rooms with distinct names and aliases, and a DM with a friend
    me, friend = matrix_user("filter"), matrix_user(f"pal{tag()}")
    t = tag()
    garden = homeserver.create_room(me.token, name=f"Garden club {t}")
    games = homeserver.create_room(me.token, name=f"Board games {t}", alias_localpart=f"chess-{t}")
    dm = homeserver.create_room(me.token, is_direct=True, invite=[friend.user_id])
    homeserver.join(friend.token, dm)
    homeserver.set_direct(me.token, {friend.user_id: [dm]})
    session = new_session()
    sign_in(session, homeserver, me)

    # When the list is filtered by part of a name, of an alias, and of a user id
    by_name = destinations(session, f"garden club {t}")
    by_alias = destinations(session, f"chess-{t}")
    by_user = destinations(session, friend.user_id[1:].split(":")[0])

    # Then each finds its own, and only that among the joined rooms
    assert [e["id"] for e in by_name if e["kind"] != "person"] == [garden]
    assert [e["id"] for e in by_alias if e["kind"] != "person"] == [games]
    assert [e["id"] for e in by_user if e["kind"] != "person"] == [dm]
    # And the friend is offered as the existing DM, not as a person to start a new one with
    assert not [e for e in by_user if e["kind"] == "person" and e.get("user-id") == friend.user_id]


def test_a_person_from_the_user_directory_is_offered_and_sharing_to_them_makes_a_dm(
        new_session, homeserver, matrix_user):
    # Given someone the person has no room with, whom the server's user directory knows
    me, stranger = matrix_user("finder"), matrix_user(f"carol{tag()}")
    wait_for(lambda: any(r["user_id"] == stranger.user_id
                         for r in search_user_directory(homeserver, me.token, stranger.user_id[1:].split(":")[0])),
             timeout=20, what="Synapse's user directory to index the new user")
    session = new_session()
    sign_in(session, homeserver, me)

    # When the destinations are searched for that user id
    found = [e for e in destinations(session, stranger.user_id) if e.get("user-id") == stranger.user_id]

    # Then the person is offered, to be passed on by user id
    assert [(e["kind"], e["id"]) for e in found] == [("person", stranger.user_id)], found

    # When a text is shared to that entry's id
    share_id = session.share_ok(text="Hi Carol", destinations=[found[0]["id"]])
    wait_for_state(session, share_id, "sent")

    # Then a new DM with them holds it, and the next search offers that DM, as recent
    [dm] = homeserver.direct(me.token)[stranger.user_id]
    # (encrypted, as a new direct chat is: one m.room.encrypted, no plain message)
    assert len(homeserver.events(me.token, dm, "m.room.encrypted")) == 1 and homeserver.messages(me.token, dm) == []
    [again] = [e for e in destinations(session, stranger.user_id) if e.get("user-id") == stranger.user_id]
    assert (again["kind"], again["id"], again["recent"]) == ("direct", dm, True)


def test_limit_caps_the_list(new_session, homeserver, matrix_user):
    # Given three rooms
    me = matrix_user("limit")
    for name in ("One", "Two", "Three"):
        homeserver.create_room(me.token, name=name)
    session = new_session()
    sign_in(session, homeserver, me)

    # When two at most are asked for; then two come back, and all three without a limit
    assert len(destinations(session, "", 2)) == 2
    assert len(destinations(session, "", 0)) == 3


def test_destinations_need_someone_signed_in(fresh_bus):
    # When nobody is signed in, a client and the command line ask for destinations
    reply = list_destinations(fresh_bus)
    done = fresh_bus.ferry("destinations")

    # Then the call fails with NotSignedIn, and the command exits 77 with a sentence
    reply.expect_error("NotSignedIn")
    assert done.returncode == EX_NOPERM, (done.returncode, done.stderr)
    error_sentence(done)


def test_ferry_destinations_json_prints_the_documented_keys(new_session, homeserver, matrix_user):
    # Given a room with an alias and an encrypted room
    me = matrix_user("clidest")
    t = tag()
    room = homeserver.create_room(me.token, name=f"Kitchen {t}", alias_localpart=f"kitchen-{t}")
    secret = homeserver.create_room(me.token, name=f"Vault {t}", encrypted=True)
    session = new_session()
    sign_in(session, homeserver, me)

    # When `ferry destinations --json` runs
    done = session.ferry("destinations", "--json")

    # Then it prints an array of objects with the contract's keys and values
    assert done.returncode == EX_OK, done.stderr
    listed = {e["id"]: e for e in json.loads(done.stdout)}
    assert set(listed) == {room, secret}
    for entry in listed.values():
        assert set(entry) >= CLI_KEYS, entry
        assert ISO_UTC.match(entry["last_activity"]), entry["last_activity"]
    assert listed[room]["alias"] == f"#kitchen-{t}:ferry.test" and listed[room]["encrypted"] is False
    assert listed[secret]["encrypted"] is True and listed[secret]["alias"] is None
    assert listed[room]["user_id"] is None and listed[room]["kind"] == "room"
    assert listed[room]["account"] == me.user_id

    # And with a query, the plain listing names only the matching room
    plain = session.ferry("destinations", f"kitchen {t}")
    assert plain.returncode == EX_OK, plain.stderr
    assert f"Kitchen {t}" in plain.stdout and f"Vault {t}" not in plain.stdout


def test_complete_share_sends_a_share_that_waited_for_a_destination(new_session, homeserver, matrix_user):
    # Given Ferry signed in, and a picture opened with Ferry from a file manager (no destination)
    me = matrix_user("complete")
    room = homeserver.create_room(me.token, name="Completed")
    session = new_session()
    sign_in(session, homeserver, me)
    photo = session.files / "opened.png"
    photo.write_bytes(png_of_size(6, 4, seed=61))
    done = session.run("gio", "open", photo)
    assert done.returncode == 0, done.stderr
    [share_id] = wait_for(lambda: session.share_ids(), timeout=20, what="the opened file to become a share")
    assert wait_for_state(session, share_id, "awaiting-destination")["source"] == "open"

    # When the share dialog (here, a client) completes it with a room and a message
    complete_share(session, share_id, [room], "Here it is").expect_ok()

    # Then the room holds the picture, the message its caption
    wait_for_state(session, share_id, "sent")
    events = homeserver.wait_for_messages(me.token, room, count=1)
    assert msgtypes(events) == ["m.image"]
    assert bodies(events) == ["Here it is"] and events[0]["content"]["filename"] == "opened.png"
    # And it cannot be completed twice; an unknown share is no such share
    complete_share(session, share_id, [room]).expect_error("NotCompletable")
    complete_share(session, "no-such-share", [room]).expect_error("NoSuchShare")


def test_complete_share_with_an_empty_message_keeps_the_shares_message(new_session, homeserver, matrix_user):
    # Given a text shared with a message but no destination, while signed in
    me = matrix_user("keepmsg")
    room = homeserver.create_room(me.token, name="Kept")
    session = new_session()
    sign_in(session, homeserver, me)
    photo = session.files / "kept.png"
    photo.write_bytes(png_of_size(2, 2, seed=62))
    share_id = session.share_ok(uris=[file_uri(photo)], message="Kept message")
    wait_for_state(session, share_id, "awaiting-destination")

    # When it is completed with a bad destination, and then with a room and an empty message
    complete_share(session, share_id, ["not a room"]).expect_error("InvalidDestination")
    complete_share(session, share_id, [room], "").expect_ok()

    # Then the share's own message is the picture's caption
    wait_for_state(session, share_id, "sent")
    events = homeserver.wait_for_messages(me.token, room, count=1)
    assert bodies(events) == ["Kept message"] and events[0]["content"]["filename"] == "kept.png"
