"""A stand-in browser for signing in through the Matrix OAuth 2.0 API: registered in a Ferry test
session as the desktop's handler for http: and https: URLs (as test_sso.py's is), it does what a
person does at the authorization server's consent page (oauthserver.OAuthServer) and then goes
where the server sends it: to Ferry's loopback listener.

    log = install_oauth_browser(session, "alice")
    ... Ferry opens the authorization URL, gets the code at its listener, exchanges it ...
    assert browser_log(log)[-1] == ("listener", "200")

The script is self-contained (stdlib only, run by sys.executable). It never follows a redirect by
itself: it reads the server's 302 Location and, unless told to tamper, GETs it. Each step is one
line in the log, "<what> <value>":

    opened <the URL it was opened with>
    consent <status of GET /authorize: 200 for the page, 302 for an error sent back, 400 refused>
    foreign-code <a code of a second authorization of the script's own>   (tamper="foreign-code")
    redirect <the Location it follows, after tampering>
    listener <status of what the listener answered>
    error <what went wrong, if anything did>

`tamper`: "state" changes the state value before following; "foreign-code" swaps in a code the
server issued for another authorization (same client and redirect, another code_challenge) that the
script ran itself; "no-follow" stops before the listener (the log's last line is then "redirect").
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

TAMPERING = (None, "state", "foreign-code", "no-follow")

SCRIPT = '''\
import base64, hashlib, html.parser, secrets, sys, urllib.error, urllib.parse, urllib.request

LOG, USERNAME, DENY, TAMPER = {log!r}, {username!r}, {deny!r}, {tamper!r}


def log(what, value):
    with open(LOG, "a") as out:
        out.write(f"{{what}} {{value}}\\n")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def fetch(url, form=None):
    """(status, Location or None, body) without following redirects."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data)
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with OPENER.open(request, timeout=30) as answer:
            return answer.status, answer.headers.get("Location"), answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers.get("Location"), error.read()


class Form(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.action, self.fields = None, {{}}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attrs.get("action") or ""
        elif tag == "input" and attrs.get("type") == "hidden" and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""


def authorize(url, record):
    """The consent page, answered: returns the Location the server sends the browser to."""
    status, location, body = fetch(url)
    if record:
        log("consent", status)
    if 300 <= status < 400 and location:
        return location
    if status != 200:
        raise SystemExit(f"the authorization page answered {{status}}: {{body[:300]!r}}")
    form = Form()
    form.feed(body.decode("utf-8", "replace"))
    if form.action is None:
        raise SystemExit("no form on the authorization page")
    fields = dict(form.fields)
    if DENY:
        fields["deny"] = "1"
    else:
        fields["username"], fields["action"] = USERNAME, "allow"
    status, location, body = fetch(urllib.parse.urljoin(url, form.action), fields)
    if not (300 <= status < 400 and location):
        raise SystemExit(f"the consent form answered {{status}}: {{body[:300]!r}}")
    return location


def replace_param(url, name, value):
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True) if k != name]
    query.append((name, value))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def main():
    url = sys.argv[1]
    log("opened", url)
    location = authorize(url, record=True)
    if TAMPER == "state":
        state = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query)).get("state", "")
        location = replace_param(location, "state", "tampered-" + state)
    elif TAMPER == "foreign-code":
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        other = replace_param(replace_param(url, "code_challenge", challenge), "state", secrets.token_urlsafe(12))
        other_location = authorize(other, record=False)
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(other_location).query)).get("code")
        if not code:
            raise SystemExit(f"the second authorization gave no code: {{other_location}}")
        log("foreign-code", code)
        location = replace_param(location, "code", code)
    log("redirect", location)
    if TAMPER == "no-follow":
        return
    status, _, _ = fetch(location)
    log("listener", status)


try:
    main()
except BaseException as error:
    log("error", repr(error).replace("\\n", " "))
    raise
'''


def write_oauth_browser(script: Path, log: Path, username: str, *, deny: bool = False,
                        tamper: str | None = None) -> Path:
    """Writes the browser script (run as `python script URL`); returns the script's path."""
    if tamper not in TAMPERING:
        raise ValueError(f"tamper must be one of {TAMPERING}, not {tamper!r}")
    script.write_text(SCRIPT.format(log=str(log), username=username, deny=deny, tamper=tamper))
    return script


def install_oauth_browser(session, username: str, *, deny: bool = False, tamper: str | None = None) -> Path:
    """Registers the stand-in browser as the session's http:/https: handler; it signs in as
    `username` (or, with `deny`, refuses). Returns the log's path (see browser_log)."""
    log = session.root / "oauth-browser.log"
    script = write_oauth_browser(session.root / "oauth-browser.py", log, username, deny=deny, tamper=tamper)
    applications = session.root / "data" / "applications"
    applications.mkdir(parents=True, exist_ok=True)
    (applications / "oauth-browser.desktop").write_text(textwrap.dedent(f"""\
        [Desktop Entry]
        Type=Application
        Name=Stand-in OAuth browser
        Exec={sys.executable} {script} %u
        MimeType=x-scheme-handler/http;x-scheme-handler/https;
        """))
    for scheme in ("http", "https"):
        session.run("xdg-mime", "default", "oauth-browser.desktop", f"x-scheme-handler/{scheme}")
    return log


def browser_log(log: Path) -> list[tuple[str, str]]:
    """The log's lines as (what, value); [] before the browser ran."""
    if not log.exists():
        return []
    return [tuple(line.split(" ", 1)) if " " in line else (line, "") for line in log.read_text().splitlines()]
