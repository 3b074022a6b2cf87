"""The sign-in step: SignIn, SignOut, GetLoginFlows and the properties over D-Bus, `ferry login`,
`ferry logout` and `ferry status`, against a real Synapse; where the token is kept (a Secret
Service on the bus, or a 0600 file); and a share made while signed out, delivered after sign-in.

What arrived is read back from the room with the harness's own HTTP client."""

from __future__ import annotations

import json
import stat
from concurrent.futures import ThreadPoolExecutor

from ferryenv import EX_OK, EX_UNAVAILABLE, file_uri, wait_for, write_png
from matrixflow import (EX_NOPERM, bodies, error_sentence, files_containing, get_property, get_status, msgtypes,
                        secrets_in_keyring, sign_in, sign_in_call, sign_in_with_token, sign_out, status_json,
                        wait_for_state)


def test_password_sign_in_over_dbus_returns_the_account_and_sets_the_properties(fresh_bus, homeserver, matrix_user):
    # Given a Matrix account and a Ferry nobody is signed in to
    user = matrix_user("signin")
    assert get_property(fresh_bus, "SignedIn") is False
    assert get_property(fresh_bus, "AccountId") == ""

    # When a client calls SignIn with the server's URL, the user id and the password
    account = sign_in_call(fresh_bus, homeserver=homeserver.base_url, user=user.user_id,
                           password=user.password).expect_ok()

    # Then the account names the user, the client URL and a device the server knows for that user
    assert account["user-id"] == user.user_id
    assert account["homeserver"].rstrip("/") == homeserver.base_url
    assert account["device-id"] in {d["device_id"] for d in homeserver.devices(user.user_id)}
    # And the properties say so
    assert get_property(fresh_bus, "SignedIn") is True
    assert get_property(fresh_bus, "AccountId") == user.user_id
    assert get_property(fresh_bus, "Homeserver").rstrip("/") == homeserver.base_url


def test_a_local_name_signs_in_as_the_full_user_id(fresh_bus, homeserver, matrix_user):
    # Given an account
    user = matrix_user("localname")
    localpart = user.user_id[1:].split(":", 1)[0]

    # When SignIn is given only the local name
    account = sign_in_call(fresh_bus, homeserver=homeserver.base_url, user=localpart,
                           password=user.password).expect_ok()

    # Then Ferry is signed in as the full user id
    assert account["user-id"] == user.user_id
    assert get_property(fresh_bus, "AccountId") == user.user_id


def test_access_token_sign_in_over_dbus_uses_that_tokens_device(fresh_bus, homeserver, matrix_user):
    # Given an access token made elsewhere (e.g. copied from another client)
    user = matrix_user("token")
    token, device_id = homeserver.login(user.user_id, user.password)

    # When a client signs Ferry in with it
    account = sign_in_with_token(fresh_bus, homeserver, token)

    # Then Ferry is that user on that token's device
    assert account["user-id"] == user.user_id
    assert account["device-id"] == device_id
    assert get_property(fresh_bus, "SignedIn") is True


def test_login_flows_say_what_the_server_offers(fresh_bus, homeserver):
    # When a client asks which ways of signing in the shared server offers
    reply = fresh_bus.gdbus_call("GetLoginFlows", _s(homeserver.base_url)).expect_ok()
    [flows] = reply

    # Then password login is offered (this Synapse has no SSO), with the resolved client URL
    assert flows["password"] is True
    assert flows["sso"] is False
    assert flows["homeserver"].rstrip("/") == homeserver.base_url


def test_login_flows_of_a_server_that_is_not_there_is_homeserver_unreachable(fresh_bus):
    # Given a loopback port nobody listens on
    from homeserver import free_port
    nowhere = f"http://127.0.0.1:{free_port()}"

    # When a client asks for its login flows, and tries to sign in there
    flows = fresh_bus.gdbus_call("GetLoginFlows", _s(nowhere))
    signin = sign_in_call(fresh_bus, homeserver=nowhere, user="@me:ferry.test", password="pw")

    # Then both fail with HomeserverUnreachable and a sentence; nobody is signed in
    flows.expect_error("HomeserverUnreachable")
    signin.expect_error("HomeserverUnreachable")
    assert get_property(fresh_bus, "SignedIn") is False
    # And the command line says the same with exit 69
    done = fresh_bus.ferry("login", "--homeserver", nowhere, "--user", "@me:ferry.test", "--password-stdin",
                           input="pw\n")
    assert done.returncode == EX_UNAVAILABLE, (done.returncode, done.stderr)
    error_sentence(done)
    # naming the homeserver as the culprit, not the Ferry service
    assert "cannot be reached" in done.stderr and "service is not available" not in done.stderr, done.stderr
    assert nowhere in done.stderr, done.stderr


