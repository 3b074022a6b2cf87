"""Signing in through the Matrix OAuth 2.0 API (Matrix 1.15), as matrix.org and every server
running the Matrix Authentication Service want it: a Synapse that leaves all sign-in to an
authorization server (the test's own, oauthserver.py, speaking RFC 8414, 7591, 7636, 6749's refresh
and 7009) and accepts the tokens it issues. The browser is a stand-in (oauthbrowser.py) that posts
the consent form and follows the redirect to Ferry's loopback listener.

What the delegated Synapse offers: no /login at all (404), so neither password nor legacy SSO;
`GET /_matrix/client/v1/auth_metadata` (and MSC2965's path) serve the authorization server's
document. Legacy SSO on a server without the OAuth API stays as it was (test_sso.py)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
import urllib.parse
import urllib.request

import pytest
from gi.repository import GLib

from ferryenv import EX_OK, wait_for
from matrixflow import bodies, kept_pairs, list_destinations, sign_in_call, wait_for_state, wait_until_sent
from oauthbrowser import browser_log, install_oauth_browser

LIFETIME = 4


def browser_sign_in(session, server, username: str, **keys) -> dict:
    """SignIn with the browser, the stand-in signing in as `username`: the account."""
    install_oauth_browser(session, username)
    return sign_in_call(session, timeout=120, homeserver=server.base_url, sso=True, **keys).expect_ok()


def kept_oauth_pairs(session) -> list[dict]:
    return kept_pairs(session, having="oauth")


def expiring_sign_in_with_a_room(new_session, server, localpart: str) -> tuple:
    """Access tokens that last LIFETIME seconds, and a new Ferry (its sign-ins in a keyring) signed
    in as `localpart` in the browser: (session, the person's own token, their room)."""
    server.auth.access_token_lifetime = LIFETIME
    session = new_session()
    session.start_keyring()
    browser_sign_in(session, server, localpart)
    token, _ = server.auth.issue_token(localpart)
    return session, token, server.synapse.create_room(token, name=f"{localpart}'s room")


def whoami_status(server, token: str) -> int:
    return server.synapse.request("GET", "/_matrix/client/v3/account/whoami", token=token).status


def test_the_browser_sign_in_uses_the_oauth_api_and_shares_go_out(new_session, oauth_homeserver):
    # Given a homeserver that signs people in only through its authorization server
    server, auth = oauth_homeserver, oauth_homeserver.auth
    session = new_session()
    session.start_keyring()
    registrations_before = len(auth.registrations)

    # When Ferry is asked to sign in with the browser, and the person signs in there as Olga
    account = browser_sign_in(session, server, "olga")

    # Then Ferry registered itself as a public native client with a loopback redirect
    [registration] = auth.registrations[registrations_before:]
    request = registration["request"]
    assert registration["outcome"] == "registered", registration
    assert request["application_type"] == "native" and request["token_endpoint_auth_method"] == "none"
    assert request["client_uri"].startswith("https://") and request["client_name"] == "Ferry"
    [redirect] = request["redirect_uris"]
    assert urllib.parse.urlparse(redirect).hostname == "127.0.0.1", redirect
    # And asked for a code with PKCE (S256), a state, and the API and a device of its own as scopes
    params = auth.authorizations[-1]["params"]
    assert params["code_challenge_method"] == "S256" and len(params["code_challenge"]) == 43
    assert len(params["state"]) >= 22 and "prompt" not in params
    scopes = params["scope"].split()
    assert "urn:matrix:client:api:*" in scopes
    [device_scope] = [s for s in scopes if s.startswith("urn:matrix:client:device:")]
    # And it is signed in as Olga on that device, its tokens kept in the keyring with where to renew them
    assert account["user-id"] == f"@olga:{server.server_name}", account
    assert account["device-id"] == device_scope.rsplit(":", 1)[1]
    [pair] = kept_oauth_pairs(session)
    assert pair["oauth"]["client_id"] == registration["client_id"] and pair["refresh_token"]
    log = session.log_path.read_text(errors="replace")
    assert pair["access_token"] not in log and pair["refresh_token"] not in log

    # When a text is shared to Olga's room
    olga_token, _ = auth.issue_token("olga")
    room = server.synapse.create_room(olga_token, name="Olga's room")
    done = session.ferry("text", "through the OAuth API", "--to", room)

    # Then it arrives
    assert done.returncode == EX_OK, done.stderr
    assert bodies(server.synapse.wait_for_messages(olga_token, room, count=1)) == ["through the OAuth API"]


def test_the_login_flows_say_oauth_account_creation_and_the_account_page(new_session, oauth_homeserver, fake_front):
    session = new_session()
    [flows] = session.gdbus_call("GetLoginFlows", GLib.Variant("s", oauth_homeserver.base_url)).expect_ok()
    assert flows["oauth"] is True and flows["sso"] is True and flows["password"] is False, flows
    assert flows["create-account"] is True
    assert flows["account-management"] == oauth_homeserver.auth.issuer + "account/"

    # And a server that serves the metadata only at MSC2965's unstable path is understood too
    front = fake_front(oauth_homeserver.auth)
    front.stable_path = False
    [unstable] = session.gdbus_call("GetLoginFlows", GLib.Variant("s", front.base_url)).expect_ok()
    assert unstable["oauth"] is True, unstable


def test_expiring_tokens_are_renewed_across_a_restart_and_sign_out_revokes_them(new_session, oauth_homeserver):
    # Given access tokens that last LIFETIME seconds, and Ferry signed in as Pia
    server, auth = oauth_homeserver, oauth_homeserver.auth
    session, pia_token, room = expiring_sign_in_with_a_room(new_session, server, "pia")
    [first] = kept_oauth_pairs(session)
    registrations = len(auth.registrations)

    # When the token expires, and two texts and a file are sent
    time.sleep(LIFETIME + 1)
    note = session.files / "renewed.txt"
    note.write_text("sent after a renewal\n")
    for command in (("text", "first after expiry"), ("text", "second after expiry"), ("send", note)):
        done = session.ferry(*command, "--to", room)
        assert done.returncode == EX_OK, done.stderr

    # Then each arrived once, renewed at the token endpoint with the refresh grant, nobody asked
    events = server.synapse.wait_for_messages(pia_token, room, count=3)
    assert bodies(events) == ["first after expiry", "second after expiry", "renewed.txt"]
    refreshes = [r for r in auth.token_requests if r["grant_type"] == "refresh_token"]
    assert refreshes and all(r["params"]["client_id"] == first["oauth"]["client_id"] for r in refreshes)
    [renewed] = kept_oauth_pairs(session)
    assert renewed["refresh_token"] != first["refresh_token"]

    # When the service is killed, the token expires again, and a new service sends a text
    session.kill_service()
    time.sleep(LIFETIME + 1)
    done = session.ferry("text", "after a restart", "--to", room)

    # Then it arrives: the kept refresh token renewed the sign-in
    assert done.returncode == EX_OK, done.stderr
    assert bodies(server.synapse.wait_for_messages(pia_token, room, count=4))[-1] == "after a restart"
    [latest] = kept_oauth_pairs(session)

    # When Pia signs out
    done = session.ferry("logout")
    assert done.returncode == EX_OK, done.stderr

    # Then the sign-in was revoked at the authorization server, and the server no longer takes its token
    revocation = auth.revocations[-1]
    assert revocation["outcome"] == "revoked", revocation
    assert revocation["params"]["token_type_hint"] == "refresh_token"
    assert revocation["params"]["client_id"] == first["oauth"]["client_id"]
    assert whoami_status(server, latest["access_token"]) == 401
    assert kept_oauth_pairs(session) == []

    # And signing in again registers anew, as Matrix 1.15 asks of every authorization flow
    browser_sign_in(session, server, "pia")
    assert len(auth.registrations) == registrations + 1


def test_a_kill_between_the_token_endpoints_rotation_and_its_keeping_strands_nothing(new_session, oauth_homeserver):
    # Given Ferry signed in as Yara with tokens that expire, its pair in the keyring
    server, auth = oauth_homeserver, oauth_homeserver.auth
    session, yara_token, room = expiring_sign_in_with_a_room(new_session, server, "yara")
    [before] = kept_oauth_pairs(session)
    # And the token endpoint's next answer held back once it has rotated the pair
    release = threading.Event()
    auth.hold_refresh_answer = release

    # When the token has expired, a text is shared, and the service is killed with -9 while the
    # rotated pair is on its way
    time.sleep(LIFETIME + 1)
    share_id = session.share_ok(text="shared across a killed renewal", destinations=[room])
    wait_for(lambda: any(r.get("held") for r in auth.token_requests), timeout=30, what="the held renewal")
    session.kill_service()
    auth.hold_refresh_answer = None
    release.set()

    # Then the keyring still holds the pair from before: the rotated one never reached Ferry
    [kept] = kept_oauth_pairs(session)
    assert kept["refresh_token"] == before["refresh_token"]
    # And a new service renews with it (the server takes a spent refresh token again while the
    # pair it gave was never used, as the Matrix Authentication Service does), and the share goes out once
    done = session.ferry("text", "after the kill", "--to", room)
    assert done.returncode == EX_OK, done.stderr
    wait_until_sent(session, [share_id])
    events = server.synapse.wait_for_messages(yara_token, room, count=2)
    assert sorted(bodies(events)) == ["after the kill", "shared across a killed renewal"]
    assert session.signed_in()
    refreshes = [r for r in auth.token_requests if r["grant_type"] == "refresh_token"]
    assert [r["params"]["refresh_token"] for r in refreshes].count(before["refresh_token"]) == 2
    assert refreshes[-1]["outcome"] == "ok"

    # When the service is killed again mid-renewal (a list of rooms asked for, so that no share is
    # left to send and renew beside the sign-out), and Yara then signs out
    release = threading.Event()
    auth.hold_refresh_answer = release
    time.sleep(LIFETIME + 1)
    pool = ThreadPoolExecutor(max_workers=1)
    pool.submit(list_destinations, session)
    wait_for(lambda: sum(1 for r in auth.token_requests if r.get("held")) == 2, timeout=30, what="the second hold")
    session.kill_service()
    pool.shutdown()
    auth.hold_refresh_answer = None
    release.set()
    [stale] = kept_oauth_pairs(session)
    done = session.ferry("logout")

    # Then the sign-in is ended at the server although the kept refresh token was a spent one
    # (revoking a spent token ends nothing there: Ferry renews first, and revokes the new one)
    assert done.returncode == EX_OK, done.stderr
    assert auth.revocations[-1]["outcome"] == "revoked", auth.revocations[-1]
    assert not [s for s in auth.sessions_of("yara", live_only=True) if s.client_id == stale["oauth"]["client_id"]]


def test_a_refused_renewal_signs_out_and_keeps_the_share(new_session, oauth_homeserver):
    # Given Ferry signed in as Quinn with tokens that expire
    server, auth = oauth_homeserver, oauth_homeserver.auth
    auth.access_token_lifetime = LIFETIME
    session = new_session()
    browser_sign_in(session, server, "quinn")
    quinn_token, _ = auth.issue_token("quinn")
    room = server.synapse.create_room(quinn_token, name="Quinn's room")

    # When the authorization server ends Quinn's sessions (Ferry's too), and a text is shared after expiry
    auth.revoke_all("quinn")
    quinn_token, _ = auth.issue_token("quinn")
    time.sleep(LIFETIME + 1)
    share_id = session.share_ok(text="after a refused renewal", destinations=[room])

    # Then Ferry is signed out and the share waits for a sign-in
    wait_for_state(session, share_id, "awaiting-sign-in", timeout=30)
    assert not session.signed_in()
    # And once Quinn signs in again it goes out, once
    browser_sign_in(session, server, "quinn")
    wait_until_sent(session, [share_id])
    assert bodies(server.synapse.wait_for_messages(quinn_token, room, count=1)) == ["after a refused renewal"]


def test_signing_in_again_on_the_same_device_ends_the_old_session(new_session, oauth_homeserver):
    # Given Ferry signed in as Zoe through the OAuth API
    server, auth = oauth_homeserver, oauth_homeserver.auth
    session = new_session()
    session.start_keyring()
    first = browser_sign_in(session, server, "zoe")

    # When Zoe signs in again in the browser
    again = browser_sign_in(session, server, "zoe")

    # Then it is the same device, and only the new sign-in is live at the server (the old one is
    # ended after the answer)
    assert again["device-id"] == first["device-id"]
    [kept] = kept_oauth_pairs(session)

    def ferry_sessions():
        return [s for s in auth.sessions_of("zoe", live_only=True) if s.client_id != "harness"]

    wait_for(lambda: len(ferry_sessions()) == 1, timeout=30, what="the old sign-in ended")
    assert ferry_sessions()[0].client_id == kept["oauth"]["client_id"]
    assert whoami_status(server, kept["access_token"]) == 200
    assert again["device-id"] in {d["device_id"] for d in server.synapse.devices(f"@zoe:{server.server_name}")}


def test_an_error_other_than_no_is_the_sign_in_services_failure(new_session, oauth_homeserver):
    # Given an authorization server that sends errors back to the client, and a device id it refuses
    auth = oauth_homeserver.auth
    auth.redirect_errors = True
    session = new_session()
    install_oauth_browser(session, "ada")
    auth.refuse_scope = True

    # When Ferry signs in
    reply = sign_in_call(session, timeout=120, homeserver=oauth_homeserver.base_url, sso=True)

    # Then the person reads what the service said, not that they declined
    said = reply.expect_error("SignInFailed")
    assert "cannot be used" in said and "invalid_scope" in said, said


def test_create_account_opens_the_page_at_account_creation(new_session, oauth_homeserver):
    session = new_session()
    account = browser_sign_in(session, oauth_homeserver, "newcomer", create_account=True)
    assert oauth_homeserver.auth.authorizations[-1]["params"].get("prompt") == "create"
    assert account["user-id"] == f"@newcomer:{oauth_homeserver.server_name}"


def test_ferry_login_sso_takes_the_oauth_api(new_session, oauth_homeserver):
    session = new_session()
    install_oauth_browser(session, "rune")
    done = session.ferry("login", "--sso", "--homeserver", oauth_homeserver.base_url, timeout=120)
    assert done.returncode == EX_OK, done.stderr
    assert session.signed_in()
    assert oauth_homeserver.auth.authorizations[-1]["params"]["code_challenge_method"] == "S256"


def test_a_code_issued_for_another_verifier_signs_nobody_in(new_session, oauth_homeserver):
    # Given a browser that hands Ferry's listener a code of another authorization (another PKCE challenge)
    session = new_session()
    log = install_oauth_browser(session, "sam", tamper="foreign-code")

    # When Ferry signs in
    reply = sign_in_call(session, timeout=120, homeserver=oauth_homeserver.base_url, sso=True)

    # Then the token endpoint refused the exchange, and Ferry is signed in as nobody
    assert "browser" in reply.expect_error("SignInFailed")
    assert ("listener", "200") in browser_log(log)
    exchange = [r for r in oauth_homeserver.auth.token_requests if r["grant_type"] == "authorization_code"][-1]
    assert exchange.get("outcome") == "invalid_grant", exchange
    assert not session.signed_in()


def test_an_answer_with_another_state_is_refused_and_the_right_one_still_signs_in(new_session, oauth_homeserver):
    # Given a browser that comes back with a changed state first
    session = new_session()
    log = install_oauth_browser(session, "tia", tamper="state")
    pool = ThreadPoolExecutor(max_workers=1)
    call = pool.submit(sign_in_call, session, timeout=120, homeserver=oauth_homeserver.base_url, sso=True)

    # When the listener was sent the changed state
    wait_for(lambda: ("listener", "404") in browser_log(log), timeout=60, what="the tampered redirect")

    # Then it refused it, and the redirect with the state Ferry sent still signs Tia in
    opened = dict(browser_log(log))["opened"]
    state = urllib.parse.parse_qs(urllib.parse.urlparse(opened).query)["state"][0]
    tampered = urllib.parse.urlparse(dict(browser_log(log))["redirect"])
    query = urllib.parse.parse_qs(tampered.query)
    query["state"] = [state]
    right = tampered._replace(query=urllib.parse.urlencode({k: v[0] for k, v in query.items()})).geturl()
    assert urllib.request.urlopen(right, timeout=30).status == 200
    account = call.result(timeout=120).expect_ok()
    pool.shutdown()
    assert account["user-id"] == f"@tia:{oauth_homeserver.server_name}"


def test_a_declined_sign_in_says_so(new_session, oauth_homeserver):
    session = new_session()
    install_oauth_browser(session, "uma", deny=True)
    reply = sign_in_call(session, timeout=120, homeserver=oauth_homeserver.base_url, sso=True)
    assert "not allowed" in reply.expect_error("SignInFailed")
    assert not session.signed_in()


HOSTILE_METADATA = {
    "http issuer off loopback": {"issuer": "http://auth.example.org/"},
    "the real sign-in page with a token endpoint of its own": {"token_endpoint": "http://127.0.0.1:9/steal"},
    "the real sign-in page with an issuer of its own": {"issuer": "http://127.0.0.1:9/"},
    "authorization at a non-loopback http host": {"authorization_endpoint": "http://auth.example.org/authorize"},
    "token endpoint at a non-loopback http host": {"token_endpoint": "http://10.0.0.1/oauth2/token"},
    "no PKCE S256": {"code_challenge_methods_supported": ["plain"]},
}


@pytest.mark.parametrize("what", list(HOSTILE_METADATA))
def test_metadata_ferry_must_not_use_is_refused_before_anything_is_sent(what, new_session, oauth_homeserver,
                                                                       fake_front):
    # Given a homeserver whose metadata is hostile or incomplete
    front = fake_front(oauth_homeserver.auth)
    front.metadata = {**front.metadata, **HOSTILE_METADATA[what]}
    session = new_session()
    log = install_oauth_browser(session, "vic")
    registrations = len(oauth_homeserver.auth.registrations)

    # When Ferry is asked to sign in with the browser there
    reply = sign_in_call(session, timeout=60, homeserver=front.base_url, sso=True)

    # Then it says the sign-in service cannot be used, and neither registered nor opened the browser
    assert "cannot be used" in reply.expect_error("SignInFailed"), what
    assert len(oauth_homeserver.auth.registrations) == registrations
    assert not log.exists() or "opened" not in dict(browser_log(log))


def test_an_answer_from_another_issuer_than_the_metadata_names_is_refused(new_session, oauth_homeserver, fake_front):
    # Given metadata naming another issuer than the server that answers (mix-up, RFC 9207)
    front = fake_front(oauth_homeserver.auth)
    # (on the sign-in page's own server, as everything in the metadata must be, but another issuer)
    front.metadata = {**front.metadata, "issuer": oauth_homeserver.auth.issuer + "elsewhere/"}
    session = new_session()
    log = install_oauth_browser(session, "wes")
    exchanges = len([r for r in oauth_homeserver.auth.token_requests if r["grant_type"] == "authorization_code"])

    # When the person signs in there, and the authorization server sends the browser back naming itself
    reply = sign_in_call(session, timeout=120, homeserver=front.base_url, sso=True)

    # Then the code is never exchanged
    assert ("listener", "200") in browser_log(log)
    assert "not the server the homeserver names" in reply.expect_error("SignInFailed")
    assert len([r for r in oauth_homeserver.auth.token_requests if r["grant_type"] == "authorization_code"]) \
        == exchanges
    assert not session.signed_in()


def test_a_registration_without_a_client_id_is_refused(new_session, oauth_homeserver):
    oauth_homeserver.auth.registration_without_client_id = True
    session = new_session()
    log = install_oauth_browser(session, "xena")
    reply = sign_in_call(session, timeout=60, homeserver=oauth_homeserver.base_url, sso=True)
    assert "client id" in reply.expect_error("SignInFailed")
    assert not log.exists() or "opened" not in dict(browser_log(log))
