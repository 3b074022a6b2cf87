"""Several accounts signed in at once, on two Synapses with different server names: each lists its
rooms, each share goes out as the account it names, and signing one out holds back its shares only.
Everything is read back from the rooms as each Synapse serves them."""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import time

from gi.repository import GLib

from ferryenv import EX_OK, EX_USAGE, file_uri, wait_for, write_png
from matrixflow import (bodies, complete_share, get_status, list_destinations, notification_text, sign_in,
                        sign_in_call, sign_out, start_notification_server, two_accounts, wait_for_notification,
                        wait_for_state)
from secretstorage import bootstrap


def test_both_accounts_are_listed_and_one_share_each_goes_out_as_its_own(
        new_session, homeserver, second_homeserver, tmp_path):
    # Given Ferry signed in to two homeservers, and a notification server
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)
    record = start_notification_server(session)

    # Then the status and `ferry accounts` list both, each with its own device
    listed = {a["user-id"]: a for a in get_status(session)["accounts"]}
    assert set(listed) == {ann.user_id, bo.user_id}
    assert listed[ann.user_id]["homeserver"].rstrip("/") == homeserver.base_url
    assert listed[bo.user_id]["homeserver"].rstrip("/") == second_homeserver.base_url
    assert all(a["device-id"] for a in listed.values())
    done = session.ferry("accounts", "--json")
    assert done.returncode == EX_OK, done.stderr
    assert {a["user_id"] for a in json.loads(done.stdout)} == {ann.user_id, bo.user_id}

    # And the destinations of both, each saying whose it is
    found = {d["id"]: d for d in list_destinations(session).expect_ok()}
    assert found[ann_room]["account"] == ann.user_id and found[bo_room]["account"] == bo.user_id

    # When a photo goes to Ann's room as Ann, and a text to Bo's room as Bo (by the command line)
    photo = session.share_ok(uris=[file_uri(write_png(tmp_path / "harbour.png"))], destinations=[ann_room],
                             account=ann.user_id)
    done = session.ferry("text", "to Bo's room", "--to", bo_room, "--account", bo.user_id)
    assert done.returncode == EX_OK, done.stderr
    text = done.stdout.strip()

    # Then each is sent, from the right sender, once, and only to its own server's room
    assert wait_for_state(session, photo, "sent")["account"] == ann.user_id
    assert wait_for_state(session, text, "sent")["account"] == bo.user_id
    ann_events = homeserver.messages(ann.token, ann_room)
    bo_events = second_homeserver.messages(bo.token, bo_room)
    assert bodies(ann_events) == ["harbour.png"] and [e["sender"] for e in ann_events] == [ann.user_id]
    assert bodies(bo_events) == ["to Bo's room"] and [e["sender"] for e in bo_events] == [bo.user_id]
    # And the notification says which account sent it
    wait_for_notification(record, lambda n: f"(as {ann.user_id})" in notification_text(n),
                          what="a notification naming Ann's account")

    # When a share that names no account is completed to Ann's room (as the dialog does), while
    # Bo is the account signed in last
    chosen = session.share_ok(text="chosen in the dialog")
    complete_share(session, chosen, [ann_room]).expect_ok()

    # Then it goes out as Ann, whose room it is
    assert wait_for_state(session, chosen, "sent")["account"] == ann.user_id
    assert bodies(homeserver.messages(ann.token, ann_room)) == ["harbour.png", "chosen in the dialog"]


def test_a_signed_out_accounts_share_waits_for_it_while_the_others_go_and_then_goes_once(
        new_session, homeserver, second_homeserver):
    # Given two accounts, and the one signed in last (Bo) signed out
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)
    sign_out(session)
    assert [a["user-id"] for a in get_status(session)["accounts"]] == [ann.user_id]

    # When a share is made as Bo, and one as Ann
    for_bo = session.share_ok(text="for Bo, later", destinations=[bo_room], account=bo.user_id)
    for_ann = session.share_ok(text="for Ann, now", destinations=[ann_room], account=ann.user_id)

    # Then Ann's goes, and Bo's waits for Bo (never sent as Ann)
    assert wait_for_state(session, for_ann, "sent")["account"] == ann.user_id
    waiting = wait_for_state(session, for_bo, "awaiting-sign-in")
    assert waiting["account"] == bo.user_id
    assert bodies(homeserver.messages(ann.token, ann_room)) == ["for Ann, now"]
    assert second_homeserver.messages(bo.token, bo_room) == []

    # When Bo signs in again
    sign_in(session, second_homeserver, bo)

    # Then Bo's share goes out as Bo, once
    wait_for_state(session, for_bo, "sent")
    events = second_homeserver.messages(bo.token, bo_room)
    assert bodies(events) == ["for Bo, later"] and [e["sender"] for e in events] == [bo.user_id]


def test_a_share_for_an_account_that_is_not_a_user_id_or_unknown_is_refused(new_session, homeserver, second_homeserver):
    session, (ann, ann_room), _ = two_accounts(new_session, homeserver, second_homeserver)

    reply = session.share(text="where to?", destinations=[ann_room], account="ann")

    assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument"
    assert "“account” must be a Matrix user id" in reply.error_message

    # Nor one Ferry never knew (a typing error would wait for ever)
    reply = session.share(text="where to?", destinations=[ann_room], account="@nobody:ferry.test")
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument"
    assert "knows no account @nobody:ferry.test" in reply.error_message
    assert session.share_ids() == []


