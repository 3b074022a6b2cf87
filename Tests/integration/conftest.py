"""Fixtures: Ferry installed in a prefix (FERRY_PREFIX), and private desktop sessions around it.

`bus` is one session shared by a test module (tests there must not depend on the service being
cold or on the share count); `fresh_bus` is a session of its own for tests that kill, restart or
cold-start the service; `new_session(**env)` makes sessions with a special environment.

A real Synapse (homeserver.py): `homeserver` is one server for the whole run (never stop or kill
it; make users and rooms of your own with `matrix_user()`); `fresh_homeserver` is one of the test's
own, to stop, kill and restart; `new_homeserver(max_upload_size=..., rate_limits=..., config=...)`
makes servers with a special configuration.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cryptopeers import PEERS, Probe
from ferryenv import APP_ID, FerrySession
from homeserver import Homeserver, HomeserverError, MatrixUser
from hostileproxy import HostileProxy
from matrixflow import sign_in_call
from nioreaders import NioReader, reader_python


def pytest_configure(config: pytest.Config) -> None:
    # Debian 12's pyatspi calls the AT-SPI functions that newer libatspi deprecated: its warnings,
    # not Ferry's, and a green run should print none.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:pyatspi")


REQUIRED_TOOLS = ("dbus-daemon", "dbus-monitor", "gdbus", "busctl", "gio", "gapplication", "xdg-open",
                  "xdg-mime", "update-desktop-database")


@pytest.fixture(scope="session")
def prefix() -> Path:
    value = os.environ.get("FERRY_PREFIX")
    if not value:
        pytest.fail("FERRY_PREFIX is not set: run `make install PREFIX=/some/dir` and then "
                    "`FERRY_PREFIX=/some/dir python -m pytest Tests/integration` (make check does both)",
                    pytrace=False)
    root = Path(value).resolve()
    expected = [
        root / "bin" / "ferry",
        root / "share" / "applications" / f"{APP_ID}.desktop",
        root / "share" / "dbus-1" / "services" / f"{APP_ID}.service",
    ]
    missing = [str(p) for p in expected if not p.exists()]
    if missing:
        pytest.fail(f"FERRY_PREFIX={root} is not a Ferry install; missing: {', '.join(missing)}", pytrace=False)
    if not os.access(root / "bin" / "ferry", os.X_OK):
        pytest.fail(f"{root / 'bin' / 'ferry'} is not executable", pytrace=False)
    absent = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
    if absent:
        pytest.fail(f"tools the integration tests drive are not installed: {', '.join(absent)}", pytrace=False)
    # GIO finds handlers for a type through mimeinfo.cache, which `make install` may not write.
    subprocess.run(["update-desktop-database", str(root / "share" / "applications")], check=True, timeout=60)
    return root


@pytest.fixture(scope="session")
def new_session(prefix, tmp_path_factory):
    """Makes private sessions: new_session(FERRY_MAX_ITEMS="3", wrapper=[...]). Each is stopped
    when the test run ends, or earlier by its owner."""
    sessions: list[FerrySession] = []

    def make(wrapper=(), root: Path | None = None, **env: str) -> FerrySession:
        session = FerrySession(prefix=prefix, root=root or tmp_path_factory.mktemp("session"),
                               extra_env=env, wrapper=tuple(wrapper))
        sessions.append(session)
        return session.start()

    yield make
    for session in sessions:
        session.stop()


@pytest.fixture(scope="module")
def bus(new_session):
    session = new_session()
    yield session
    session.stop()


@pytest.fixture
def fresh_bus(new_session):
    session = new_session()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def new_homeserver(tmp_path_factory):
    """Makes Synapse servers: new_homeserver(max_upload_size="64K", rate_limits={"rc_message":
    {"per_second": 1, "burst_count": 2}}, config={...}). Each is stopped when the test run ends, or
    earlier by its owner. A server that cannot start fails the test with its log."""
    servers: list[Homeserver] = []

    def make(**settings) -> Homeserver:
        server = Homeserver(root=tmp_path_factory.mktemp("synapse"), **settings)
        servers.append(server)
        try:
            return server.start()
        except HomeserverError as error:
            pytest.fail(str(error), pytrace=False)

    yield make
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def homeserver(new_homeserver) -> Homeserver:
    """The run's shared Synapse, started once. Tests share it: leave it running."""
    return new_homeserver()


@pytest.fixture
def fresh_homeserver(new_homeserver):
    """A Synapse of this test's own, for tests that stop, kill or restart it."""
    server = new_homeserver()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def matrix_user(homeserver):
    """matrix_user() registers a user with a unique name on the shared server (or on `server`)
    and signs it in: MatrixUser(user_id, password, token)."""

    def make(prefix: str = "user", server: Homeserver | None = None, admin: bool = False) -> MatrixUser:
        return (server or homeserver).new_user(prefix, admin=admin)

    return make


