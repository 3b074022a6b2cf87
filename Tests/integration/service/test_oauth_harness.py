"""The OAuth 2.0 harness on its own, without Ferry: a real Synapse that delegates its auth to the test
authorization server (oauthserver.py), driven by a client written here in plain Python, and the
stand-in browser (oauthbrowser.py) run by hand. What Ferry's sign-in tests rely on is shown here
first: discovery through Synapse, registration, the code flow with PKCE, tokens that Synapse
accepts, rotation with MAS's reuse rule, revocation, and the refusals.

What the delegated Synapse (1.163) offers for signing in: nothing of its own. GET and POST
/_matrix/client/v3/login answer 404 M_UNRECOGNIZED (the login servlet is not registered under
delegation: no password, SSO or token flows; MAS serves /login itself, in front of Synapse, for
older clients, and this harness does not), and so do /logout and the shared-secret admin
registration. Sign-in is only through the authorization server named in
/_matrix/client/v1/auth_metadata.
"""

from __future__ import annotations

import contextlib
import html.parser
import http.server
import json
import subprocess
import sys
import threading
import time
import types
import urllib.error
import urllib.parse
import urllib.request

import pytest

from oauthbrowser import browser_log, install_oauth_browser
from oauthserver import API_SCOPE, DEVICE_SCOPE_PREFIX, new_code_verifier, s256

CLIENT = {
    "application_type": "native",
    "token_endpoint_auth_method": "none",
    "client_name": "Ferry harness",
    "client_uri": "https://ferry.example/",
    "redirect_uris": ["http://127.0.0.1/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
}


# -- a client in plain Python --

class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def http_request(url: str, *, form: dict | None = None, json_body=None, headers: dict | None = None):
    """(status, headers, body) of one request; never follows a redirect, never raises on a status."""
    data, all_headers = None, dict(headers or {})
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        all_headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif json_body is not None:
        data = json.dumps(json_body).encode()
        all_headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=all_headers)
    try:
        with OPENER.open(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


def register(auth, **changes) -> dict:
    status, _, body = http_request(auth.metadata()["registration_endpoint"], json_body={**CLIENT, **changes})
    assert status == 201, body
    return json.loads(body)


def new_device() -> str:
    return "FERRYTEST" + new_code_verifier()[:8].upper().replace("_", "-")


def authorization_url(auth, client_id: str, *, redirect_uri: str, challenge: str, device: str,
                      state: str = "state-1", **extra: str) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
              "scope": f"{API_SCOPE} {DEVICE_SCOPE_PREFIX}{device}", "state": state,
              "code_challenge": challenge, "code_challenge_method": "S256", **extra}
    return auth.metadata()["authorization_endpoint"] + "?" + urllib.parse.urlencode(params)


def consent(auth, url: str, username: str, deny: bool = False) -> tuple[str, dict[str, str]]:
    """What a person does at the page: GET it, post the form back; returns the 302's Location and
    its query."""
    status, _, page = http_request(url)
    assert status == 200, page
    fields = dict(_hidden_inputs(page.decode()))
    fields.update({"deny": "1"} if deny else {"username": username, "action": "allow"})
    status, headers, body = http_request(auth.metadata()["authorization_endpoint"], form=fields)
    assert status == 302, body
    location = headers["Location"]
    return location, dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))


