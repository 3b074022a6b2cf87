"""Two accounts, each with its own device and its own Megolm sessions, sharing into encrypted rooms:
one share to a room of each, and one to a room both have joined, read by matrix-nio readers (over
libolm and over vodozemac) that decrypt with code we did not write. Each event must come from its
own account's device, and nothing of either account may reach a room in the clear."""

from __future__ import annotations

import hashlib
import signal

import pytest
from gi.repository import GLib

from ferryenv import wait_for
from matrixflow import get_status, sign_in, wait_for_state
from nioreaders import READERS

MEGOLM = "m.megolm.v1.aes-sha2"


def encrypted_room(homeserver, owner, *members, name: str) -> str:
    room = homeserver.create_room(owner.token, name=name, encrypted=True, invite=[m.user_id for m in members])
    for member in members:
        homeserver.join(member.token, room)
    return room


def decrypted(reader, room: str, sender: str) -> list[dict]:
    return [e for e in reader.encrypted_messages(room) if e["sender"] == sender]


def devices_of(session) -> dict[str, str]:
    return {a["user-id"]: a["device-id"] for a in get_status(session)["accounts"]}


@pytest.mark.parametrize("kind", READERS)
def test_one_share_into_an_encrypted_room_of_each_account_comes_from_each_accounts_own_device(
        new_session, homeserver, matrix_user, nio_reader, kind):
    # Given Ferry signed in as Ann and as Cy, each with an encrypted room and a friend reading there
    ann, cy = matrix_user("ann"), matrix_user("cy")
    ann_friend, cy_friend = matrix_user("annfriend"), matrix_user("cyfriend")
    ann_reader, cy_reader = nio_reader(kind, ann_friend), nio_reader(kind, cy_friend)
    ann_room = encrypted_room(homeserver, ann_friend, ann, name="Ann's secret")
    cy_room = encrypted_room(homeserver, cy_friend, cy, name="Cy's secret")
    session = new_session()
    sign_in(session, homeserver, ann)
    sign_in(session, homeserver, cy)
    devices = devices_of(session)
    assert devices[ann.user_id] != devices[cy.user_id]

    # When one share goes to both rooms, naming no account
    done = session.ferry("text", "For each of you ✓", "--to", ann_room, "--to", cy_room, timeout=120)
    assert done.returncode == 0, done.stderr
    wait_for_state(session, done.stdout.strip(), "sent")

    # Then each reader decrypts it, from the Ferry device of the account whose room it is
    for reader, room, user in ((ann_reader, ann_room, ann), (cy_reader, cy_room, cy)):
        [event] = decrypted(reader, room, user.user_id)
        assert event["decrypted"], event
        assert event["algorithm"] == MEGOLM and event["plaintext_room_id"] == room
        assert event["content"]["body"] == "For each of you ✓"
        assert event["sender_device"] == devices[user.user_id]
        # And nothing of Ferry's is in the room in the clear
        assert [e for e in homeserver.messages(user.token, room) if e["sender"] == user.user_id] == []


@pytest.mark.parametrize("kind", READERS)
def test_an_encrypted_room_both_accounts_joined_gets_the_share_from_each_device(
        new_session, homeserver, matrix_user, nio_reader, kind):
    # Given Ann and Cy in one encrypted room with a reader
    ann, cy, friend = matrix_user("ann"), matrix_user("cy"), matrix_user("friend")
    reader = nio_reader(kind, friend)
    room = encrypted_room(homeserver, friend, ann, cy, name="Shared secret")
    session = new_session()
    sign_in(session, homeserver, ann)
    sign_in(session, homeserver, cy)
    devices = devices_of(session)

    # When the dialog's choice is the room as each of them
    share_id = session.share_ok(text="From both of our devices")
    entries = [{"destination": GLib.Variant("s", room), "account": GLib.Variant("s", user.user_id)}
               for user in (ann, cy)]
    session.gdbus_call("CompleteShareAs", GLib.Variant("s", share_id), GLib.Variant("aa{sv}", entries),
                       GLib.Variant("s", "")).expect_ok()
    wait_for_state(session, share_id, "sent")

    # Then the reader decrypts it once from each account's own device
    for user in (ann, cy):
        [event] = decrypted(reader, room, user.user_id)
        assert event["decrypted"], event
        assert event["content"]["body"] == "From both of our devices"
        assert event["sender_device"] == devices[user.user_id]


def test_the_files_of_a_single_account_ferry_stay_that_accounts_when_a_second_account_signs_in(
        new_session, homeserver, matrix_user, nio_reader):
    # Given Ferry signed in as Ann, who shared into an encrypted room a friend reads
    ann, cy, friend = matrix_user("ann"), matrix_user("cy"), matrix_user("friend")
    reader = nio_reader(READERS[0], friend)
    room = encrypted_room(homeserver, friend, ann, name="Ann's old room")
    session = new_session()
    ann_device = sign_in(session, homeserver, ann)["device-id"]
    done = session.ferry("text", "before", "--to", room, timeout=120)
    assert done.returncode == 0, done.stderr

    # And her token and encryption key in the files a Ferry of one account kept (no Secret Service)
    session.kill_service(signal.SIGTERM)
    state = session.state_dir
    ann_suffix = hashlib.sha256(ann.user_id.encode()).hexdigest()[:32]
    for name in ("access-token", "encryption-key"):
        (state / f"{name}-{ann_suffix}").rename(state / name)
    key = (state / "encryption-key").read_bytes()

    # When Cy signs in, before Ann has shared again
    sign_in(session, homeserver, cy)

    # Then the files are filed under Ann, unchanged, and Cy's key is another
    assert (state / f"encryption-key-{ann_suffix}").read_bytes() == key
    assert not (state / "encryption-key").exists() and not (state / "access-token").exists()
    cy_suffix = hashlib.sha256(cy.user_id.encode()).hexdigest()[:32]
    cy_key = wait_for(lambda: (state / f"encryption-key-{cy_suffix}").exists(), timeout=30, what="Cy's key")
    assert cy_key and (state / f"encryption-key-{cy_suffix}").read_bytes() != key

    # And Ann's next share is encrypted by the same device, and the friend decrypts both
    done = session.ferry("text", "after", "--to", room, "--account", ann.user_id, timeout=120)
    assert done.returncode == 0, done.stderr
    events = decrypted(reader, room, ann.user_id)
    assert [e["content"]["body"] for e in events] == ["before", "after"], events
    assert all(e["decrypted"] and e["sender_device"] == ann_device for e in events), events
