"""Signing in through the browser (m.login.sso): Ferry listens on a one-time loopback address,
opens the desktop's browser at the homeserver's SSO page, and exchanges the loginToken the
homeserver sends back for a session (m.login.token).

The browser is a stand-in registered as the desktop's handler for http: URLs; it does what the
homeserver's SSO page does after a person signs in: it asks the homeserver for a real single-use
login token (for an existing session, MSC3882 / login/get_token) and sends the browser to the
redirect URL Ferry gave, with that token. Synapse offers m.login.sso because CAS is configured
(at an address nobody serves: the stand-in never goes there).
"""

from __future__ import annotations

import sys
import textwrap
import urllib.parse

from gi.repository import GLib

from matrixflow import get_property, sign_in, sign_in_call

SSO_CONFIG = {
    "cas_config": {"enabled": True, "server_url": "http://127.0.0.1:9/cas"},
    "login_via_existing_session": {"enabled": True, "require_ui_auth": False, "token_timeout": "5m"},
}


def install_stand_in_browser(session, server, token: str):
    """Registers a 'browser' for http: that finishes the SSO dance as the homeserver would; it
    records each URL it was opened with in browser.log."""
    log = session.root / "browser.log"
    script = session.root / "browser.py"
    script.write_text(textwrap.dedent(f"""\
        import json, sys, urllib.parse, urllib.request
        url = sys.argv[1]
        open({str(log)!r}, "a").write(url + "\\n")
        redirect = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["redirectUrl"][0]
        request = urllib.request.Request({server.base_url!r} + "/_matrix/client/v1/login/get_token", data=b"{{}}",
                                         method="POST", headers={{"Authorization": "Bearer {token}",
                                                                  "Content-Type": "application/json"}})
        login_token = json.load(urllib.request.urlopen(request))["login_token"]
        separator = "&" if "?" in redirect else "?"
        urllib.request.urlopen(redirect + separator + "loginToken=" + urllib.parse.quote(login_token)).read()
        """))
    applications = session.root / "data" / "applications"
    applications.mkdir(parents=True, exist_ok=True)
    (applications / "stand-in-browser.desktop").write_text(textwrap.dedent(f"""\
        [Desktop Entry]
        Type=Application
        Name=Stand-in browser
        Exec={sys.executable} {script} %u
        MimeType=x-scheme-handler/http;x-scheme-handler/https;
        """))
    for scheme in ("http", "https"):
        session.run("xdg-mime", "default", "stand-in-browser.desktop", f"x-scheme-handler/{scheme}")
    return log


def test_sign_in_with_the_browser_uses_a_loopback_redirect_and_the_login_token(new_session, new_homeserver):
    # Given a homeserver that offers SSO, and a person who signs in there in the browser
    server = new_homeserver(config=SSO_CONFIG)
    user = server.new_user("sso")
    session = new_session()
    browser_log = install_stand_in_browser(session, server, user.token)

    # When Ferry is asked to sign in through the browser
    reply = sign_in_call(session, timeout=120, homeserver=server.base_url, sso=True)

    # Then it opened the homeserver's SSO page with a one-time loopback redirect
    [opened] = browser_log.read_text().splitlines()
    parsed = urllib.parse.urlparse(opened)
    assert parsed.path == "/_matrix/client/v3/login/sso/redirect", opened
    redirect = urllib.parse.urlparse(urllib.parse.parse_qs(parsed.query)["redirectUrl"][0])
    assert redirect.scheme == "http" and redirect.hostname == "127.0.0.1" and redirect.port, redirect
    # And it is signed in as that person, on a device of its own
    account = reply.expect_ok()
    assert account["user-id"] == user.user_id, account
    assert get_property(session, "SignedIn") is True
    assert account["device-id"] in {d["device_id"] for d in server.devices(user.user_id)}


def test_the_login_flows_say_sso_when_the_server_offers_it(new_session, new_homeserver):
    server = new_homeserver(config=SSO_CONFIG)
    session = new_session()
    [flows] = session.gdbus_call("GetLoginFlows", GLib.Variant("s", server.base_url)).expect_ok()
    assert flows["sso"] is True and flows["password"] is True, flows


def test_browser_sign_in_on_a_server_without_sso_is_unsupported_login(new_session, homeserver):
    session = new_session()
    reply = sign_in_call(session, homeserver=homeserver.base_url, sso=True)
    assert "browser" in reply.expect_error("UnsupportedLogin")