def test_a_wrong_password_is_sign_in_failed_with_a_sentence_and_cli_exit_77(fresh_bus, homeserver, matrix_user):
    # Given an account
    user = matrix_user("wrongpw")
    wrong = "not-" + user.password

    # When SignIn is given a wrong password
    reply = sign_in_call(fresh_bus, homeserver=homeserver.base_url, user=user.user_id, password=wrong)

    # Then it fails with SignInFailed and a sentence that does not repeat the password
    message = reply.expect_error("SignInFailed")
    assert len(message.split()) >= 3, f"not a sentence: {message!r}"
    assert wrong not in message
    assert get_property(fresh_bus, "SignedIn") is False

    # And `ferry login` with the same wrong password exits 77 with `ferry: <sentence>`
    done = fresh_bus.ferry("login", "--homeserver", homeserver.base_url, "--user", user.user_id,
                           "--password-stdin", input=wrong + "\n")
    assert done.returncode == EX_NOPERM, (done.returncode, done.stderr)
    error_sentence(done)
    assert wrong not in done.stderr and wrong not in done.stdout
    assert status_json(fresh_bus)["signed_in"] is False


def test_an_access_token_the_server_does_not_know_is_sign_in_failed(fresh_bus, homeserver):
    # When SignIn is given a made-up token
    reply = sign_in_call(fresh_bus, homeserver=homeserver.base_url, access_token="syt_made_up_token_123")

    # Then it fails with SignInFailed, and nobody is signed in
    reply.expect_error("SignInFailed")
    assert get_property(fresh_bus, "SignedIn") is False


def test_ferry_login_password_stdin_signs_in(fresh_bus, homeserver, matrix_user):
    # Given an account
    user = matrix_user("clipw")

    # When a person runs `ferry login --password-stdin` with the password on standard input
    done = fresh_bus.ferry("login", "--homeserver", homeserver.base_url, "--user", user.user_id,
                           "--password-stdin", input=user.password + "\n")

    # Then it succeeds, never echoes the password, and status says who is signed in where
    assert done.returncode == EX_OK, done.stderr
    assert user.password not in done.stdout + done.stderr
    status = status_json(fresh_bus)
    assert status["signed_in"] is True
    assert status["user_id"] == user.user_id
    assert status["homeserver"].rstrip("/") == homeserver.base_url


def test_ferry_login_access_token_stdin_signs_in(fresh_bus, homeserver, matrix_user):
    # Given an access token
    user = matrix_user("clitoken")
    token, device_id = homeserver.login(user.user_id, user.password)

    # When `ferry login --access-token-stdin` reads it
    done = fresh_bus.ferry("login", "--homeserver", homeserver.base_url, "--access-token-stdin", input=token + "\n")

    # Then Ferry is signed in as its user, and the token is printed nowhere
    assert done.returncode == EX_OK, done.stderr
    assert token not in done.stdout + done.stderr
    assert status_json(fresh_bus)["user_id"] == user.user_id
    assert get_property(fresh_bus, "AccountId") == user.user_id


def test_sign_out_and_in_again_is_a_new_device(fresh_bus, homeserver, matrix_user):
    # Given Ferry signed in
    user = matrix_user("signout")
    first = sign_in(fresh_bus, homeserver, user)

    # When it signs out
    sign_out(fresh_bus)

    # Then it is signed out, and a new share waits for sign-in
    assert get_property(fresh_bus, "SignedIn") is False
    assert get_property(fresh_bus, "AccountId") == ""
    share_id = fresh_bus.share_ok(text="after sign-out", destinations=["!nowhere:ferry.test"])
    assert fresh_bus.get_share(share_id)["state"] == "awaiting-sign-in"

    # And signing in again is a new device: sign-out deleted the old one's encryption keys, and
    # a device id never gets new keys (other clients would take it for an impostor)
    second = sign_in(fresh_bus, homeserver, user)
    assert second["device-id"] != first["device-id"]


def test_ferry_logout_signs_out(fresh_bus, homeserver, matrix_user):
    # Given Ferry signed in
    user = matrix_user("clilogout")
    sign_in(fresh_bus, homeserver, user)

    # When a person runs `ferry logout`
    done = fresh_bus.ferry("logout")

    # Then Ferry is signed out
    assert done.returncode == EX_OK, done.stderr
    assert status_json(fresh_bus)["signed_in"] is False
    assert get_property(fresh_bus, "SignedIn") is False


