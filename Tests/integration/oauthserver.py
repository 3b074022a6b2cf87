"""A test OAuth 2.0 authorization server in front of a real Synapse that delegates its auth to it,
the way Synapse delegates to the Matrix Authentication Service (MAS): the Matrix OAuth 2.0 API of
spec v1.15 (server metadata, RFC 7591 registration, authorization code with PKCE S256 and a
loopback redirect, refresh-token rotation, RFC 7009 revocation), and the private side Synapse
talks to (token introspection, /_synapse/mas/ provisioning).

    auth = OAuthServer(synapse_url="http://127.0.0.1:8448", server_name="ferry.test").start()
    synapse = Homeserver(root, port=8448, config=auth.synapse_config()).start()
    token, device = auth.issue_token("alice")        # a session minted directly, for set-up
    ... a client registers, sends the browser to /authorize, exchanges the code ...
    auth.stop()

What Synapse 1.163 does with it (synapse/api/auth/mas.py, rest/synapse/mas/, config/mas.py):

- Metadata: it GETs {endpoint}/.well-known/openid-configuration on first need and keeps the answer
  for the life of the process (RetryOnExceptionCachedCall: only a failed fetch is tried again). It
  needs `issuer` and `account_management_uri` and passes every field through unchanged at
  /_matrix/client/v1/auth_metadata and /_matrix/client/unstable/org.matrix.msc2965/auth_metadata
  (with Cache-Control: public, max-age=600), and issuer/account in /.well-known/matrix/client under
  org.matrix.msc2965.authentication. So `metadata_overrides` reach Synapse's copy only if set
  before anything asked Synapse for them, or after `synapse.restart()`; for metadata that is bad
  from the start, point the client at a FakeFront instead.
- Introspection: POST {endpoint}/oauth2/introspect (the path is fixed, whatever the metadata says),
  Authorization: Bearer <secret>, form token=...&token_type_hint=access_token. Needs `active`,
  `scope` with urn:matrix:client:api:* (or the MSC2967 unstable name) and at most one
  urn:matrix:client:device:<id>, `username` (the localpart; the user must exist in Synapse) and, if
  given, `expires_in`; `device_id` is taken instead of the scope's when present. The device must
  exist in Synapse. A valid answer is cached for 2 minutes per token, with no setting to change
  that; but `expires_in` is checked against the time of the fetch on every request, so a token
  stops working at Synapse when it expires whatever the cache holds, and a cached token stops
  working as soon as its device is gone (Synapse looks the device up on every request and drops
  the cache entry). Hence revocation here deletes the device (/_synapse/mas/delete_device) and
  takes effect at once; an access token replaced by a refresh but already used keeps working until
  it expires or its 2 minutes run out, as with MAS.
- Provisioning: POST /_synapse/mas/provision_user {"localpart"} (201 created, 200 existed) and
  /_synapse/mas/upsert_device {"localpart", "device_id", "display_name"} (201/200), Bearer <secret>.
- Under delegation Synapse serves no /login, /logout, /register (nor the shared-secret admin
  registration), refuses password_config, enable_registration, SSO and login_via_existing_session,
  and treats a token whose scope has urn:synapse:admin:* as a server admin's.

Only the standard library, so what checks Ferry never shares Ferry's code (no authlib).
"""

from __future__ import annotations

import base64
import hashlib
import html
import http.server
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from homeserver import DEFAULT_SERVER_NAME, Homeserver, MatrixUser, _merge, free_port

API_SCOPE = "urn:matrix:client:api:*"
DEVICE_SCOPE_PREFIX = "urn:matrix:client:device:"
ADMIN_SCOPE = "urn:synapse:admin:*"
# What a client may ask for: the Matrix API, one device, and OpenID Connect's marker. Anything else
# (the unstable MSC2967 names, Synapse's admin scope) is invalid_scope.
ALLOWED_SCOPES = {API_SCOPE, "openid"}
# The brief's rule, stricter than the spec's unreserved characters: Ferry makes ids of these.
DEVICE_ID = re.compile(r"[A-Za-z0-9-]{10,}")
LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
# RFC 7636 §4.1: 43 to 128 unreserved characters.
CODE_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
# BASE64URL(SHA256(...)) without padding: always 43 characters.
S256_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")
LOCALPART = re.compile(r"[a-z0-9._=/+-]+")
HARNESS_CLIENT = "harness"

ACCOUNT_ACTIONS = ["org.matrix.profile", "org.matrix.sessions_list", "org.matrix.session_view",
                   "org.matrix.session_end", "org.matrix.account_deactivate", "org.matrix.cross_signing_reset"]


