"""A graphical session for ferry-ui's tests: Xvfb, the accessibility bus on Ferry's private session
bus, and helpers that drive the windows through AT-SPI (accessible names are the test handles) and
the keyboard (XTest through the AT-SPI registry), and take screenshots.

AT-SPI's client library connects once per process, so all UI tests share one desktop (one display,
one session bus, one service); each test makes shares of its own.
"""

from __future__ import annotations

import contextlib
import gettext
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ferryenv import FerrySession, variant, wait_for

UI_RELATIVE_PATH = Path("libexec/ferry/ferry-ui")

# The UI tests run in English, and once more in German (FERRY_UI_LANGUAGE=de, `make check` does
# both): the whole session is in that language, and every name a test looks for is the English
# text translated through the installed catalogue (`T`), so a label left untranslated fails.
UI_LANGUAGE = os.environ.get("FERRY_UI_LANGUAGE", "")
LOCALES = {"de": "de_DE.UTF-8", "fr": "fr_FR.UTF-8", "he": "he_IL.UTF-8"}
_words: gettext.NullTranslations = gettext.NullTranslations()
_by_context: dict[str, str] = {}
# GTK's own words (a header bar's Close button) come from GTK's catalogue.
_gtk_words: gettext.NullTranslations = gettext.NullTranslations()


def language_env(language: str) -> dict[str, str]:
    """The environment of a session in `language`."""
    return {"LANG": LOCALES[language], "LC_ALL": LOCALES[language], "LANGUAGE": language}


def use_language(prefix: Path, language: str) -> None:
    """Makes `T` translate into `language` with the catalogue installed under `prefix`."""
    global _words, _by_context, _gtk_words
    _words = gettext.translation("ferry", localedir=str(prefix / "share" / "locale"), languages=[language])
    _gtk_words = gtk_catalogue(language)
    catalog = getattr(_words, "_catalog", {})
    _by_context = {key.split("\x04", 1)[1]: value for key, value in catalog.items()
                   if isinstance(key, str) and "\x04" in key}


def gtk_catalogue(language: str) -> gettext.NullTranslations:
    """GTK 4's own translations into `language`, as Debian installs them."""
    return gettext.translation("gtk40", localedir="/usr/share/locale", languages=[language], fallback=True)


def T(text: str, context: str | None = None, **values: object) -> str:
    """What the UI shows for the English `text` in the tests' language, its {name} placeholders
    filled from `values`. Without a context, a text the UI translates only in one (pgettext) is
    found there too."""
    if context is not None:
        shown = _words.pgettext(context, text)
    else:
        shown = _words.gettext(text)
        if shown == text:
            shown = _by_context.get(text, text)
        if shown == text:
            shown = _gtk_words.gettext(text)
    for key, value in values.items():
        shown = shown.replace("{" + key + "}", str(value))
    return shown


def N(singular: str, plural: str, count: int, **values: object) -> str:
    """The plural form the UI shows for `count` (ngettext), with {count} and `values` filled in."""
    shown = _words.ngettext(singular, plural, count)
    for key, value in {**values, "count": count}.items():
        shown = shown.replace("{" + key + "}", str(value))
    return shown


def start_xvfb(width: int = 1280, height: int = 800) -> tuple[subprocess.Popen, str]:
    """A virtual X server on a free display number; returns the process and ':N'."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp",
         "-noreset"],
        pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    assert number.isdigit(), "Xvfb did not report a display number"
    return process, f":{number}"


@dataclass
class Desktop:
    """A display and a Ferry session whose bus also carries the accessibility bus."""

    session: FerrySession
    display: str
    ui_processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def ui_binary(self) -> Path:
        return self.session.prefix / UI_RELATIVE_PATH

    def ui_env(self, **extra: str) -> dict[str, str]:
        env = dict(self.session.env)
        env.update({"DISPLAY": self.display, "GSK_RENDERER": "cairo", "GDK_BACKEND": "x11",
                    "NO_AT_BRIDGE": "0", "GTK_A11Y": "atspi"})
        env.update(extra)
        return env

    def launch(self, *args: str, **env: str) -> subprocess.Popen:
        """Starts `ferry-ui ARGS` the way the service will: a later launch hands its command line to
        the running instance and exits."""
        log = open(self.session.root / "ferry-ui.log", "ab")
        process = subprocess.Popen([str(self.ui_binary), *args], env=self.ui_env(**env), stdout=log, stderr=log,
                                   stdin=subprocess.DEVNULL)
        log.close()
        self.ui_processes.append(process)
        return process

    def ui_log(self) -> str:
        path = self.session.root / "ferry-ui.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def dialog_pids(self) -> list[int]:
        """Every ferry-ui running in this session, started by a test or by the service."""
        binary = self.ui_binary.resolve()
        found = []
        for pid in self.session.processes_in_session():
            with contextlib.suppress(OSError):
                if Path(os.readlink(f"/proc/{pid}/exe")) == binary:
                    found.append(pid)
        return found

    def stop_ui(self) -> None:
        for process in self.ui_processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        self.ui_processes.clear()
        for pid in self.dialog_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not self.dialog_pids(), timeout=10, what="every ferry-ui to exit")

    def screenshot(self, path: Path) -> Path:
        """The screen as PNG (ImageMagick's import), trimmed to the windows on the black root."""
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["import", "-display", self.display, "-window", "root", "-trim", "+repage", str(path)],
                       check=True, timeout=30)
        return path