def _hidden_inputs(page: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    class Form(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "input" and attrs.get("type") == "hidden":
                found.append((attrs["name"], attrs.get("value") or ""))

    Form().feed(page)
    return found


def token_request(auth, form: dict) -> tuple[int, dict]:
    status, _, body = http_request(auth.metadata()["token_endpoint"], form=form)
    return status, json.loads(body)


def sign_in(auth, username: str, client: dict | None = None, port: int = 54321):
    """The whole code flow; returns (client, device, token answer)."""
    client = client or register(auth)
    verifier, device = new_code_verifier(), new_device()
    redirect_uri = f"http://127.0.0.1:{port}/callback"
    _, query = consent(auth, authorization_url(auth, client["client_id"], redirect_uri=redirect_uri,
                                               challenge=s256(verifier), device=device), username)
    status, answer = token_request(auth, {"grant_type": "authorization_code", "code": query["code"],
                                          "redirect_uri": redirect_uri, "code_verifier": verifier,
                                          "client_id": client["client_id"]})
    assert status == 200, answer
    return client, device, answer


def refresh(auth, client: dict, refresh_token: str) -> tuple[int, dict]:
    return token_request(auth, {"grant_type": "refresh_token", "refresh_token": refresh_token,
                                "client_id": client["client_id"]})


def whoami_status(pair, token: str) -> int:
    return pair.synapse.request("GET", "/_matrix/client/v3/account/whoami", token).status


# -- discovery --

def test_synapse_serves_the_servers_metadata_on_both_paths_and_keeps_its_first_copy(new_oauth_homeserver):
    # Given a Synapse delegating to the test server
    pair = new_oauth_homeserver()
    auth, synapse = pair.auth, pair.synapse

    # Then both the stable and the unstable (MSC2965) path serve the server's own document
    stable = synapse.call("GET", "/_matrix/client/v1/auth_metadata")
    unstable = synapse.call("GET", "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata")
    assert stable == unstable == auth.metadata(), stable
    assert stable["issuer"] == auth.issuer == f"http://127.0.0.1:{auth.port}/"
    # And the client well-known names the issuer too (MSC2965's older discovery)
    well_known = synapse.call("GET", "/.well-known/matrix/client")
    assert well_known["org.matrix.msc2965.authentication"] == {"issuer": auth.issuer,
                                                                "account": f"{auth.issuer}account/"}

    # When the server's metadata changes
    auth.metadata_overrides = {"registration_endpoint": None, "prompt_values_supported": ["login"]}
    # Then Synapse keeps serving the copy it fetched first, for as long as it runs
    assert synapse.call("GET", "/_matrix/client/v1/auth_metadata") == stable
    # And after a restart it serves the new one (a field set to None is left out)
    synapse.restart()
    changed = synapse.call("GET", "/_matrix/client/v1/auth_metadata")
    assert "registration_endpoint" not in changed and changed["prompt_values_supported"] == ["login"], changed
    assert sum(1 for m, p, _ in auth.requests if p == "/.well-known/openid-configuration") == 2


def test_the_delegated_synapse_offers_no_login_of_its_own(oauth_homeserver):
    synapse = oauth_homeserver.synapse
    for method in ("GET", "POST"):
        answer = synapse.request(method, "/_matrix/client/v3/login", json_body={} if method == "POST" else None)
        assert answer.status == 404 and answer.json()["errcode"] == "M_UNRECOGNIZED", (method, answer)
    assert synapse.request("GET", "/_synapse/admin/v1/register").status == 404


def test_a_fake_front_serves_whatever_metadata_the_test_sets(oauth_homeserver, fake_front):
    front = fake_front(oauth_homeserver.auth)
    base = front.base_url
    assert "v1.15" in json.loads(http_request(base + "/_matrix/client/versions")[2])["versions"]
    assert {"type": "m.login.sso"} in json.loads(http_request(base + "/_matrix/client/v3/login")[2])["flows"]
    assert json.loads(http_request(base + "/_matrix/client/v1/auth_metadata")[2]) == oauth_homeserver.auth.metadata()

    # An older server: the unstable path only
    front.stable_path = False
    status, _, body = http_request(base + "/_matrix/client/v1/auth_metadata")
    assert status == 404 and json.loads(body)["errcode"] == "M_UNRECOGNIZED"
    assert http_request(base + "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata")[0] == 200

    # Anything at all
    front.stable_path, front.metadata = True, b"{not json"
    assert http_request(base + "/_matrix/client/v1/auth_metadata")[2] == b"{not json"


# -- registration --

def test_registration_takes_a_native_public_client_with_loopback_redirects_only(oauth_homeserver):
    auth = oauth_homeserver.auth
    answer = register(auth, redirect_uris=["http://127.0.0.1/callback", "http://[::1]:8080/cb",
                                           "http://localhost/cb"])
    assert answer["client_id"] and answer["token_endpoint_auth_method"] == "none", answer
    assert auth.registrations[-1]["outcome"] == "registered"

    endpoint = auth.metadata()["registration_endpoint"]
    for changes, error in [({"redirect_uris": ["https://ferry.example/cb"]}, "invalid_redirect_uri"),
                           ({"redirect_uris": ["http://127.0.0.1/cb#frag"]}, "invalid_redirect_uri"),
                           ({"redirect_uris": []}, "invalid_redirect_uri"),
                           ({"client_uri": "http://ferry.example/"}, "invalid_client_metadata"),
                           ({"application_type": "web"}, "invalid_client_metadata"),
                           ({"token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"),
                           ({"client_name": ""}, "invalid_client_metadata"),
                           ({"logo_uri": "https://elsewhere.example/logo.png"}, "invalid_client_metadata")]:
        status, _, body = http_request(endpoint, json_body={**CLIENT, **changes})
        assert (status, json.loads(body)["error"]) == (400, error), (changes, body)

    # The hostile knob: a 201 without a client_id
    auth.registration_without_client_id = True
    status, _, body = http_request(endpoint, json_body=CLIENT)
    assert status == 201 and "client_id" not in json.loads(body), body


# -- the code flow --

def test_the_code_flow_with_pkce_signs_in_on_the_device_named_in_the_scope(oauth_homeserver):
    # Given a registered client (its redirect registered without a port)
    pair = oauth_homeserver
    auth = pair.auth
    client = register(auth)
    verifier, device = new_code_verifier(), new_device()
    redirect_uri = "http://127.0.0.1:54321/callback"
    url = authorization_url(auth, client["client_id"], redirect_uri=redirect_uri, challenge=s256(verifier),
                            device=device, state="s-42", prompt="create")

    # When the person opens the authorization URL (the loopback port may differ: RFC 8252 §7.3)
    status, headers, page = http_request(url)
    # Then it is a consent page whose form carries the request, and says "Create account" (prompt=create)
    assert status == 200 and headers["Content-Type"].startswith("text/html"), page
    assert b'<form method="post" action="/authorize">' in page and b"Create account" in page
    assert dict(_hidden_inputs(page.decode()))["code_challenge"] == s256(verifier)
    assert auth.authorizations[-1]["prompt"] == "create"

    # When they sign in as a new user
    localpart = f"oauth-{device.lower()}"
    location, query = consent(auth, url, localpart)
    # Then the browser goes to the loopback redirect with the code, the state and the issuer (RFC 9207)
    assert location.startswith(redirect_uri + "?"), location
    assert query["state"] == "s-42" and query["iss"] == auth.issuer and query["code"], query

    # When the client exchanges the code with its verifier
    status, answer = token_request(auth, {"grant_type": "authorization_code", "code": query["code"],
                                          "redirect_uri": redirect_uri, "code_verifier": verifier,
                                          "client_id": client["client_id"]})
    assert status == 200, answer
    assert answer["token_type"] == "Bearer" and answer["expires_in"] == 300 and answer["refresh_token"]
    assert answer["scope"] == f"{API_SCOPE} {DEVICE_SCOPE_PREFIX}{device}"

    # Then Synapse takes the token: it is that user on that device
    user_id = f"@{localpart}:{pair.server_name}"
    assert pair.synapse.whoami(answer["access_token"]) == {"user_id": user_id, "device_id": device,
                                                            "is_guest": False}
    [listed] = [d for d in pair.synapse.devices(user_id) if d["device_id"] == device]
    assert listed["display_name"] == "Ferry harness"
    # And the user can do what a user does
    assert pair.synapse.create_room(answer["access_token"], name="Through OAuth").startswith("!")

    # And the code is single-use: again, it is invalid_grant and what it gave is ended (RFC 6749 §4.1.2)
    status, again = token_request(auth, {"grant_type": "authorization_code", "code": query["code"],
                                         "redirect_uri": redirect_uri, "code_verifier": verifier,
                                         "client_id": client["client_id"]})
    assert (status, again["error"]) == (400, "invalid_grant"), again
    assert whoami_status(pair, answer["access_token"]) == 401


def test_a_wrong_code_verifier_or_redirect_uri_is_invalid_grant(oauth_homeserver):
    auth = oauth_homeserver.auth
    client = register(auth)
    verifier = new_code_verifier()
    redirect_uri = "http://127.0.0.1:40000/callback"
    _, query = consent(auth, authorization_url(auth, client["client_id"], redirect_uri=redirect_uri,
                                               challenge=s256(verifier), device=new_device()), "verifier-user")
    exchange = {"grant_type": "authorization_code", "code": query["code"], "redirect_uri": redirect_uri,
                "code_verifier": verifier, "client_id": client["client_id"]}
    for changes in ({"code_verifier": new_code_verifier()}, {"code_verifier": "short"},
                    {"redirect_uri": "http://127.0.0.1:40001/callback"}):
        status, answer = token_request(auth, {**exchange, **changes})
        assert (status, answer["error"]) == (400, "invalid_grant"), (changes, answer)
    status, answer = token_request(auth, {**exchange, "client_id": "nobody"})
    assert (status, answer["error"]) == (401, "invalid_client"), answer
    assert [r["outcome"] for r in auth.token_requests[-4:]] == ["invalid_grant"] * 3 + ["invalid_client"]


def test_a_bad_client_or_redirect_uri_at_authorize_is_a_page_never_a_redirect(oauth_homeserver):
    auth = oauth_homeserver.auth
    client = register(auth)
    challenge = s256(new_code_verifier())
    for client_id, redirect_uri in [(client["client_id"], "http://127.0.0.1:5000/elsewhere"),
                                    (client["client_id"], "http://evil.example/callback"),
                                    (client["client_id"], "http://127.0.0.2/callback"),
                                    ("unknown-client", "http://127.0.0.1/callback")]:
        status, headers, page = http_request(authorization_url(auth, client_id, redirect_uri=redirect_uri,
                                                               challenge=challenge, device=new_device()))
        assert status == 400 and "Location" not in headers and headers["Content-Type"].startswith("text/html"), \
            (redirect_uri, status, page)
        assert auth.authorizations[-1]["outcome"].startswith("page:")


def test_the_scope_must_name_one_well_formed_device_and_pkce_is_required(oauth_homeserver):
    auth = oauth_homeserver.auth
    client = register(auth)
    redirect_uri = "http://127.0.0.1:5000/callback"
    good = dict(redirect_uri=redirect_uri, challenge=s256(new_code_verifier()), device=new_device())
    bad_requests = [
        {"scope": f"{API_SCOPE} {DEVICE_SCOPE_PREFIX}SHORT"},
        {"scope": f"{API_SCOPE} {DEVICE_SCOPE_PREFIX}{new_device()} {DEVICE_SCOPE_PREFIX}{new_device()}"},
        {"scope": f"{DEVICE_SCOPE_PREFIX}{new_device()}"},
        {"scope": f"{API_SCOPE} {DEVICE_SCOPE_PREFIX}{new_device()} urn:synapse:admin:*"},
        {"code_challenge_method": "plain"},
        {"response_type": "token"},
    ]
    for extra in bad_requests:
        status, headers, _ = http_request(authorization_url(auth, client["client_id"], **good, **extra))
        assert status == 400 and "Location" not in headers, extra

    # With redirect_errors, the same goes back to the client as an RFC 6749 error redirect
    auth.redirect_errors = True
    status, headers, _ = http_request(authorization_url(auth, client["client_id"], **good, **bad_requests[0]))
    assert status == 302, status
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(headers["Location"]).query))
    assert query["error"] == "invalid_scope" and query["state"] == "state-1" and query["iss"] == auth.issuer


def test_a_person_who_says_no_sends_access_denied_back(oauth_homeserver):
    auth = oauth_homeserver.auth
    client = register(auth)
    location, query = consent(auth, authorization_url(auth, client["client_id"],
                                                      redirect_uri="http://127.0.0.1:6000/callback",
                                                      challenge=s256(new_code_verifier()), device=new_device()),
                              "nobody", deny=True)
    assert location.startswith("http://127.0.0.1:6000/callback?"), location
    assert query["error"] == "access_denied" and query["state"] == "state-1" and "code" not in query, query


# -- refresh, reuse, revocation, expiry --

def test_refresh_rotates_and_a_spent_token_after_its_successor_was_used_ends_the_session(oauth_homeserver):
    # Given a signed-in client whose token Synapse has seen
    pair = oauth_homeserver
    client, device, first = sign_in(pair.auth, "rotating")
    assert whoami_status(pair, first["access_token"]) == 200

    # When it refreshes
    status, second = refresh(pair.auth, client, first["refresh_token"])
    # Then it gets a new pair, and the new access token works
    assert status == 200, second
    assert second["access_token"] != first["access_token"] and second["refresh_token"] != first["refresh_token"]
    assert pair.synapse.whoami(second["access_token"])["device_id"] == device
    # And the old access token, already used, still works at Synapse: its introspection is cached
    # (2 minutes, or less if it expires sooner), as with MAS
    assert whoami_status(pair, first["access_token"]) == 200

    # When the spent refresh token comes again after the new access token was used
    status, answer = refresh(pair.auth, client, first["refresh_token"])
    # Then it is reuse: invalid_grant, and the whole session is ended, at Synapse at once (its device is deleted)
    assert (status, answer["error"]) == (400, "invalid_grant"), answer
    assert whoami_status(pair, second["access_token"]) == 401
    assert whoami_status(pair, first["access_token"]) == 401
    assert refresh(pair.auth, client, second["refresh_token"])[1]["error"] == "invalid_grant"
    [session] = [s for s in pair.auth.sessions_of("rotating") if s.device_id == device]
    assert session.revoked


def test_a_spent_refresh_token_is_taken_again_while_its_successor_is_unused(oauth_homeserver):
    # Given a refresh whose answer was lost (the client never used it)
    pair = oauth_homeserver
    client, device, first = sign_in(pair.auth, "lost-answer")
    status, lost = refresh(pair.auth, client, first["refresh_token"])
    assert status == 200, lost

    # When the client refreshes with the spent token again
    status, retried = refresh(pair.auth, client, first["refresh_token"])
    # Then it gets a fresh pair that works, and the lost pair is withdrawn
    assert status == 200, retried
    assert pair.synapse.whoami(retried["access_token"])["device_id"] == device
    assert whoami_status(pair, lost["access_token"]) == 401
    assert refresh(pair.auth, client, lost["refresh_token"])[1]["error"] == "invalid_grant"
    # And the new refresh token rotates on
    status, third = refresh(pair.auth, client, retried["refresh_token"])
    assert status == 200 and whoami_status(pair, third["access_token"]) == 200
    assert [r["grant_type"] for r in pair.auth.token_requests[-4:]] == ["refresh_token"] * 4


def test_the_refresh_grant_is_only_for_a_client_that_registered_it(oauth_homeserver):
    auth = oauth_homeserver.auth
    client, _, first = sign_in(auth, "no-refresh", client=register(auth, grant_types=["authorization_code"]))
    status, answer = refresh(auth, client, first["refresh_token"])
    assert (status, answer["error"]) == (400, "unauthorized_client"), answer


def test_revocation_ends_the_session_at_synapse_at_once(oauth_homeserver):
    # Given a signed-in client whose token Synapse has seen (and cached)
    pair = oauth_homeserver
    client, device, tokens = sign_in(pair.auth, "revoking")
    user_id = f"@revoking:{pair.server_name}"
    assert whoami_status(pair, tokens["access_token"]) == 200
    revoke = pair.auth.metadata()["revocation_endpoint"]

    # A token of another client, or no client_id, is refused and revokes nothing
    assert http_request(revoke, form={"token": tokens["refresh_token"], "client_id": register(pair.auth)["client_id"]})[0] == 400
    assert http_request(revoke, form={"token": tokens["refresh_token"]})[0] == 400
    assert whoami_status(pair, tokens["access_token"]) == 200

    # When it revokes its refresh token (RFC 7009)
    status, _, _ = http_request(revoke, form={"token": tokens["refresh_token"], "token_type_hint": "refresh_token",
                                              "client_id": client["client_id"]})
    assert status == 200
    # Then the session is over at Synapse at once, cache or not: the device is gone
    assert whoami_status(pair, tokens["access_token"]) == 401
    assert device not in {d["device_id"] for d in pair.synapse.devices(user_id)}
    assert refresh(pair.auth, client, tokens["refresh_token"])[1]["error"] == "invalid_grant"
    assert pair.auth.revocations[-1]["outcome"] == "revoked"
    # And an unknown token is 200 too
    assert http_request(revoke, form={"token": "mat_nothing", "client_id": client["client_id"]})[0] == 200


def test_an_expired_access_token_stops_working_though_synapse_cached_it(oauth_homeserver):
    pair = oauth_homeserver
    pair.auth.access_token_lifetime = 3
    client, _, tokens = sign_in(pair.auth, "expiring")
    assert tokens["expires_in"] == 3
    assert whoami_status(pair, tokens["access_token"]) == 200
    time.sleep(3.2)
    assert whoami_status(pair, tokens["access_token"]) == 401
    # Synapse asked once: the cached answer's expires_in ended it, not a second introspection
    asked = [i for i in pair.auth.introspections if i["token"] == tokens["access_token"]]
    assert [i["active"] for i in asked] == [True], asked
    # And a refresh brings a working token back
    status, fresh = refresh(pair.auth, client, tokens["refresh_token"])
    assert status == 200 and whoami_status(pair, fresh["access_token"]) == 200


def test_tokens_minted_for_set_up_and_revoke_all(oauth_homeserver):
    pair = oauth_homeserver
    alice = pair.new_user("alice")
    localpart = alice.user_id[1:].split(":")[0]
    second, device = pair.auth.issue_token(localpart, device_id="SECONDDEVICE")
    assert pair.synapse.whoami(second) == {"user_id": alice.user_id, "device_id": "SECONDDEVICE", "is_guest": False}
    assert len(pair.auth.sessions_of(localpart, live_only=True)) == 2
    assert pair.auth.revoke_all(localpart) == 2
    assert whoami_status(pair, alice.token) == whoami_status(pair, second) == 401


# -- the stand-in browser, run by hand --

@contextlib.contextmanager
def loopback_listener():
    """A stand-in for Ferry's listener: records each request's path and query and answers 200."""
    heard: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            heard.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b"signed in")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], heard
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("tamper", [None, "state", "foreign-code", "no-follow", "deny"])
def test_the_stand_in_browser_brings_the_answer_to_the_loopback_listener(oauth_homeserver, tmp_path, tamper):
    # Given the browser installed in a 'session' that records how it is registered
    auth = oauth_homeserver.auth
    registered: list[tuple] = []
    session = types.SimpleNamespace(root=tmp_path, run=lambda *command: registered.append(command))
    log = install_oauth_browser(session, "browsing", deny=tamper == "deny",
                                tamper=None if tamper == "deny" else tamper)
    assert registered == [("xdg-mime", "default", "oauth-browser.desktop", f"x-scheme-handler/{s}")
                          for s in ("http", "https")]
    client = register(auth)
    verifier = new_code_verifier()

    with loopback_listener() as (port, heard):
        redirect_uri = f"http://127.0.0.1:{port}/callback"
        url = authorization_url(auth, client["client_id"], redirect_uri=redirect_uri, challenge=s256(verifier),
                                device=new_device(), state="state-9")
        # When it is opened at the authorization URL
        subprocess.run([sys.executable, str(tmp_path / "oauth-browser.py"), url], check=True, timeout=60)

    steps = browser_log(log)
    assert steps[:2] == [("opened", url), ("consent", "200")], steps
    if tamper == "no-follow":
        assert steps[-1][0] == "redirect" and heard == [], steps
        return
    # Then the listener heard the redirect, and the log says what it answered
    assert steps[-1] == ("listener", "200") and len(heard) == 1, steps
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(heard[0]).query))
    assert query["iss"] == auth.issuer
    if tamper == "deny":
        assert query["error"] == "access_denied" and query["state"] == "state-9"
        return
    assert query["state"] == ("tampered-state-9" if tamper == "state" else "state-9"), query
    status, answer = token_request(auth, {"grant_type": "authorization_code", "code": query["code"],
                                          "redirect_uri": redirect_uri, "code_verifier": verifier,
                                          "client_id": client["client_id"]})
    if tamper == "foreign-code":
        # The code came from another authorization with another challenge: our verifier cannot redeem it
        assert ("foreign-code", query["code"]) in steps
        assert (status, answer["error"]) == (400, "invalid_grant"), answer
    else:
        assert status == 200, answer