def s256(verifier: str) -> str:
    """RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))) without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).decode().rstrip("=")


def new_code_verifier() -> str:
    return secrets.token_urlsafe(48)


def is_loopback_redirect(uri: str) -> bool:
    """http to 127.0.0.1, [::1] or localhost, any port or none, no fragment or userinfo (RFC 8252 §7.3)."""
    try:
        parsed = urllib.parse.urlsplit(uri)
        parsed.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return False
    return (parsed.scheme == "http" and parsed.hostname in LOOPBACK_HOSTS and not parsed.fragment
            and parsed.username is None and parsed.password is None)


def redirect_matches(registered: str, requested: str) -> bool:
    """Exact match, except that a loopback redirect may come on any port (RFC 8252 §7.3): the
    client picks a free port when it listens."""
    if registered == requested:
        return True
    if not (is_loopback_redirect(registered) and is_loopback_redirect(requested)):
        return False
    a, b = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(requested)
    return (a.hostname, a.path or "/", a.query) == (b.hostname, b.path or "/", b.query)


def with_params(uri: str, params: dict[str, str], fragment: bool = False) -> str:
    """`uri` with `params` added to its query (or put in the fragment, response_mode=fragment)."""
    encoded = urllib.parse.urlencode(params)
    if fragment:
        return f"{uri}#{encoded}"
    return f"{uri}{'&' if urllib.parse.urlsplit(uri).query else '?'}{encoded}"


def _merge_over(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`overrides` over `base`; a value of None removes the key (e.g. a metadata field left out)."""
    merged = dict(base)
    for key, value in overrides.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


class OAuthError(Exception):
    """An OAuth error answer: {"error", "error_description"} with an HTTP status."""

    def __init__(self, error: str, description: str = "", status: int = 400):
        super().__init__(f"{error}: {description}")
        self.error, self.description, self.status = error, description, status