# --- AT-SPI ---------------------------------------------------------------------------------------

def atspi():
    import pyatspi  # Debian's python3-pyatspi; the venv sees system site packages

    return pyatspi


def ui_app(timeout: float = 15):
    """ferry-ui's accessible application."""
    pyatspi = atspi()

    def find():
        desktop = pyatspi.Registry.getDesktop(0)
        for index in range(desktop.childCount):
            with contextlib.suppress(Exception):
                app = desktop.getChildAtIndex(index)
                # The registry can still list a ferry-ui that an earlier test killed.
                if app is not None and app.name == "ferry-ui" and Path(f"/proc/{app.get_process_id()}").exists():
                    return app
        return None

    return wait_for(find, timeout=timeout, what="ferry-ui on the accessibility bus")


def no_windows() -> bool:
    """ferry-ui shows no window (it exits with its last one)."""
    try:
        app = ui_app(timeout=0.5)
    except AssertionError:
        return True
    with contextlib.suppress(Exception):
        return not windows(app)
    return True


def windows(app) -> list:
    return [app.getChildAtIndex(i) for i in range(app.childCount) if app.getChildAtIndex(i) is not None]


def descendants(root) -> Iterator:
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        yield node
        with contextlib.suppress(Exception):
            stack.extend(node.getChildAtIndex(i) for i in reversed(range(node.childCount)))


def is_showing(node) -> bool:
    """Visible, and so is every ancestor. (GTK 4.8 reports VISIBLE but never SHOWING, and keeps the
    widgets of hidden stack pages in the tree.)"""
    pyatspi = atspi()
    with contextlib.suppress(Exception):
        while node is not None and node.getRoleName() != "application":
            if not node.getState().contains(pyatspi.STATE_VISIBLE):
                return False
            node = node.parent
        return True
    return False


def find(root, name: str | Callable[[str], bool], role: str | None = None, showing: bool = True,
         timeout: float = 10):
    """Waits for a descendant with this accessible name (and role name, e.g. "push button"); a name
    given as text is English, looked for as the tests' language shows it (`T`)."""
    if not callable(name):
        name = T(name)
    matches = name if callable(name) else (lambda n: n == name)

    def search():
        for node in descendants(root):
            with contextlib.suppress(Exception):
                if matches(node.name or "") and (role is None or node.getRoleName() == role) \
                        and (not showing or is_showing(node)):
                    return node
        return None

    return wait_for(search, timeout=timeout, what=f"{role or 'anything'} named {name!r}")


def find_all(root, role: str, showing: bool = True) -> list:
    return [n for n in descendants(root) if _role(n) == role and (not showing or is_showing(n))]


def names_of(root, role: str, showing: bool = True) -> list[str]:
    """The names of the showing descendants with this role. Rows that the list destroys while they
    are read (it filters as the person types) raise "the application no longer exists"; they are
    left out, and a caller polling with wait_for sees the settled list on its next look."""
    found = []
    for node in find_all(root, role, showing):
        with contextlib.suppress(Exception):
            found.append(node.name)
    return found


def _role(node) -> str:
    with contextlib.suppress(Exception):
        return node.getRoleName()
    return ""


def names(root, showing: bool = True) -> list[tuple[str, str]]:
    """(role, name) of every showing descendant, for failure messages."""
    return [(_role(n), n.name) for n in descendants(root) if not showing or is_showing(n)]


def has_state(node, state_name: str) -> bool:
    pyatspi = atspi()
    return node.getState().contains(getattr(pyatspi, f"STATE_{state_name.upper()}"))


def focused(root):
    for node in descendants(root):
        with contextlib.suppress(Exception):
            if has_state(node, "focused"):
                return node
    return None