def test_status_json_has_the_contract_keys_and_counts_shares_by_state(fresh_bus, homeserver, matrix_user, tmp_path):
    # Given two shares made while signed out
    fresh_bus.share_ok(text="one")
    fresh_bus.share_ok(uris=[file_uri(write_png(tmp_path / "s.png"))])

    # When status is asked for, signed out
    signed_out = status_json(fresh_bus)

    # Then it has every documented key, nobody signed in, and both shares awaiting sign-in
    assert set(signed_out) >= {"signed_in", "user_id", "homeserver", "online", "secret_storage", "shares"}
    assert signed_out["signed_in"] is False and signed_out["user_id"] is None
    assert signed_out["shares"].get("awaiting-sign-in") == 2
    assert signed_out["accounts"] == [] and get_status(fresh_bus)["accounts"] == []

    # When Ferry signs in (the shares have no destination: they move on to awaiting-destination)
    user = matrix_user("status")
    sign_in(fresh_bus, homeserver, user)
    wait_for(lambda: status_json(fresh_bus)["shares"].get("awaiting-destination") == 2, timeout=20,
             what="both shares to move on to awaiting-destination by themselves")
    signed_in = status_json(fresh_bus)

    # Then the status says who, where, online, and counts the shares in their new state
    assert signed_in["signed_in"] is True
    assert signed_in["user_id"] == user.user_id
    assert signed_in["homeserver"].rstrip("/") == homeserver.base_url
    assert signed_in["online"] is True
    assert signed_in["secret_storage"] in {"secret-service", "file"}
    assert signed_in["shares"].get("awaiting-destination") == 2
    assert signed_in["shares"].get("awaiting-sign-in", 0) == 0
    # And GetStatus over D-Bus agrees
    status = get_status(fresh_bus)
    assert status["signed-in"] is True and status["user-id"] == user.user_id
    assert status["shares"].get("awaiting-destination") == 2
    # And both list the one account with its device, as `ferry accounts` does
    [listed] = status["accounts"]
    assert (listed["user-id"], listed["device-id"], listed["online"]) == (user.user_id, status["device-id"], True)
    assert signed_in["accounts"] == json.loads(fresh_bus.ferry("accounts", "--json").stdout)
    [account] = signed_in["accounts"]
    assert set(account) == {"user_id", "homeserver", "device_id", "device_verification", "online"}
    assert (account["user_id"], account["device_id"]) == (user.user_id, signed_in["device_id"])
    assert f"Signed in as {user.user_id}" in fresh_bus.ferry("accounts").stdout


def test_a_share_made_while_signed_out_is_delivered_once_after_sign_in_without_a_new_share(
        fresh_bus, homeserver, matrix_user):
    # Given a room, and Ferry signed out
    user = matrix_user("later")
    room = homeserver.create_room(user.token, name="Later")

    # When a share with that destination arrives while signed out
    with fresh_bus.signals() as signals:
        share_id = fresh_bus.share_ok(text="sent after sign-in", destinations=[room])
        # Then it waits for sign-in, and SignInRequired says so with a sentence
        required = signals.wait_for_signal("SignInRequired")
    assert required.first_string and len(required.first_string.split()) >= 2
    assert fresh_bus.get_share(share_id)["state"] == "awaiting-sign-in"
    assert homeserver.messages(user.token, room) == []

    # When the person signs in (and does nothing else)
    sign_in(fresh_bus, homeserver, user)

    # Then the same share is sent, and the room holds the text exactly once
    wait_for_state(fresh_bus, share_id, "sent")
    events = homeserver.wait_for_messages(user.token, room, count=1)
    assert bodies(events) == ["sent after sign-in"] and msgtypes(events) == ["m.text"]
    assert fresh_bus.share_ids() == [share_id]


def test_without_a_secret_service_the_token_is_kept_in_a_0600_file(new_session, homeserver, matrix_user):
    # Given a session bus without any Secret Service (the default test session), and a token
    session = new_session()
    user = matrix_user("filestore")
    token, _device = homeserver.login(user.user_id, user.password)

    # When Ferry signs in with the token
    sign_in_with_token(session, homeserver, token)

    # Then status says the secret is kept in a file
    assert status_json(session)["secret_storage"] == "file"
    assert get_status(session)["secret-storage"] == "file"
    # And exactly one file in the state directory holds the token, readable by its owner only
    holders = [p for p in files_containing(session.state_dir, token.encode()) if not _is_database(p)]
    assert len(holders) == 1, f"token found in {holders}"
    assert stat.S_IMODE(holders[0].stat().st_mode) == 0o600
    # And never in the database, the log, the settings or the service's arguments
    assert not [p for p in files_containing(session.state_dir, token.encode()) if _is_database(p)]
    assert token not in session.log_path.read_text(errors="replace")
    assert not files_containing(session.root / "config", token.encode())
    assert token.encode() not in _service_cmdline(session)

    # And after the service is killed and activated again, Ferry is still signed in
    session.kill_service()
    assert get_property(session, "AccountId") == user.user_id