class PageError(Exception):
    """An error shown to the person in the browser (an HTML page), never sent to the client."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message, self.status = message, status


@dataclass
class Session:
    """One sign-in of one client on one device (MAS's OAuth 2.0 session)."""
    id: str
    client_id: str
    localpart: str
    device_id: str
    scope: str
    created_at: float = field(default_factory=time.time)
    revoked: bool = False
    revoked_why: str | None = None


@dataclass
class AccessToken:
    token: str
    session: Session
    expires_at: float | None  # None: never (minted for set-up by issue_token)
    issued_at: float = field(default_factory=time.time)
    revoked: bool = False
    used: bool = False  # introspected as active: Synapse has seen it, so the client has used it

    def live(self, now: float) -> bool:
        return not self.revoked and not self.session.revoked and (self.expires_at is None or now < self.expires_at)


@dataclass
class RefreshToken:
    token: str
    session: Session
    access: AccessToken  # the access token issued with it
    revoked: bool = False
    consumed: bool = False
    next: "RefreshToken | None" = None  # what spending it gave last


@dataclass
class AuthorizationCode:
    code: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    scope: str
    localpart: str
    device_id: str
    expires_at: float
    used: bool = False
    session: Session | None = None  # what the exchange made, ended if the code comes again


class OAuthServer:
    """The authorization server, threaded, on 127.0.0.1. Knobs (attributes; `reset_knobs()` puts
    them back):

    - `access_token_lifetime` (300 s): expires_in of access tokens from the token endpoint.
    - `code_lifetime` (600 s): how long an authorization code can be exchanged.
    - `metadata_overrides` ({}): merged over the discovery document (None removes a field).
    - `registration_without_client_id` (False): a 201 registration answer without client_id.
    - `token_overrides` ({}): merged over every successful token answer (None removes a field).
    - `redirect_errors` (False): /authorize errors other than a bad client or redirect_uri go back
      to the client as RFC 6749 §4.1.2.1 error redirects instead of an HTML 400 page.
    - `enforce_registered_grant_types` (True): like MAS, the refresh_token grant only for a client
      that registered it in grant_types (RFC 7591's default is ["authorization_code"]).
    - `refuse_scope` (False): every authorization is refused with invalid_scope (sent back to the
      client when `redirect_errors`).
    - `hold_refresh_answer` (None): a threading.Event; a refresh that rotated the pair waits for it
      before answering (its record gets "held": True), so a test can kill the client between the
      server's rotation and the client keeping the new pair.

    What happened, for tests to check: `registrations`, `authorizations` (each GET /authorize),
    `consents` (each POST /authorize), `token_requests`, `revocations`, `introspections`,
    `requests` ((method, path, status) of everything)."""

    def __init__(self, synapse_url: str, server_name: str = DEFAULT_SERVER_NAME, secret: str | None = None,
                 port: int = 0):
        self.synapse_url = synapse_url.rstrip("/")
        self.server_name = server_name
        self.secret = secret or secrets.token_urlsafe(32)
        self.port = port
        self.lock = threading.RLock()
        self.clients: dict[str, dict[str, Any]] = {}
        self.sessions: list[Session] = []
        self.codes: dict[str, AuthorizationCode] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.registrations: list[dict[str, Any]] = []
        self.authorizations: list[dict[str, Any]] = []
        self.consents: list[dict[str, Any]] = []
        self.token_requests: list[dict[str, Any]] = []
        self.revocations: list[dict[str, Any]] = []
        self.introspections: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str, int]] = []
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.reset_knobs()

    def reset_knobs(self) -> None:
        self.access_token_lifetime: float = 300
        self.code_lifetime: float = 600
        self.metadata_overrides: dict[str, Any] = {}
        self.registration_without_client_id = False
        self.token_overrides: dict[str, Any] = {}
        self.redirect_errors = False
        self.enforce_registered_grant_types = True
        self.hold_refresh_answer: threading.Event | None = None
        self.refuse_scope = False

    # -- where it is --

    @property
    def issuer(self) -> str:
        """http://127.0.0.1:PORT/ exactly as the metadata says it (and as `iss` in redirects)."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def base_url(self) -> str:
        return self.issuer.rstrip("/")

    def synapse_config(self) -> dict[str, Any]:
        """What Synapse's homeserver.yaml needs to delegate to this server (Homeserver(config=...))."""
        return {"matrix_authentication_service": {"enabled": True, "endpoint": self.issuer, "secret": self.secret}}

    def metadata(self) -> dict[str, Any]:
        """The discovery document (RFC 8414 and OpenID Connect Discovery), with the overrides."""
        issuer = self.issuer
        document = {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}authorize",
            "token_endpoint": f"{issuer}oauth2/token",
            "registration_endpoint": f"{issuer}oauth2/registration",
            "revocation_endpoint": f"{issuer}oauth2/revoke",
            "introspection_endpoint": f"{issuer}oauth2/introspect",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "fragment"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": ["openid", API_SCOPE],
            "prompt_values_supported": ["create"],
            "authorization_response_iss_parameter_supported": True,
            "account_management_uri": f"{issuer}account/",
            "account_management_actions_supported": list(ACCOUNT_ACTIONS),
        }
        return _merge_over(document, self.metadata_overrides)

    # -- lifecycle --

    def start(self) -> "OAuthServer":
        server = self
        if self._server is not None:
            return self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._dispatch(self, "GET")

            def do_POST(self) -> None:
                server._dispatch(self, "POST")

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="oauth-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._server = None

    def __enter__(self) -> "OAuthServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP --

    def _dispatch(self, handler: http.server.BaseHTTPRequestHandler, method: str) -> None:
        url = urllib.parse.urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        routes = {
            ("GET", "/.well-known/openid-configuration"): self._get_metadata,
            ("GET", "/.well-known/oauth-authorization-server"): self._get_metadata,
            ("POST", "/oauth2/registration"): self._post_registration,
            ("GET", "/authorize"): self._get_authorize,
            ("POST", "/authorize"): self._post_authorize,
            ("POST", "/oauth2/token"): self._post_token,
            ("POST", "/oauth2/revoke"): self._post_revoke,
            ("POST", "/oauth2/introspect"): self._post_introspect,
            ("GET", "/account/"): self._get_account,
        }
        route = routes.get((method, url.path))
        try:
            if route is None:
                status, headers, payload = 404, {"Content-Type": "application/json"}, \
                    json.dumps({"error": "not_found"}).encode()
            else:
                status, headers, payload = route(handler, url.query, body)
        except OAuthError as error:
            status, headers = error.status, {"Content-Type": "application/json", "Cache-Control": "no-store"}
            payload = json.dumps({"error": error.error, "error_description": error.description}).encode()
        except PageError as error:
            status, headers = error.status, {"Content-Type": "text/html; charset=utf-8"}
            payload = _page("Sign-in refused", f"<p>{html.escape(error.message)}</p>").encode()
        except Exception as error:  # a bug here, or Synapse refused provisioning: show it, don't hang
            status, headers = 500, {"Content-Type": "application/json"}
            payload = json.dumps({"error": "server_error", "error_description": repr(error)}).encode()
        with self.lock:
            self.requests.append((method, url.path, status))
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    @staticmethod
    def _json(status: int, document: Any) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "application/json", "Cache-Control": "no-store"}, json.dumps(document).encode()

    @staticmethod
    def _form(handler: http.server.BaseHTTPRequestHandler, body: bytes) -> dict[str, str]:
        """An application/x-www-form-urlencoded body; a parameter twice is invalid (RFC 6749 §3.1)."""
        content_type = (handler.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            raise OAuthError("invalid_request", f"expected a form body, got Content-Type {content_type!r}")
        return _single_values(urllib.parse.parse_qs(body.decode(errors="replace"), keep_blank_values=True))

    # -- discovery --

    def _get_metadata(self, handler, query, body):
        return self._json(200, self.metadata())

    def _get_account(self, handler, query, body):
        return 200, {"Content-Type": "text/html; charset=utf-8"}, \
            _page("Your account", "<p>Account management of the test authorization server.</p>").encode()

    # -- RFC 7591 dynamic client registration --

    def _post_registration(self, handler, query, body):
        record: dict[str, Any] = {"time": time.time(), "request": None}
        with self.lock:
            self.registrations.append(record)
        try:
            request = json.loads(body)
        except ValueError:
            record["outcome"] = "invalid_client_metadata"
            raise OAuthError("invalid_client_metadata", "the body is not JSON")
        record["request"] = request
        try:
            registered = self._check_registration(request)
        except OAuthError as error:
            record["outcome"] = error.error
            raise
        client_id = secrets.token_urlsafe(16)
        registered = {"client_id": client_id, "client_id_issued_at": int(time.time()), **registered}
        with self.lock:
            self.clients[client_id] = registered
        record["outcome"], record["client_id"] = "registered", client_id
        answer = dict(registered)
        if self.registration_without_client_id:
            del answer["client_id"]
        return self._json(201, answer)

    @staticmethod
    def _check_registration(request: Any) -> dict[str, Any]:
        """The Matrix spec's rules for a native client (v1.15 §client registration), strictly."""
        def bad(description: str, error: str = "invalid_client_metadata") -> OAuthError:
            return OAuthError(error, description)

        if not isinstance(request, dict):
            raise bad("the body is not a JSON object")
        if request.get("application_type") != "native":
            raise bad("application_type must be native")
        if request.get("token_endpoint_auth_method") != "none":
            raise bad("token_endpoint_auth_method must be none (a public client)")
        uris = request.get("redirect_uris")
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            raise bad("redirect_uris must be a non-empty list of strings", "invalid_redirect_uri")
        for uri in uris:
            if not is_loopback_redirect(uri):
                raise bad(f"not a loopback http redirect URI: {uri!r}", "invalid_redirect_uri")
        name = request.get("client_name")
        if not isinstance(name, str) or not name.strip():
            raise bad("client_name is required")
        client_uri = request.get("client_uri")
        parsed = urllib.parse.urlsplit(client_uri) if isinstance(client_uri, str) else None
        if parsed is None or parsed.scheme != "https" or not parsed.hostname:
            raise bad("client_uri must be an https URL")
        for key in ("logo_uri", "tos_uri", "policy_uri"):
            value = request.get(key)
            if value is None:
                continue
            other = urllib.parse.urlsplit(value) if isinstance(value, str) else None
            if other is None or other.scheme != "https" or not (
                    other.hostname == parsed.hostname or (other.hostname or "").endswith("." + parsed.hostname)):
                raise bad(f"{key} must be https on the client_uri's host or below it")
        grant_types = request.get("grant_types", ["authorization_code"])
        if (not isinstance(grant_types, list) or "authorization_code" not in grant_types
                or not set(grant_types) <= {"authorization_code", "refresh_token"}):
            raise bad(f"grant_types must be authorization_code and optionally refresh_token: {grant_types!r}")
        response_types = request.get("response_types", ["code"])
        if response_types != ["code"]:
            raise bad(f"response_types must be [\"code\"]: {response_types!r}")
        return {**request, "grant_types": grant_types, "response_types": response_types}

    # -- the authorization endpoint --

    def _check_authorization(self, params: dict[str, str]) -> tuple[dict[str, Any], str]:
        """The client and redirect_uri first (an error there is a page: never a redirect to a URI
        not known to be the client's), then the rest. Returns (client, device_id)."""
        client = self.clients.get(params.get("client_id", ""))
        if client is None:
            raise PageError(f"Unknown client_id {params.get('client_id')!r}.")
        redirect_uri = params.get("redirect_uri")
        if not redirect_uri or not any(redirect_matches(r, redirect_uri) for r in client["redirect_uris"]):
            raise PageError(f"redirect_uri {redirect_uri!r} is not one this client registered.")

        def fail(error: str, description: str) -> Exception:
            if self.redirect_errors:
                return _RedirectError(error, description)
            return PageError(f"{error}: {description}")

        if params.get("response_type") != "code":
            raise fail("unsupported_response_type", "response_type must be code")
        if params.get("response_mode", "query") not in ("query", "fragment"):
            raise fail("invalid_request", "response_mode must be query or fragment")
        if params.get("code_challenge_method") != "S256":
            raise fail("invalid_request", "code_challenge_method must be S256")
        if not S256_CHALLENGE.fullmatch(params.get("code_challenge", "")):
            raise fail("invalid_request", "code_challenge must be 43 base64url characters")
        scopes = params.get("scope", "").split(" ")
        if self.refuse_scope:
            raise fail("invalid_scope", "this server does not take that device")
        if API_SCOPE not in scopes:
            raise fail("invalid_scope", f"scope must contain {API_SCOPE}")
        devices = [s[len(DEVICE_SCOPE_PREFIX):] for s in scopes if s.startswith(DEVICE_SCOPE_PREFIX)]
        if len(devices) != 1:
            raise fail("invalid_scope", "scope must contain exactly one device")
        if not DEVICE_ID.fullmatch(devices[0]):
            raise fail("invalid_scope", "the device id must be 10 or more of A-Z a-z 0-9 -")
        unknown = [s for s in scopes if s not in ALLOWED_SCOPES and not s.startswith(DEVICE_SCOPE_PREFIX)]
        if unknown:
            raise fail("invalid_scope", f"unknown scope {unknown!r}")
        if "none" in params.get("prompt", "").split():
            raise fail("login_required", "prompt=none: nobody is signed in here")
        return client, devices[0]

    def _error_redirect(self, params: dict[str, str], error: str, description: str = ""):
        answer = {"error": error}
        if description:
            answer["error_description"] = description
        if "state" in params:
            answer["state"] = params["state"]
        answer["iss"] = self.issuer
        location = with_params(params["redirect_uri"], answer, params.get("response_mode") == "fragment")
        return 302, {"Location": location, "Cache-Control": "no-store"}, b""

    def _checked_authorization(self, params: dict[str, str], record: dict[str, Any]):
        """(client, device_id, None) for a request to go on with; (None, None, answer) for an
        error sent back to the client. A PageError (a request that must not be redirected) goes
        up. The outcome is noted in `record` either way."""
        try:
            client, device_id = self._check_authorization(params)
        except PageError as error:
            record["outcome"] = f"page: {error.message}"
            raise
        except _RedirectError as error:
            record["outcome"] = f"redirect: {error.error}"
            return None, None, self._error_redirect(params, error.error, error.description)
        return client, device_id, None

    def _get_authorize(self, handler, query, body):
        params = _single_values(urllib.parse.parse_qs(query, keep_blank_values=True))
        record = {"time": time.time(), "params": params, "prompt": params.get("prompt"),
                  "state": params.get("state")}
        with self.lock:
            self.authorizations.append(record)
        client, device_id, sent_back = self._checked_authorization(params, record)
        if sent_back is not None:
            return sent_back
        record["outcome"] = "consent page"
        create = "create" in params.get("prompt", "").split()
        hidden = "\n".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                           for k, v in params.items())
        heading = "Create account" if create else "Sign in"
        content = f"""<p>{html.escape(client['client_name'])} wants to use your Matrix account on
this device ({html.escape(device_id)}).</p>
<form method="post" action="/authorize">
{hidden}
<label>Username <input type="text" name="username" autocomplete="username"></label>
<button type="submit" name="action" value="allow">{heading}</button>
<button type="submit" name="deny" value="1">Deny</button>
</form>"""
        return 200, {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"}, \
            _page(heading, content).encode()

    def _post_authorize(self, handler, query, body):
        content_type = (handler.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            raise PageError("The form came back in a shape no browser sends.")
        params = _single_values(urllib.parse.parse_qs(body.decode(errors="replace"), keep_blank_values=True))
        username = params.pop("username", "").strip()
        deny = params.pop("deny", "") == "1"
        params.pop("action", None)
        record = {"time": time.time(), "params": params, "username": username, "deny": deny}
        with self.lock:
            self.consents.append(record)
        client, device_id, sent_back = self._checked_authorization(params, record)
        if sent_back is not None:
            return sent_back
        if deny:
            record["outcome"] = "access_denied"
            return self._error_redirect(params, "access_denied", "the person said no")
        localpart = self._localpart(username)
        if localpart is None:
            record["outcome"] = "page: bad username"
            raise PageError(f"Not a username: {username!r}.")
        self.provision(localpart, device_id, client["client_name"])
        code = AuthorizationCode(code=secrets.token_urlsafe(32), client_id=client["client_id"],
                                 redirect_uri=params["redirect_uri"], code_challenge=params["code_challenge"],
                                 scope=params["scope"], localpart=localpart, device_id=device_id,
                                 expires_at=time.time() + self.code_lifetime)
        with self.lock:
            self.codes[code.code] = code
        record["outcome"], record["code"] = "code", code.code
        answer = {"code": code.code}
        if "state" in params:
            answer["state"] = params["state"]
        answer["iss"] = self.issuer
        location = with_params(params["redirect_uri"], answer, params.get("response_mode") == "fragment")
        return 302, {"Location": location, "Cache-Control": "no-store"}, b""

    def _localpart(self, username: str) -> str | None:
        """A localpart from what the person typed: 'alice' or '@alice:server'."""
        if username.startswith("@"):
            localpart, _, server = username[1:].partition(":")
            if server != self.server_name:
                return None
            username = localpart
        return username if LOCALPART.fullmatch(username) else None

    # -- the token endpoint --

    def _post_token(self, handler, query, body):
        record: dict[str, Any] = {"time": time.time(), "grant_type": None, "params": None}
        with self.lock:
            self.token_requests.append(record)
        try:
            params = self._form(handler, body)
            record["params"], record["grant_type"] = params, params.get("grant_type")
            if handler.headers.get("Authorization"):
                raise OAuthError("invalid_client", "a public client sends no Authorization", 401)
            client = self.clients.get(params.get("client_id", ""))
            if client is None:
                raise OAuthError("invalid_client", "unknown client_id", 401)
            grant_type = params.get("grant_type")
            if grant_type not in ("authorization_code", "refresh_token"):
                raise OAuthError("unsupported_grant_type", f"{grant_type!r}")
            if self.enforce_registered_grant_types and grant_type not in client["grant_types"]:
                raise OAuthError("unauthorized_client", f"the client did not register the {grant_type} grant")
            if grant_type == "authorization_code":
                answer, revoke = self._exchange_code(client, params)
            else:
                answer, revoke = self._refresh(client, params)
        except OAuthError as error:
            record["outcome"] = error.error
            raise
        if revoke is not None:
            self._end_session(revoke, "a spent grant came again")
            record["outcome"] = "invalid_grant"
            raise OAuthError("invalid_grant", "this grant was used already; its session is ended")
        record["outcome"] = "ok"
        hold = self.hold_refresh_answer
        if hold is not None and record["grant_type"] == "refresh_token":
            record["held"] = True
            hold.wait(timeout=120)
        return self._json(200, _merge_over(answer, self.token_overrides))

    def _exchange_code(self, client, params) -> tuple[dict[str, Any], Session | None]:
        for key in ("code", "redirect_uri", "code_verifier"):
            if not params.get(key):
                raise OAuthError("invalid_request", f"{key} is required")
        with self.lock:
            code = self.codes.get(params["code"])
            if code is None:
                raise OAuthError("invalid_grant", "unknown code")
            if code.used:
                # RFC 6749 §4.1.2: a code used twice ends what its first use gave.
                if code.session is not None:
                    return {}, code.session
                raise OAuthError("invalid_grant", "the code was used already")
            if code.client_id != client["client_id"]:
                raise OAuthError("invalid_grant", "the code was issued to another client")
            if params["redirect_uri"] != code.redirect_uri:
                raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
            if time.time() > code.expires_at:
                raise OAuthError("invalid_grant", "the code expired")
            if not CODE_VERIFIER.fullmatch(params["code_verifier"]) or s256(params["code_verifier"]) != code.code_challenge:
                raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge")
            code.used = True
            session = Session(id=secrets.token_hex(8), client_id=client["client_id"], localpart=code.localpart,
                              device_id=code.device_id, scope=code.scope)
            self.sessions.append(session)
            code.session = session
            return self._new_pair(session), None

    def _refresh(self, client, params) -> tuple[dict[str, Any], Session | None]:
        """Rotation with MAS's grace: a spent refresh token is taken again (and what it gave last
        is withdrawn) while the access token it gave last is unused; once that was used, or its
        refresh token spent, presenting it again is reuse and ends the session."""
        if not params.get("refresh_token"):
            raise OAuthError("invalid_request", "refresh_token is required")
        with self.lock:
            refresh = self.refresh_tokens.get(params["refresh_token"])
            if refresh is None or refresh.revoked or refresh.session.revoked:
                raise OAuthError("invalid_grant", "unknown or revoked refresh token")
            if refresh.session.client_id != client["client_id"]:
                raise OAuthError("invalid_grant", "the refresh token was issued to another client")
            if "scope" in params and not set(params["scope"].split()) <= set(refresh.session.scope.split()):
                raise OAuthError("invalid_scope", "a refresh cannot widen the scope")
            if refresh.consumed:
                successor = refresh.next
                if successor is not None and (successor.consumed or successor.access.used):
                    return {}, refresh.session
                if successor is not None:
                    successor.revoked = successor.access.revoked = True
            answer = self._new_pair(refresh.session)
            refresh.consumed = True
            refresh.next = self.refresh_tokens[answer["refresh_token"]]
            return answer, None

    def _new_pair(self, session: Session) -> dict[str, Any]:
        """A new access and refresh token of the session (the lock is held)."""
        now = time.time()
        access = AccessToken("mat_" + secrets.token_urlsafe(24), session, now + self.access_token_lifetime, now)
        refresh = RefreshToken("mar_" + secrets.token_urlsafe(24), session, access)
        self.access_tokens[access.token] = access
        self.refresh_tokens[refresh.token] = refresh
        return {"access_token": access.token, "token_type": "Bearer", "expires_in": int(self.access_token_lifetime),
                "refresh_token": refresh.token, "scope": session.scope}

    # -- RFC 7009 revocation --

    def _post_revoke(self, handler, query, body):
        record: dict[str, Any] = {"time": time.time(), "params": None}
        with self.lock:
            self.revocations.append(record)
        try:
            params = self._form(handler, body)
            record["params"] = params
            if not params.get("token"):
                raise OAuthError("invalid_request", "token is required")
            if not params.get("client_id"):
                # A public client identifies itself by client_id (RFC 7009 §2.1, RFC 6749 §2.3); MAS refuses without.
                raise OAuthError("invalid_request", "client_id is required")
        except OAuthError as error:
            record["outcome"] = error.error
            raise
        with self.lock:
            found = self.access_tokens.get(params["token"]) or self.refresh_tokens.get(params["token"])
            session = found.session if found is not None else None
            # As the Matrix Authentication Service does: a token that is no longer valid (a spent
            # refresh token, an expired access token) is unknown, answered 200, and nothing is ended.
            spent = isinstance(found, RefreshToken) and found.consumed
            expired = isinstance(found, AccessToken) and not found.live(time.time())
        if session is None or spent or expired:
            record["outcome"] = "unknown token" if session is None else "spent token: nothing ended"
            return 200, {"Cache-Control": "no-store"}, b""
        if session.client_id != params["client_id"]:
            # RFC 7009 §2.1: a token of another client is refused, not revoked.
            record["outcome"] = "unauthorized_client"
            raise OAuthError("unauthorized_client", "the token was not issued to this client")
        self._end_session(session, "revoked")
        record["outcome"], record["session"] = "revoked", session.id
        return 200, {"Cache-Control": "no-store"}, b""

    def _end_session(self, session: Session, why: str) -> None:
        """Every token of the session dies; its device goes from Synapse unless another live
        session holds it (deleting the device is what makes Synapse drop cached introspections)."""
        with self.lock:
            if session.revoked:
                return
            session.revoked, session.revoked_why = True, why
            for access in self.access_tokens.values():
                if access.session is session:
                    access.revoked = True
            for refresh in self.refresh_tokens.values():
                if refresh.session is session:
                    refresh.revoked = True
            shared = any(not s.revoked and s.localpart == session.localpart and s.device_id == session.device_id
                         for s in self.sessions)
        if not shared:
            self.synapse_call("/_synapse/mas/delete_device",
                              {"localpart": session.localpart, "device_id": session.device_id})

    # -- introspection, for Synapse --

    def _post_introspect(self, handler, query, body):
        if handler.headers.get("Authorization") != f"Bearer {self.secret}":
            raise OAuthError("invalid_client", "introspection is for the homeserver", 401)
        params = self._form(handler, body)
        now = time.time()
        with self.lock:
            access = self.access_tokens.get(params.get("token", ""))
            active = access is not None and access.live(now)
            self.introspections.append({"time": now, "token": params.get("token"), "active": active})
            if not active:
                return self._json(200, {"active": False})
            access.used = True
            session = access.session
            answer = {"active": True, "scope": session.scope, "client_id": session.client_id,
                      "username": session.localpart, "sub": f"@{session.localpart}:{self.server_name}",
                      "token_type": "access_token", "iat": int(access.issued_at), "device_id": session.device_id}
            if access.expires_at is not None:
                # Synapse checks this against the time of the fetch on every request (cached or not).
                answer["expires_in"] = max(0, int(access.expires_at - now))
                answer["exp"] = int(access.expires_at)
        return self._json(200, answer)

    # -- the Synapse side --

    def synapse_call(self, path: str, body: dict[str, Any]) -> int:
        """POST to Synapse's /_synapse/mas/ API with the shared secret; returns the status
        (a 404 of delete_device for a user or device already gone is fine)."""
        request = urllib.request.Request(self.synapse_url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Authorization": f"Bearer {self.secret}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status
        except urllib.error.HTTPError as error:
            with error:
                text = error.read().decode(errors="replace")
            if error.code == 404 and path.endswith("delete_device"):
                return 404
            raise RuntimeError(f"Synapse refused {path} {body!r}: {error.code} {text}") from None

    def provision(self, localpart: str, device_id: str, display_name: str | None = None) -> None:
        """The user (made if new; idempotent) and the device, in Synapse."""
        self.synapse_call("/_synapse/mas/provision_user", {"localpart": localpart})
        device: dict[str, Any] = {"localpart": localpart, "device_id": device_id}
        if display_name:
            device["display_name"] = display_name
        self.synapse_call("/_synapse/mas/upsert_device", device)

    # -- helpers for tests --

    def issue_token(self, localpart: str, device_id: str | None = None, admin: bool = False) -> tuple[str, str]:
        """A session minted directly (no client, no browser): the user and device are provisioned
        and the access token never expires. With `admin`, the scope has urn:synapse:admin:*, which
        Synapse takes for a server admin. Returns (access_token, device_id)."""
        device_id = device_id or "HARNESS" + secrets.token_hex(4).upper()
        self.provision(localpart, device_id, "harness")
        scope = f"{API_SCOPE} {DEVICE_SCOPE_PREFIX}{device_id}" + (f" {ADMIN_SCOPE}" if admin else "")
        with self.lock:
            session = Session(id=secrets.token_hex(8), client_id=HARNESS_CLIENT, localpart=localpart,
                              device_id=device_id, scope=scope)
            self.sessions.append(session)
            access = AccessToken("mat_" + secrets.token_urlsafe(24), session, None)
            self.access_tokens[access.token] = access
        return access.token, device_id

    def sessions_of(self, localpart: str, live_only: bool = False) -> list[Session]:
        with self.lock:
            return [s for s in self.sessions if s.localpart == localpart and not (live_only and s.revoked)]

    def revoke_all(self, localpart: str) -> int:
        """Ends every live session of the user (as signing out everywhere would); returns how many."""
        ended = self.sessions_of(localpart, live_only=True)
        for session in ended:
            self._end_session(session, "revoke_all")
        return len(ended)

    def access_token_info(self, token: str) -> AccessToken | None:
        with self.lock:
            return self.access_tokens.get(token)


class _RedirectError(Exception):
    def __init__(self, error: str, description: str):
        super().__init__(error)
        self.error, self.description = error, description


def _single_values(parsed: dict[str, list[str]]) -> dict[str, str]:
    repeated = [k for k, v in parsed.items() if len(v) != 1]
    if repeated:
        raise OAuthError("invalid_request", f"parameters given more than once: {repeated!r}")
    return {k: v[0] for k, v in parsed.items()}


def _page(title: str, content: str) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head>\n"
            f"<body><h1>{html.escape(title)}</h1>\n{content}\n</body></html>\n")


# -- a Synapse delegating to the server --------------------------------------------------------------

class DelegatedHomeserver:
    """A real Synapse (`synapse`, a started Homeserver) whose auth is delegated to `auth` (an
    OAuthServer). Synapse's shared-secret registration is off under delegation, so users are made
    here, through the authorization server; `synapse`'s admin calls (devices(), revoke_device())
    work with an admin token minted the same way."""

    def __init__(self, synapse: Homeserver, auth: OAuthServer):
        self.synapse, self.auth = synapse, auth
        # Homeserver.admin_token would register through the shared secret: hand it one of ours.
        synapse._admin_token = auth.issue_token(f"harness-admin-{secrets.token_hex(4)}", admin=True)[0]

    @property
    def base_url(self) -> str:
        return self.synapse.base_url

    @property
    def server_name(self) -> str:
        return self.synapse.server_name

    def new_user(self, prefix: str = "user", admin: bool = False) -> MatrixUser:
        """A fresh account with a unique name and a session on a device of its own:
        MatrixUser(user_id, password="", token) (there are no passwords under delegation)."""
        localpart = f"{prefix}-{secrets.token_hex(5)}"
        token, _ = self.auth.issue_token(localpart, admin=admin)
        return MatrixUser(self.synapse.user_id(localpart), "", token)

    def log_tail(self, lines: int = 40) -> str:
        seen = "\n".join(f"{m} {p} → {s}" for m, p, s in self.auth.requests[-lines:])
        return f"{self.synapse.log_tail(lines)}\n--- authorization server requests ---\n{seen}"

    def stop(self) -> None:
        self.synapse.stop()
        self.auth.stop()


def start_delegated_homeserver(root, **settings: Any) -> DelegatedHomeserver:
    """An OAuthServer and a Synapse delegating to it. Synapse's port is chosen first (the server
    calls Synapse's provisioning API), the server started, then Synapse told where it is.
    `settings` go to Homeserver (config= is merged over the delegation's)."""
    port = settings.pop("port", 0) or free_port()
    server_name = settings.get("server_name", DEFAULT_SERVER_NAME)
    auth = OAuthServer(synapse_url=f"http://127.0.0.1:{port}", server_name=server_name).start()
    try:
        config = _merge(auth.synapse_config(), settings.pop("config", {}))
        synapse = Homeserver(root=root, port=port, config=config, **settings).start()
    except BaseException:
        auth.stop()
        raise
    return DelegatedHomeserver(synapse, auth)


# -- a front whose metadata is whatever the test says -------------------------------------------------

class FakeFront:
    """A 'homeserver' that only answers discovery, for metadata that is bad before any Synapse is
    involved: GET /_matrix/client/versions (`versions`), /_matrix/client/v3/login (`login_flows`),
    and the auth metadata at /_matrix/client/v1/auth_metadata and
    /_matrix/client/unstable/org.matrix.msc2965/auth_metadata: `metadata` (any JSON value, or bytes
    sent as they are) with `metadata_status`; `stable_path` / `unstable_path` False make that path
    404 M_UNRECOGNIZED (an older server serving only the unstable one). With `auth`, `metadata`
    starts as that server's document, so registration, /authorize and the token endpoint are the
    real OAuthServer's. Everything else is 404 M_UNRECOGNIZED. `requests` lists (method, path)."""

    def __init__(self, auth: OAuthServer | None = None):
        self.auth = auth
        self.metadata: Any = auth.metadata() if auth is not None else {}
        self.metadata_status = 200
        self.stable_path = True
        self.unstable_path = True
        self.versions = ["v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.7", "v1.8", "v1.9", "v1.10",
                         "v1.11", "v1.12", "v1.13", "v1.14", "v1.15"]
        self.login_flows: list[dict[str, Any]] = [{"type": "m.login.sso"}, {"type": "m.login.token"}]
        self.requests: list[tuple[str, str]] = []
        self._server: http.server.ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FakeFront":
        front = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = urllib.parse.urlsplit(self.path).path
                front.requests.append(("GET", path))
                status, payload = front._answer(path)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                front.requests.append(("POST", urllib.parse.urlsplit(self.path).path))
                payload = json.dumps({"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}).encode()
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-front", daemon=True).start()
        return self

    def _answer(self, path: str) -> tuple[int, bytes]:
        unrecognized = 404, json.dumps({"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}).encode()
        if path == "/_matrix/client/versions":
            return 200, json.dumps({"versions": self.versions, "unstable_features": {}}).encode()
        if path == "/_matrix/client/v3/login":
            return 200, json.dumps({"flows": self.login_flows}).encode()
        stable = path == "/_matrix/client/v1/auth_metadata"
        unstable = path == "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata"
        if (stable and self.stable_path) or (unstable and self.unstable_path):
            payload = self.metadata if isinstance(self.metadata, bytes) else json.dumps(self.metadata).encode()
            return self.metadata_status, payload
        return unrecognized

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeFront":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