@pytest.fixture
def through_proxy(new_session, homeserver):
    """through_proxy(user=..., room=..., **env) -> (session, user, room, proxy): a Ferry (with `env`)
    signed in as a new user through a HostileProxy in front of the shared Synapse, and a room of that
    user's. Sessions and proxies are stopped after the test, however it ends."""
    made = []

    def make(user: str = "proxied", room: str = "Through a proxy", **env):
        proxy = HostileProxy(homeserver).start()
        made.append(proxy)
        account = homeserver.new_user(user)
        session = new_session(**env)
        made.append(session)
        sign_in_call(session, homeserver=proxy.base_url, user=account.user_id, password=account.password).expect_ok()
        return session, account, homeserver.create_room(account.token, name=room), proxy

    yield make
    for part in reversed(made):
        part.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On failure, show the end of each session's log: the bus and the activated service write
    there (FERRY_LOG=debug)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, FerrySession):
                report.sections.append((f"log of session '{name}' ({value.log_path})", value.log_tail()))
            elif isinstance(value, Homeserver):
                report.sections.append((f"log of homeserver '{name}' ({value.root})", value.log_tail(40)))


# ferry-ui's tests share one display and accessibility bus (AT-SPI connects once per process).
from uidesktop import desktop, ui  # noqa: E402,F401


@pytest.fixture
def probe():
    """FerryCrypto behind ferry-crypto-probe (cryptopeers.Probe), ended after the test."""
    running = Probe()
    yield running
    running.close()


@pytest.fixture(params=PEERS, ids=lambda peer: peer.name)
def peer(request):
    """An Olm/Megolm implementation we did not write: each test runs once with libolm, once with vodozemac."""
    return request.param()


@pytest.fixture
def nio_reader(homeserver: Homeserver, tmp_path):
    """nio_reader(kind, user) starts a reader signed in as a new device of `user`; all are
    closed after the test, and a failing test shows the end of each one's log."""
    started: list[NioReader] = []

    def make(kind: str, user: MatrixUser) -> NioReader:
        store = tmp_path / f"{kind}-{user.user_id[1:].split(':')[0]}-{len(started)}"
        reader = NioReader(reader_python(kind), store, homeserver.base_url, user.user_id, user.password)
        started.append(reader)
        return reader

    yield make
    for reader in started:
        reader.close()


@pytest.fixture(scope="module")
def second_homeserver(new_homeserver):
    """A Synapse of its own name (second.test) beside the shared one, for several accounts on
    several servers; one per test module that asks for it."""
    return new_homeserver(server_name="second.test")


# -- Synapse delegating its auth to a test OAuth 2.0 server (oauthserver.py) --------------------------

from oauthserver import DelegatedHomeserver, FakeFront, OAuthServer, start_delegated_homeserver  # noqa: E402


@pytest.fixture(scope="session")
def new_oauth_homeserver(tmp_path_factory):
    """Makes Synapse servers that delegate their auth to a test authorization server (the Matrix
    OAuth 2.0 API): new_oauth_homeserver(**Homeserver settings) -> DelegatedHomeserver, with
    `.synapse` (a started Homeserver) and `.auth` (its OAuthServer). Each pair is stopped when the
    test run ends, or earlier by its owner."""
    made: list[DelegatedHomeserver] = []

    def make(**settings) -> DelegatedHomeserver:
        try:
            pair = start_delegated_homeserver(tmp_path_factory.mktemp("synapse-oauth"), **settings)
        except HomeserverError as error:
            pytest.fail(str(error), pytrace=False)
        made.append(pair)
        return pair

    yield make
    for pair in made:
        pair.stop()


@pytest.fixture(scope="module")
def shared_oauth_homeserver(new_oauth_homeserver) -> DelegatedHomeserver:
    """One delegated pair per test module (Synapse takes seconds to start); use oauth_homeserver."""
    pair = new_oauth_homeserver()
    yield pair
    pair.stop()


@pytest.fixture
def oauth_homeserver(shared_oauth_homeserver) -> DelegatedHomeserver:
    """The module's delegated pair, with the authorization server's knobs put back after each
    test. Synapse keeps the first metadata it fetched for as long as it runs: a test about
    metadata overrides uses new_oauth_homeserver() or a FakeFront."""
    yield shared_oauth_homeserver
    shared_oauth_homeserver.auth.reset_knobs()


@pytest.fixture
def fake_front():
    """fake_front(auth=None) -> a started FakeFront (discovery answers of the test's choosing),
    stopped after the test."""
    fronts: list[FakeFront] = []

    def make(auth: OAuthServer | None = None) -> FakeFront:
        front = FakeFront(auth).start()
        fronts.append(front)
        return front

    yield make
    for front in fronts:
        front.stop()