def install_browser_after_a_forger(session, server, token: str, attacker_token: str):
    """A 'browser' as above, but before it follows the redirect, another local program (the forger)
    hands Ferry's loopback port a valid login token for the attacker's account: on the old fixed
    path, on the right path without the state, and with the right path and state but another Host.
    What the forger got back is recorded in forger.log."""
    log = session.root / "forger.log"
    script = session.root / "forging-browser.py"
    script.write_text(textwrap.dedent(f"""\
        import http.client, json, sys, urllib.parse, urllib.request
        url = sys.argv[1]
        redirect = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["redirectUrl"][0]
        parsed = urllib.parse.urlparse(redirect)
        def token_for(bearer):
            request = urllib.request.Request({server.base_url!r} + "/_matrix/client/v1/login/get_token", data=b"{{}}",
                                             method="POST", headers={{"Authorization": "Bearer " + bearer,
                                                                      "Content-Type": "application/json"}})
            return json.load(urllib.request.urlopen(request))["login_token"]
        forged = token_for({attacker_token!r})
        attempts = [("/ferry-sso?loginToken=" + forged, parsed.netloc),
                    (parsed.path + "?loginToken=" + forged, parsed.netloc),
                    (parsed.path + "?" + parsed.query + "&loginToken=" + forged, "evil.example"),
                    (parsed.path + "?state=guess&loginToken=" + forged, parsed.netloc)]
        with open({str(log)!r}, "a") as out:
            for path, host in attempts:
                connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
                connection.request("GET", path, headers={{"Host": host}})
                out.write(str(connection.getresponse().status) + "\\n")
                connection.close()
        urllib.request.urlopen(redirect + "&loginToken=" + urllib.parse.quote(token_for({token!r}))).read()
        """))
    applications = session.root / "data" / "applications"
    applications.mkdir(parents=True, exist_ok=True)
    (applications / "forging-browser.desktop").write_text(textwrap.dedent(f"""\
        [Desktop Entry]
        Type=Application
        Name=Forging browser
        Exec={sys.executable} {script} %u
        MimeType=x-scheme-handler/http;x-scheme-handler/https;
        """))
    for scheme in ("http", "https"):
        session.run("xdg-mime", "default", "forging-browser.desktop", f"x-scheme-handler/{scheme}")
    return log


def test_a_login_token_forged_by_another_local_program_is_never_used(new_session, new_homeserver):
    # Given a homeserver with SSO, the person, and an attacker with an account of their own
    server = new_homeserver(config=SSO_CONFIG)
    person, attacker = server.new_user("ssoperson"), server.new_user("ssoattacker")
    session = new_session()
    forger_log = install_browser_after_a_forger(session, server, person.token, attacker.token)
    attacker_devices = {d["device_id"] for d in server.devices(attacker.user_id)}

    # When Ferry waits for the browser, and another program sends the attacker's token to its port first
    reply = sign_in_call(session, timeout=120, homeserver=server.base_url, sso=True)

    # Then every forged request was refused, and Ferry is signed in as the person, not the attacker
    assert forger_log.read_text().split() == ["404", "404", "404", "404"], forger_log.read_text()
    account = reply.expect_ok()
    assert account["user-id"] == person.user_id, account
    assert {d["device_id"] for d in server.devices(attacker.user_id)} == attacker_devices, "a forged token was used"


def test_a_browser_sign_in_keeps_the_device_of_the_one_account_there_and_never_another_persons(
        new_session, new_homeserver):
    # Given a homeserver that offers SSO, and Ferry signed in there as Ann (with a password)
    server = new_homeserver(config=SSO_CONFIG)
    ann, cy = server.new_user("ann"), server.new_user("cy")
    session = new_session()
    install_stand_in_browser(session, server, ann.token)
    ann_device = sign_in(session, server, ann)["device-id"]

    # When Ann signs in again through the browser (Ferry cannot know beforehand who will)
    again = sign_in_call(session, timeout=120, homeserver=server.base_url, sso=True).expect_ok()

    # Then it is the same device: the one account on that server, whose keys Ferry keeps
    assert again["user-id"] == ann.user_id and again["device-id"] == ann_device, again

    # Given Cy signed in too, on the same server (Synapse mints one login token a minute per person:
    # this time the browser signs Cy in)
    cy_device = sign_in(session, server, cy)["device-id"]
    install_stand_in_browser(session, server, cy.token)

    # When Cy signs in again through the browser
    third = sign_in_call(session, timeout=120, homeserver=server.base_url, sso=True).expect_ok()

    # Then it is a new device of Cy's: with two accounts there, neither one's device is guessed
    assert third["user-id"] == cy.user_id, third
    assert third["device-id"] not in (ann_device, cy_device), third
    assert third["device-id"] in {d["device_id"] for d in server.devices(cy.user_id)}
    # And Ann stays signed in on her own device
    assert sorted(get_property(session, "Accounts")) == sorted([ann.user_id, cy.user_id])
    assert ann_device in {d["device_id"] for d in server.devices(ann.user_id)}
