"""The room keys Ferry sends with, in the account's server-side key backup: what a device the
person adds next month restores, as Element restores it (the backup's private key opens each
`session_data`, libolm or vodozemac imports the session), and reads Ferry's events with alone.

The account's cross-signing identity, secret storage and key backup are made by clients we did
not write in Swift (crosssigning.py, secretstorage.py, keybackup.py over libolm and vodozemac);
Ferry's device is verified with the recovery key, so it trusts the master key that signed the
backup. A backup signed by nothing Ferry trusts gets nothing.
"""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import urllib.parse

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptopeers import Libolm, Vodozemac
from ferryenv import EX_OK
from keybackup import KeyBackup
from matrixflow import sign_in
from secretstorage import bootstrap

MEGOLM = "m.megolm.v1.aes-sha2"


@pytest.fixture
def ferry(new_session, homeserver, matrix_user):
    """(session, user, friend, room): a Ferry signed in as a user whose identity and secret
    storage another client set up, and an encrypted room with a friend."""
    user, friend = matrix_user("backup"), matrix_user("friend")
    session = new_session()
    sign_in(session, homeserver, user)
    room = homeserver.create_room(user.token, name="Backed up", encrypted=True, invite=[friend.user_id])
    homeserver.join(friend.token, room)
    yield session, user, friend, room
    session.stop()


def verify_with_recovery_key(session, homeserver, user):
    identity, storage = bootstrap(homeserver, user)
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)
    assert done.returncode == EX_OK, done.stderr
    return identity


def share(session, *args) -> None:
    done = session.ferry(*args, timeout=120)
    assert done.returncode == EX_OK, done.stderr


def decrypted_attachment(homeserver, token: str, file: dict) -> bytes:
    """An encrypted attachment downloaded and decrypted (AES-256-CTR, as the spec's `file`)."""
    server, media = urllib.parse.urlparse(file["url"]).netloc, urllib.parse.urlparse(file["url"]).path.lstrip("/")
    data = homeserver.request("GET", f"/_matrix/client/v1/media/download/{server}/{media}", token).body
    assert hashlib.sha256(data).digest() == base64.b64decode(file["hashes"]["sha256"] + "==")
    key = base64.urlsafe_b64decode(file["key"]["k"] + "==")
    iv = base64.b64decode(file["iv"] + "==")
    decryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).decryptor()
    return decryptor.update(data) + decryptor.finalize()


def test_a_device_added_later_reads_every_event_from_the_backup_with_libolm_and_with_vodozemac(ferry, homeserver):
    session, me, friend, room = ferry
    # Given an account with a key backup (libolm's key), signed by its master key, which Ferry trusts
    identity = verify_with_recovery_key(session, homeserver, me)
    first = KeyBackup.create(homeserver, me, Libolm, signer=identity)

    # When Ferry shares a text and a file into an encrypted room
    share(session, "text", "Kept for later ✓", "--to", room)
    data = b"backed-up bytes " + os.urandom(4096)
    path = session.files / "report.bin"
    path.write_bytes(data)
    share(session, "send", str(path), "--to", room)

    # Then the backup holds the room's session from its first index, as Ferry's own
    [(session_id, (_, held, plain))] = first.restore().items()
    assert (held["first_message_index"], held["forwarded_count"], held["is_verified"]) == (0, 0, True)
    assert plain["algorithm"] == MEGOLM and plain["forwarding_curve25519_key_chain"] == []
    # And a device that has nothing but the backup reads both events, and the file's bytes
    events = first.read_events(room, me.user_id)
    assert [e.get("error") for e in events] == [None, None], events
    assert [e["index"] for e in events] == [0, 1]
    assert events[0]["content"]["body"] == "Kept for later ✓"
    assert events[1]["content"]["msgtype"] == "m.file"
    assert decrypted_attachment(homeserver, me.token, events[1]["content"]["file"]) == data

    # When the person makes a new backup elsewhere (vodozemac's key) and Ferry starts again
    second = KeyBackup.create(homeserver, me, Vodozemac, signer=identity)
    session.kill_service(signal.SIGTERM)
    share(session, "text", "After the new backup", "--to", room)

    # Then the new backup holds the same session, still from its first index: all three read
    events = second.read_events(room, me.user_id)
    assert [e.get("error") for e in events] == [None] * 3, events
    assert [e["content"].get("body") for e in events][::2] == ["Kept for later ✓", "After the new backup"]
    assert list(second.restore()) == [session_id]


def test_a_backup_ferry_cannot_trust_gets_nothing_until_the_person_verifies(ferry, homeserver):
    session, me, friend, room = ferry
    # Given an account whose backup is signed by its master key, and Ferry not verified yet
    identity, storage = bootstrap(homeserver, me)
    backup = KeyBackup.create(homeserver, me, Libolm, signer=identity)

    # When Ferry shares into an encrypted room
    share(session, "text", "Before verifying", "--to", room)

    # Then nothing goes into the backup: Ferry has no master key of its own to judge it by
    assert backup.held() == {}

    # When the person verifies Ferry with the recovery key and shares again
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)
    assert done.returncode == EX_OK, done.stderr
    share(session, "text", "After verifying", "--to", room)

    # Then the room's session goes up, from its first index: the text before verifying reads too
    events = backup.read_events(room, me.user_id)
    assert [e["content"]["body"] for e in events] == ["Before verifying", "After verifying"], events


def test_a_backup_the_server_made_up_gets_no_key(ferry, homeserver):
    session, me, friend, room = ferry
    # Given Ferry verified under the account's master key
    verify_with_recovery_key(session, homeserver, me)
    # And a backup whose auth_data is signed by another master key (a server's own), or by none
    for made_up in (KeyBackup.create(homeserver, me, Vodozemac, master=Ed25519PrivateKey.generate()),
                    KeyBackup.create(homeserver, me, Libolm)):
        session.kill_service(signal.SIGTERM)
        # When Ferry shares into an encrypted room
        share(session, "text", f"Not for backup {made_up.version}", "--to", room)
        # Then the backup holds nothing, and Ferry said why in its log
        assert made_up.held() == {}
    assert "not one Ferry may write to" in session.log_tail(400)
