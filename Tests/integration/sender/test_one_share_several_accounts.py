"""One share to the rooms of several accounts: each delivery goes out as the account whose room it
is, its file uploaded to that account's server; a room two accounts have joined is a choice per
account; an account the server signs out mid-share holds back its own delivery only. Everything
is read back from the rooms as each Synapse serves them."""

from __future__ import annotations

import json
import signal

from gi.repository import GLib

from ferryenv import EX_OK, EX_USAGE, write_png
from matrixflow import get_status, list_destinations, sign_in, two_accounts, wait_for_state


def complete_share_as(session, share_id, chosen, message=""):
    """CompleteShareAs: `chosen` is a list of (destination, account or None)."""
    entries = []
    for destination, account in chosen:
        entry = {"destination": GLib.Variant("s", destination)}
        if account:
            entry["account"] = GLib.Variant("s", account)
        entries.append(entry)
    return session.gdbus_call("CompleteShareAs", GLib.Variant("s", share_id), GLib.Variant("aa{sv}", entries),
                              GLib.Variant("s", message))


def senders_and_bodies(events):
    return [(e["sender"], e["content"].get("body")) for e in events]


def test_a_photo_to_a_room_of_each_account_goes_to_each_as_its_own_and_onto_its_own_server(
        new_session, homeserver, second_homeserver, tmp_path):
    # Given Ferry signed in as Ann (first server) and Bo (second server), each with a room
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)

    # When `ferry send` names both rooms and no account
    photo = write_png(tmp_path / "harbour.png")
    done = session.ferry("send", str(photo), "--message", "Look", "--to", ann_room, "--to", bo_room, timeout=120)

    # Then it is sent: each room got the photo with its caption, once, from its own account
    assert done.returncode == EX_OK, done.stderr
    share_id = done.stdout.strip()
    sent = wait_for_state(session, share_id, "sent")
    assert sent["destination-accounts"] == [ann.user_id, bo.user_id]
    assert [d["account"] for d in sent["deliveries"]] == [ann.user_id, bo.user_id]
    ann_events = homeserver.messages(ann.token, ann_room)
    bo_events = second_homeserver.messages(bo.token, bo_room)
    assert senders_and_bodies(ann_events) == [(ann.user_id, "Look")]
    assert senders_and_bodies(bo_events) == [(bo.user_id, "Look")]
    assert ann_events[-1]["content"]["filename"] == bo_events[-1]["content"]["filename"] == "harbour.png"
    # And each photo is on its own account's server (the servers do not federate here)
    assert ann_events[-1]["content"]["url"].startswith(f"mxc://{homeserver.server_name}/")
    assert bo_events[-1]["content"]["url"].startswith(f"mxc://{second_homeserver.server_name}/")

    # And `ferry show --json` says which account each destination went out as
    shown = json.loads(session.ferry("show", share_id, "--json").stdout)
    assert shown["destination_accounts"] == [ann.user_id, bo.user_id]
    assert [d["account"] for d in shown["deliveries"]] == [ann.user_id, bo.user_id]


def test_a_room_two_accounts_joined_is_chosen_per_account_and_never_guessed(new_session, homeserver):
    # Given Ann and Cy, both signed in to one server, both in the team room
    ann, cy = homeserver.new_user("ann"), homeserver.new_user("cy")
    team = homeserver.create_room(ann.token, name="Team", invite=[cy.user_id])
    homeserver.join(cy.token, team)
    session = new_session()
    sign_in(session, homeserver, ann)
    sign_in(session, homeserver, cy)

    # Then the destination list has the room once for each account
    listed = [d for d in list_destinations(session).expect_ok() if d["id"] == team]
    assert sorted(d["account"] for d in listed) == sorted([ann.user_id, cy.user_id])

    # When `ferry text` names the room and no account, it refuses, naming both, and shares nothing
    done = session.ferry("text", "who sends this?", "--to", team)
    assert done.returncode == EX_USAGE, done.stderr
    assert ann.user_id in done.stderr and cy.user_id in done.stderr and "--account" in done.stderr
    assert session.share_ids() == []

    # When it names Cy, it goes out as Cy
    done = session.ferry("text", "from Cy", "--to", team, "--account", cy.user_id)
    assert done.returncode == EX_OK, done.stderr

    # When the dialog's choice is the room as each of them (CompleteShareAs)
    both = session.share_ok(text="from both of us")
    complete_share_as(session, both, [(team, ann.user_id), (team, cy.user_id)]).expect_ok()

    # Then the room gets it once from each
    assert wait_for_state(session, both, "sent")["destination-accounts"] == [ann.user_id, cy.user_id]
    events = senders_and_bodies(homeserver.messages(ann.token, team))
    assert events.count((cy.user_id, "from Cy")) == 1
    assert sorted(e for e in events if e[1] == "from both of us") == sorted(
        [(ann.user_id, "from both of us"), (cy.user_id, "from both of us")])

    # And an account that is not signed in is refused by name, with nothing queued
    waiting = session.share_ok(text="as nobody")
    reply = complete_share_as(session, waiting, [(team, "@nobody:ferry.test")])
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument"
    assert "@nobody:ferry.test is not signed in" in reply.error_message
    assert session.get_share(waiting)["state"] == "awaiting-destination"