def click(node) -> None:
    """The accessible "click" action, what a screen reader user does; for controls GTK 4.8 gives no
    action (check boxes), focus and Space, what a keyboard user does."""
    try:
        action = node.queryAction()
        count = action.nActions
    except (NotImplementedError, Exception):
        count = 0
    if count == 0:
        pyatspi = atspi()
        was_checked = has_state(node, "checked")
        for _ in range(3):
            extents = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            assert extents.width > 0 and extents.height > 0, f"{node.name!r} has no place on screen: {extents}"
            x, y = extents.x + extents.width // 2, extents.y + extents.height // 2
            pyatspi.Registry.generateMouseEvent(x, y, "abs")
            time.sleep(0.05)
            pyatspi.Registry.generateMouseEvent(x, y, "b1c")
            if node.getRoleName() != "check box":
                return
            with contextlib.suppress(AssertionError):
                wait_for(lambda: has_state(node, "checked") != was_checked, timeout=2, what="the tick to change")
                return
        raise AssertionError(f"clicking {node.name!r} did not change it")
    for index in range(action.nActions):
        if action.getName(index) in ("click", "press", "activate"):
            action.doAction(index)
            return
    action.doAction(0)


# --- the keyboard ---------------------------------------------------------------------------------

KEYSYMS = {"Escape": 0xFF1B, "Tab": 0xFF09, "Return": 0xFF0D, "space": 0x20, "Down": 0xFF54, "Up": 0xFF52,
           "BackSpace": 0xFF08, "Left": 0xFF51, "Right": 0xFF53}


def keysym(char: str) -> int:
    """X keysyms: Latin-1 characters are their own code; others are 0x01000000 + the code point."""
    code = ord(char)
    return code if 0x20 <= code <= 0xFF else 0x01000000 + code


def press(key: str) -> None:
    """Presses and releases a key by its X keysym name ("Escape", "Tab", "Return", "space")."""
    pyatspi = atspi()
    pyatspi.Registry.generateKeyboardEvent(KEYSYMS[key], None, pyatspi.KEY_SYM)
    time.sleep(0.08)


def type_text(text: str) -> None:
    pyatspi = atspi()
    for char in text:
        pyatspi.Registry.generateKeyboardEvent(keysym(char), None, pyatspi.KEY_SYM)
        time.sleep(0.03)


def tools_missing() -> list[str]:
    return [tool for tool in ("Xvfb", "import") if shutil.which(tool) is None]


# --- fixtures (import them into a test module: `from uidesktop import desktop, ui`) ---------------

import pytest  # noqa: E402  (after the helpers, which scripts may use without pytest)


@pytest.fixture(scope="session")
def desktop(new_session):
    """One display and one Ferry session with the accessibility bus, for every UI test."""
    missing = tools_missing()
    if missing:
        pytest.fail(f"the UI tests need {', '.join(missing)} (apt: xvfb imagemagick)", pytrace=False)
    xvfb, display = start_xvfb()
    # The bus's environment is what the activated service, and so the ferry-ui it starts, gets:
    # DISPLAY lets the service start dialogs (and the AT-SPI registry synthesize key presses on
    # this display, XTest); the cairo renderer is what the figures are measured with; retries
    # come back within two seconds, so a share kept while offline goes soon after the server does.
    language = language_env(UI_LANGUAGE) if UI_LANGUAGE else {}
    session = new_session(DISPLAY=display, GSK_RENDERER="cairo", GDK_BACKEND="x11", FERRY_RETRY_MAX_SECONDS="2",
                          **language)
    if UI_LANGUAGE:
        use_language(session.prefix, UI_LANGUAGE)
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = session.address
    os.environ["DISPLAY"] = display
    os.environ.pop("NO_AT_BRIDGE", None)
    # "Open with" for pictures goes to Ferry, as after choosing it once in a file manager.
    done = session.run("xdg-mime", "default", "io.github.ferryshare.Ferry.desktop", "image/png")
    assert done.returncode == 0, done.stderr
    shared = Desktop(session, display)
    assert shared.ui_binary.exists(), f"{shared.ui_binary} is not installed"
    yield shared
    shared.stop_ui()
    xvfb.kill()
    xvfb.wait(timeout=10)


@pytest.fixture
def ui(desktop):
    """The shared desktop, with no ferry-ui left running and no share left waiting after the test."""
    yield desktop
    for share in desktop.session.list_shares():
        if share["state"] not in ("sent", "failed", "cancelled"):
            desktop.session.gdbus_call("Cancel", variant("s", share["id"]))
    desktop.stop_ui()


def signed_out(session: FerrySession) -> None:
    """Nobody signed in, as on a new desktop (UI tests share one session): every account signed out."""
    for _ in range(8):
        if not session.signed_in():
            return
        session.gdbus_call("SignOut").expect_ok()
    assert not session.signed_in(), "an account stays signed in after eight sign-outs"