def test_a_sign_in_whose_token_is_gone_at_the_next_start_asks_for_sign_in_again(new_session, homeserver, matrix_user):
    # Given a Ferry signed in with its token in a file, and then stopped
    session = new_session()
    user = matrix_user("losttoken")
    token, _device = homeserver.login(user.user_id, user.password)
    sign_in_with_token(session, homeserver, token)
    session.kill_service()
    # And the token's file is gone (removed by hand, restored from an old backup, …)
    [holder] = [p for p in files_containing(session.state_dir, token.encode()) if not _is_database(p)]
    holder.unlink()

    # When a text is shared to a room (the share starts the service)
    with session.signals() as monitor:
        share_id = session.share_ok(text="after the token went", destinations=["!room:ferry.test"])

        # Then it waits for a sign-in, Ferry says it is signed out, and asks for a sign-in
        wait_for_state(session, share_id, "awaiting-sign-in")
        assert not session.signed_in()
        monitor.wait_for_signal("SignInRequired")


def test_with_gnome_keyring_on_the_bus_the_token_is_in_the_secret_service_and_no_file(
        new_session, homeserver, matrix_user):
    # Given a session with gnome-keyring's Secret Service running, its login keyring unlocked
    session = new_session()
    session.start_keyring()
    user = matrix_user("keyring")
    token, _device = homeserver.login(user.user_id, user.password)

    # When Ferry signs in with the token
    sign_in_with_token(session, homeserver, token)

    # Then status says the Secret Service keeps it, and the keyring holds exactly that token
    assert status_json(session)["secret_storage"] == "secret-service"
    assert token.encode() in secrets_in_keyring(session)
    # And no file of Ferry's holds it
    assert files_containing(session.state_dir, token.encode()) == []
    assert files_containing(session.root / "config", token.encode()) == []
    assert token not in session.log_path.read_text(errors="replace")

    # And after the service is killed and activated again, Ferry is still signed in (from the keyring)
    session.kill_service()
    assert get_property(session, "AccountId") == user.user_id
    assert status_json(session)["secret_storage"] == "secret-service"


def _s(text: str):
    from gi.repository import GLib
    return GLib.Variant("s", text)


def _is_database(path) -> bool:
    return path.name.startswith("ferry.sqlite3")


def _service_cmdline(session) -> bytes:
    pid = session.name_owner_pid()
    assert pid is not None, "the service is not running"
    return open(f"/proc/{pid}/cmdline", "rb").read() + open(f"/proc/{pid}/environ", "rb").read()


def test_sign_ins_at_the_same_moment_make_each_person_one_account_with_one_device(new_session, homeserver,
                                                                                  matrix_user):
    # Given two people, and a Ferry nobody is signed in to
    ann, cy = matrix_user("ann"), matrix_user("cy")
    before = {user.user_id: {d["device_id"] for d in homeserver.devices(user.user_id)} for user in (ann, cy)}
    session = new_session()

    # When each signs in twice at the same moment (the dialog and the command line, say)
    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(
            lambda user: sign_in_call(session, timeout=60, homeserver=homeserver.base_url, user=user.user_id,
                                      password=user.password),
            [ann, cy, ann, cy]))

    # Then every sign-in succeeds, and Ferry holds each person once
    assert sorted(r.expect_ok()["user-id"] for r in replies) == sorted([ann.user_id, ann.user_id, cy.user_id,
                                                                        cy.user_id])
    accounts = get_status(session)["accounts"]
    assert sorted(a["user-id"] for a in accounts) == sorted([ann.user_id, cy.user_id]), accounts
    # And the server keeps one Ferry device of each: the sign-in replaced was ended there
    for user in (ann, cy):
        [kept] = [a["device-id"] for a in accounts if a["user-id"] == user.user_id]
        wait_for(lambda: {d["device_id"] for d in homeserver.devices(user.user_id)} - before[user.user_id] == {kept},
                 timeout=30, what=f"one Ferry device of {user.user_id}")