def test_an_account_signed_out_by_its_server_mid_share_holds_back_its_delivery_only(
        new_session, homeserver, second_homeserver):
    # Given Ann and Bo signed in
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)
    list_destinations(session).expect_ok()  # which account has which room

    # When Bo's sign-in (Ferry's device) is ended at the server, and a share goes to both rooms
    bo_device = {a["user-id"]: a["device-id"] for a in get_status(session)["accounts"]}[bo.user_id]
    second_homeserver.revoke_device(bo.user_id, bo_device)
    share_id = session.share_ok(text="for both rooms", destinations=[bo_room, ann_room])

    # Then Ann's room gets it, and the share waits for Bo
    waiting = wait_for_state(session, share_id, "awaiting-sign-in")
    assert [d["state"] for d in waiting["deliveries"]] == ["sending", "sent"]
    assert senders_and_bodies(homeserver.messages(ann.token, ann_room)) == [(ann.user_id, "for both rooms")]
    assert second_homeserver.messages(bo.token, bo_room) == []

    # When Bo signs in again
    sign_in(session, second_homeserver, bo)

    # Then Bo's room gets it, as Bo, and Ann's room nothing twice
    wait_for_state(session, share_id, "sent")
    assert senders_and_bodies(second_homeserver.messages(bo.token, bo_room)) == [(bo.user_id, "for both rooms")]
    assert senders_and_bodies(homeserver.messages(ann.token, ann_room)) == [(ann.user_id, "for both rooms")]


def test_a_program_that_never_listed_the_rooms_gets_its_share_sent_by_the_account_that_joined_them(
        new_session, homeserver, second_homeserver):
    # Given Ferry signed in as Ann (first server), then Bo (second server, so the one signed in last),
    # and Ann in a second room with an alias; nobody has listed the destinations since the service started
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)
    news = homeserver.create_room(ann.token, name="News", alias_localpart="ann-news")
    alias = f"#ann-news:{homeserver.server_name}"
    session.kill_service(signal.SIGTERM)

    # When a program shares over D-Bus to Ann's rooms, by id and by alias, naming no account
    share_id = session.share_ok(text="for Ann's rooms", destinations=[ann_room, alias])

    # Then it goes out as Ann, who has joined them, not as Bo, who signed in last
    sent = wait_for_state(session, share_id, "sent")
    assert sent.get("destination-accounts", []) in ([], [ann.user_id, ann.user_id]), sent
    assert [d["account"] for d in sent["deliveries"]] == [ann.user_id, ann.user_id]
    for room in (ann_room, news):
        assert senders_and_bodies(homeserver.messages(ann.token, room)) == [(ann.user_id, "for Ann's rooms")]

    # And a share to a room of each goes to each as its own account
    both = session.share_ok(text="for both", destinations=[bo_room, ann_room])
    sent = wait_for_state(session, both, "sent")
    assert [d["account"] for d in sent["deliveries"]] == [bo.user_id, ann.user_id]
    assert senders_and_bodies(second_homeserver.messages(bo.token, bo_room))[-1] == (bo.user_id, "for both")


def test_a_share_made_for_one_account_is_not_completed_with_another_accounts_room(
        new_session, homeserver, second_homeserver):
    # Given Ferry signed in as Ann and Bo, and a share made for Bo with no destination yet
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)
    for_bo = session.share_ok(text="only as Bo", account=bo.user_id)

    # When the dialog's choice is Ann's room as Ann, it is refused, naming both, and nothing is queued
    reply = complete_share_as(session, for_bo, [(ann_room, ann.user_id)])
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument"
    assert bo.user_id in reply.error_message and ann.user_id in reply.error_message
    assert session.get_share(for_bo)["state"] == "awaiting-destination"

    # When it is Bo's room, it goes out as Bo
    complete_share_as(session, for_bo, [(bo_room, bo.user_id)]).expect_ok()
    assert [d["account"] for d in wait_for_state(session, for_bo, "sent")["deliveries"]] == [bo.user_id]
    assert homeserver.messages(ann.token, ann_room) == []