def test_signing_out_names_the_account_when_several_are_signed_in(new_session, homeserver, second_homeserver):
    # Given two accounts
    session, (ann, _), (bo, _) = two_accounts(new_session, homeserver, second_homeserver)

    # When `ferry logout` names none, it signs nobody out and says which there are
    done = session.ferry("logout")
    assert done.returncode == EX_USAGE, done.stderr
    assert ann.user_id in done.stderr and bo.user_id in done.stderr and "--account" in done.stderr
    assert {a["user-id"] for a in get_status(session)["accounts"]} == {ann.user_id, bo.user_id}

    # When it names Ann, Ann alone is signed out, here and at her server
    done = session.ferry("logout", "--account", ann.user_id)
    assert done.returncode == EX_OK, done.stderr
    assert [a["user-id"] for a in get_status(session)["accounts"]] == [bo.user_id]

    # And an account that is not signed in is refused by name
    reply = session.gdbus_call("SignOutAccount", GLib.Variant("s", ann.user_id))
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.NotSignedIn"

    # And with one account left, `ferry logout` needs no --account
    done = session.ferry("logout")
    assert done.returncode == EX_OK, done.stderr
    assert get_status(session)["accounts"] == []


def test_kills_during_a_two_account_drain_send_every_share_once_as_its_own_account(
        new_session, homeserver, second_homeserver):
    # Given two accounts, and 40 texts queued for them in turn, the service killed (SIGKILL) five
    # times at random moments while they go out
    session, (ann, ann_room), (bo, bo_room) = two_accounts(new_session, homeserver, second_homeserver)
    rng = random.Random(int(os.environ.get("FERRY_CHAOS_SEED", "20261128")))
    kills = set(rng.sample(range(40), 5))
    for i in range(40):
        account, room = (ann.user_id, ann_room) if i % 2 == 0 else (bo.user_id, bo_room)
        done = session.ferry("text", f"drain {i}", "--to", room, "--account", account, "--no-wait", timeout=60)
        assert done.returncode == EX_OK, (i, done.stderr)
        if i in kills:
            time.sleep(rng.uniform(0, 0.3))
            session.kill_service(signal.SIGKILL)

    # Then every share is sent
    wait_for(lambda: all(s["state"] == "sent" for s in session.list_shares()), timeout=300,
             what="every share sent after the kills")

    # And each room holds its account's texts exactly once, each from that account
    for server, user, room, parity in ((homeserver, ann, ann_room, 0), (second_homeserver, bo, bo_room, 1)):
        events = server.messages(user.token, room)
        assert {e["sender"] for e in events} == {user.user_id}
        counts = collections.Counter(bodies(events))
        assert sorted(counts) == sorted(f"drain {i}" for i in range(parity, 40, 2)), "a share is missing or misplaced"
        assert [body for body, n in counts.items() if n != 1] == [], "a share arrived twice"


def test_the_device_of_the_account_named_is_verified_and_only_its(new_session, homeserver, second_homeserver):
    # Given two accounts, the first (Ann, not the one signed in last) with a recovery key
    session, (ann, _), (bo, _) = two_accounts(new_session, homeserver, second_homeserver)
    _identity, storage = bootstrap(homeserver, ann)

    # When `ferry verify` names no account, it refuses and says which there are
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)
    assert done.returncode == EX_USAGE, done.stderr
    assert ann.user_id in done.stderr and bo.user_id in done.stderr

    # When it names Ann
    done = session.ferry("verify", "--account", ann.user_id, "--json", input=storage.recovery_key + "\n", timeout=60)

    # Then Ann's device is verified, and Bo's is not taken for it
    assert done.returncode == EX_OK, done.stderr
    assert json.loads(done.stdout) == {"verification": "verified"}
    listed = {a["user-id"]: a for a in get_status(session)["accounts"]}
    assert listed[ann.user_id]["device-verification"] == "verified"
    assert listed[bo.user_id]["device-verification"] != "verified"

    # And an account that is not a user id, or not signed in, is refused by name
    for account, error in (("ann", "InvalidArgument"), ("@nobody:ferry.test", "NotSignedIn")):
        reply = session.gdbus_call("VerifyDevice", GLib.Variant("a{sv}", {
            "recovery-key": GLib.Variant("s", storage.recovery_key), "account": GLib.Variant("s", account)}))
        assert reply.error_name == f"io.github.ferryshare.Ferry.Error.{error}", reply


def test_a_ninth_account_is_refused_its_token_ended_and_the_eight_stay(new_session, homeserver):
    # Given eight accounts signed in
    session = new_session()
    eight = [homeserver.new_user(f"crew{i}") for i in range(8)]
    for user in eight:
        sign_in(session, homeserver, user)

    # When a ninth signs in
    ninth = homeserver.new_user("ninth")
    before = {d["device_id"] for d in homeserver.devices(ninth.user_id)}  # the test's own sign-in
    reply = sign_in_call(session, homeserver=homeserver.base_url, user=ninth.user_id, password=ninth.password)

    # Then it is refused, saying why, and the device its sign-in made is gone from the server again
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.SignInFailed", reply
    assert "Ferry holds 8 accounts at a time; sign one out first." in reply.error_message
    wait_for(lambda: {d["device_id"] for d in homeserver.devices(ninth.user_id)} == before, timeout=20,
             what="the ninth sign-in's device ended")
    assert {a["user-id"] for a in get_status(session)["accounts"]} == {u.user_id for u in eight}

    # And one of the eight signing in again is no ninth account
    sign_in(session, homeserver, eight[0])
    assert len(get_status(session)["accounts"]) == 8
