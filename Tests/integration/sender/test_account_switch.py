"""A share is sent as the person it was queued under, never as anyone else; and signing out and
in again never sends a delivered event twice.

The moments are held open by a proxy in front of a real Synapse (hostileproxy): it keeps a share's
event request waiting (or its answer), while the test signs in a second account, or has the server
forget Ferry's device. Everything is read back from the rooms as Synapse serves them."""

from __future__ import annotations

import json
import threading

import pytest
from gi.repository import GLib

from ferryenv import wait_for
from hostileproxy import HostileProxy
from matrixflow import (bodies, get_property, get_status, secrets_in_keyring, sign_in, sign_in_call,
                        sign_out, wait_for_state)

SEND = r"/send/m\.room\.message/"


@pytest.fixture
def proxy(homeserver):
    proxy = HostileProxy(homeserver).start()
    yield proxy
    proxy.stop()


def alice_with_a_share_on_its_way(new_session, homeserver, proxy, release: threading.Event, keyring: bool = False):
    """Ferry signed in as Alice (through the proxy), and a text to her room held on its way."""
    alice = homeserver.new_user("alice")
    room = homeserver.create_room(alice.token, name="Alice's room")
    session = new_session()
    if keyring:
        session.start_keyring()
    account = sign_in_call(session, homeserver=proxy.base_url, user=alice.user_id,
                           password=alice.password).expect_ok()
    rule = proxy.answer("PUT", SEND, passthrough=True, hold=release)
    share_id = session.share_ok(text="from Alice", destinations=[room])
    wait_for(lambda: rule.hits == 1, timeout=30, what="Alice's event request held by the proxy")
    return session, alice, room, account, share_id


def test_signing_in_as_someone_else_adds_an_account_and_the_first_persons_share_still_goes_out_as_them(
        new_session, homeserver, proxy):
    # Given Ferry signed in as Alice, her share's event request on its way
    release = threading.Event()
    session, alice, alice_room, alice_account, alice_share = alice_with_a_share_on_its_way(
        new_session, homeserver, proxy, release, keyring=True)
    alice_secrets = set(secrets_in_keyring(session))
    assert alice_secrets

    # When Bob signs in on the same Ferry, without signing Alice out
    bob = homeserver.new_user("bob")
    bob_room = homeserver.create_room(bob.token, name="Bob's room")
    sign_in(session, homeserver, bob)

    # Then both are signed in: Alice's device stays at the server, her secrets in the keyring
    assert {a["user-id"] for a in get_status(session)["accounts"]} == {alice.user_id, bob.user_id}
    assert alice_account["device-id"] in {d["device_id"] for d in homeserver.devices(alice.user_id)}
    assert alice_secrets <= set(secrets_in_keyring(session))

    # When the held request reaches the server
    release.set()

    # Then Alice's share goes out as Alice, once
    assert wait_for_state(session, alice_share, "sent")["account"] == alice.user_id
    events = homeserver.messages(alice.token, alice_room)
    assert bodies(events) == ["from Alice"] and [e["sender"] for e in events] == [alice.user_id]

    # And a share that names no account goes out as Bob, the account signed in last
    bob_share = session.share_ok(text="from Bob", destinations=[bob_room])
    assert wait_for_state(session, bob_share, "sent")["account"] == bob.user_id
    assert get_property(session, "SignedIn") is True
    assert get_status(session)["user-id"] == bob.user_id
    assert [e["sender"] for e in homeserver.messages(bob.token, bob_room)] == [bob.user_id]
    assert bodies(homeserver.messages(alice.token, alice_room)) == ["from Alice"]


def test_a_share_made_while_signed_out_goes_out_as_whoever_signs_in_but_a_signed_out_persons_share_waits(
        new_session, homeserver, proxy):
    # Given Alice's share on its way, and Alice signing out before it arrives
    release = threading.Event()
    session, alice, alice_room, _, alice_share = alice_with_a_share_on_its_way(new_session, homeserver, proxy, release)
    sign_out(session)
    release.set()
    assert wait_for_state(session, alice_share, "awaiting-sign-in", timeout=30)["account"] == alice.user_id
    shown = session.ferry("show", alice_share)
    assert shown.returncode == 0, shown.stderr
    assert f"As:       {alice.user_id} (waiting for this account to sign in)" in shown.stdout
    assert json.loads(session.ferry("show", "--json", alice_share).stdout)["account"] == alice.user_id

    # And a share made while nobody is signed in
    bob = homeserver.new_user("bob")
    bob_room = homeserver.create_room(bob.token, name="Bob's room")
    nobodys = session.share_ok(text="from whoever signs in", destinations=[bob_room])
    assert "account" not in session.get_share(nobodys)

    # When Bob signs in
    sign_in(session, homeserver, bob)

    # Then the share made while signed out goes out as Bob; Alice's still waits for her
    sent = wait_for_state(session, nobodys, "sent")
    assert sent["account"] == bob.user_id
    assert bodies(homeserver.messages(bob.token, bob_room)) == ["from whoever signs in"]
    assert session.get_share(alice_share)["state"] == "awaiting-sign-in"
    assert homeserver.messages(alice.token, alice_room) == []

    # And retrying Alice's share does not send it as Bob
    retried = session.gdbus_call("Retry", GLib.Variant("s", alice_share))
    assert not retried.ok
    assert session.get_share(alice_share)["state"] == "awaiting-sign-in"


def test_signing_out_and_in_again_never_sends_a_delivered_event_a_second_time(new_session, homeserver, proxy):
    # Given Ferry signed in through the proxy, and a text whose event reached the server while its
    # answer is held: Ferry never hears that it went out
    user = homeserver.new_user("again")
    room = homeserver.create_room(user.token, name="Once")
    session = new_session()
    account = sign_in_call(session, homeserver=proxy.base_url, user=user.user_id,
                           password=user.password).expect_ok()
    answer = threading.Event()
    rule = proxy.answer("PUT", SEND, passthrough=True, hold_answer=answer)
    share_id = session.share_ok(text="exactly once", destinations=[room])
    wait_for(lambda: rule.done == 1, timeout=30, what="the event stored by the server, its answer held")
    assert bodies(homeserver.messages(user.token, room)) == ["exactly once"]

    # When the service dies there, and the device is signed out at the server (which forgets its
    # transaction ids), and the lost answer arrives nowhere
    session.kill_service()
    homeserver.revoke_device(user.user_id, account["device-id"])
    answer.set()

    # And the service, started again, finds itself signed out; the person signs in again
    with session.signals() as signals:
        assert get_property(session, "SignedIn") in (True, False)
        signals.wait_for_signal("SignInRequired", timeout=60)
    wait_for_state(session, share_id, "awaiting-sign-in", timeout=30)
    # (with an access token of a new device: Synapse, signed in again with the old device's id,
    # happens to still know the transaction; a new device never does)
    token, device = homeserver.login(user.user_id, user.password)
    assert device != account["device-id"]
    sign_in_call(session, homeserver=proxy.base_url, access_token=token).expect_ok()

    # Then the share is sent, and the room holds the text once: found there, not sent again
    wait_for_state(session, share_id, "sent")
    events = homeserver.messages(user.token, room)
    assert bodies(events) == ["exactly once"]
    assert events[0]["content"]["io.github.ferryshare.transaction"]
