"""ferry-ui's share dialog, driven like a person would: under Xvfb, through AT-SPI and the
keyboard, against the real service on a private bus. The service starts the dialog itself when a
share needs a person; tests start ferry-ui only to check its own command line.

Nobody is signed in here, so shares wait in awaiting-sign-in and the dialog opens on its sign-in
page; the pages after sign-in are covered in test_ui_delivery.py against a real homeserver.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ferryenv import file_uri, wait_for, write_png
from uidesktop import (UI_LANGUAGE, N, T, atspi, click, gtk_catalogue, find, find_all, focused, has_state, names,  # noqa: F401
                       press, signed_out, type_text, ui_app, windows)

SCREENSHOTS = Path(__file__).resolve().parents[3] / "data" / "screenshots"


@pytest.fixture(autouse=True)
def nobody_signed_in(ui):
    signed_out(ui.session)


def share_photo(session, name: str = "photo.png", seed: int = 0) -> str:
    path = write_png(session.files / name, seed=seed)
    return session.share(uris=[file_uri(path)]).expect_ok()


def dialog_for(app, share_title: str):
    """The dialog window whose header names this share."""
    def search():
        for window in windows(app):
            try:
                find(window, share_title, "label", timeout=0.2)
                return window
            except AssertionError:
                continue
        return None
    return wait_for(search, timeout=15, what=f"a dialog for {share_title}")


def keep_screenshot(ui, tmp_path: Path, name: str) -> Path:
    """Takes a screenshot; FERRY_UPDATE_SCREENSHOTS=1 also stores it in data/screenshots (in
    data/screenshots/LANG when the tests run in another language: long words must not clip)."""
    time.sleep(0.5)  # the page's slide transition
    shot = ui.screenshot(tmp_path / name)
    if os.environ.get("FERRY_UPDATE_SCREENSHOTS") == "1":
        folder = SCREENSHOTS / UI_LANGUAGE if UI_LANGUAGE else SCREENSHOTS
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, folder / name)
    return shot


def test_a_share_while_signed_out_opens_its_dialog_on_the_sign_in_page(ui, tmp_path):
    share_id = share_photo(ui.session)
    assert ui.session.get_share(share_id)["state"] == "awaiting-sign-in"

    # The service starts the dialog by itself: nobody here launched ferry-ui.
    window = dialog_for(ui_app(), "photo.png")
    assert not ui.ui_processes and ui.dialog_pids()

    for field, role in (("Homeserver", "text"), ("User", "text"), ("Password", "password text")):
        find(window, field, role)
    find(window, T("Sign In", "button"), "push button")
    wait_for(lambda: focused(window) is not None and focused(window).name == T("Homeserver"), timeout=5,
             what="focus in the Homeserver field")
    keep_screenshot(ui, tmp_path, "share-dialog-sign-in.png")


def test_escape_cancels_the_share_and_removes_its_staged_file(ui):
    share_id = share_photo(ui.session, "escape.png", seed=1)
    assert ui.session.spool_dir(share_id).exists()
    window = dialog_for(ui_app(), "escape.png")
    wait_for(lambda: focused(window) is not None, timeout=5, what="focus in the dialog")

    press("Escape")

    wait_for(lambda: ui.session.get_share(share_id)["state"] == "cancelled", timeout=10, what="the share cancelled")
    # The state is committed before the copies are removed (a crash between leaves files the next
    # start sweeps, never a share that lost its files), so a look in between sees both.
    wait_for(lambda: not ui.session.spool_dir(share_id).exists(), timeout=10, what="the share's copies removed")
    wait_for(lambda: not ui.dialog_pids(), timeout=10, what="ferry-ui to exit with its last window")


def test_the_close_button_cancels_too(ui):
    share_id = share_photo(ui.session, "closed.png", seed=2)
    window = dialog_for(ui_app(), "closed.png")

    click(find(window, "Close", "push button"))

    wait_for(lambda: ui.session.get_share(share_id)["state"] == "cancelled", timeout=10, what="the share cancelled")
    # The state is committed before the copies are removed (a crash between leaves files the next
    # start sweeps, never a share that lost its files), so a look in between sees both.
    wait_for(lambda: not ui.session.spool_dir(share_id).exists(), timeout=10, what="the share's copies removed")


def test_tab_and_typing_reach_every_field_in_order(ui):
    share_id = share_photo(ui.session, "keys.png", seed=3)
    window = dialog_for(ui_app(), "keys.png")
    wait_for(lambda: (focused(window) or window).name == T("Homeserver"), timeout=5, what="focus in Homeserver")

    type_text("example.org")
    order = []
    for _ in range(3):
        press("Tab")
        wait_for(lambda: focused(window) is not None, timeout=3, what="something focused")
        order.append(focused(window).name)

    # GTK 4.8's entries expose no text over AT-SPI; what was typed counts in the sign-in tests,
    # whose typed credentials have to reach the homeserver.
    assert order[:2] == [T("User"), T("Password")], order
    assert T("Sign In", "button") in order, order


def test_enter_in_a_field_does_its_own_step_and_not_also_the_sign_in_button(ui):
    # Enter in a field with a step of its own (next field, sign in, verify) once also activated the
    # window's default, which GTK clicks 250 ms later: a second sign-in, or "Enter your user name."
    # taking focus from wherever the person had got to (issue 40).
    share_photo(ui.session, "enter.png", seed=4)
    window = dialog_for(ui_app(), "enter.png")
    wait_for(lambda: (focused(window) or window).name == T("Homeserver"), timeout=5, what="focus in Homeserver")

    type_text("example.org")
    press("Return")
    wait_for(lambda: (focused(window) or window).name == T("User"), timeout=5, what="focus in User")
    time.sleep(1)  # well past GTK's 250 ms

    errors = [name for _, name in names(window) if name.startswith(T("Error: {message}", message=""))]
    assert not errors, errors
    assert (focused(window) or window).name == T("User")


def test_each_share_gets_its_own_dialog_with_its_own_file(ui):
    first = share_photo(ui.session, "first.png", seed=4)
    app = ui_app()
    dialog_for(app, "first.png")
    # The service starts ferry-ui again; that launch hands its command line to the running one.
    second = share_photo(ui.session, "second.png", seed=5)

    second_window = dialog_for(app, "second.png")
    wait_for(lambda: len(windows(app)) == 2, timeout=10, what="two dialogs")
    with pytest.raises(AssertionError):
        find(second_window, "first.png", "label", timeout=0.5)

    # Closing one cancels only its own share.
    click(find(second_window, "Close", "push button"))
    wait_for(lambda: ui.session.get_share(second)["state"] == "cancelled", timeout=10, what="the second cancelled")
    assert ui.session.get_share(first)["state"] == "awaiting-sign-in"


def test_the_same_share_twice_brings_back_one_dialog(ui):
    share_id = share_photo(ui.session, "twice.png", seed=6)
    app = ui_app()
    dialog_for(app, "twice.png")
    # As the main window's "Sign In…" or a second notification click would.
    ui.launch("--share", share_id).wait(timeout=15)
    time.sleep(0.5)
    assert len(windows(app)) == 1


def test_every_control_has_an_accessible_name(ui):
    share_id = share_photo(ui.session, "names.png", seed=7)
    window = dialog_for(ui_app(), "names.png")
    find(window, T("Sign In", "button"), "push button")

    unnamed = []
    for role in ("push button", "text", "password text", "check box", "toggle button", "list item"):
        for node in find_all(window, role):
            if not node.name or node.name.startswith("Gtk"):
                unnamed.append(role)
    assert not unnamed, f"controls without a name: {unnamed}; all: {names(window)}"


def test_an_unknown_share_says_so(ui):
    ui.launch("--share", "01aaaaaaaaaaaaaaaaaaaaaaaa")
    window = wait_for(lambda: windows(ui_app()), timeout=15, what="a window")[0]
    find(window, "Cannot Open This Share", "label")


def test_the_main_window_lists_recent_shares_with_their_state(ui, tmp_path):
    share_id = share_photo(ui.session, "listed.png", seed=8)
    dialog_for(ui_app(), "listed.png")
    ui.stop_ui()  # the share waits on; the screenshot shows the main window alone
    # Ferry started from the app grid: Activate, and the service opens the main window.
    done = ui.session.run("gapplication", "launch", "io.github.ferryshare.Ferry")
    assert done.returncode == 0, done.stderr
    window = wait_for(lambda: [w for w in windows(ui_app()) if w.name == "Ferry"], timeout=15, what="the main window")[0]

    find(window, T("Account: {account}", account=T("Not signed in")))
    find(window, lambda name: name.startswith(T("{share}, {state}", share="listed.png", state=T("Waiting for sign-in"))))
    keep_screenshot(ui, tmp_path, "main-window.png")

    click(find(window, T("Cancel {share}", share="listed.png"), "push button"))
    wait_for(lambda: ui.session.get_share(share_id)["state"] == "cancelled", timeout=10, what="the share cancelled")
    find(window, lambda name: name.startswith(T("{share}, {state}", share="listed.png", state=T("Cancelled", "share state"))))


def test_the_dialog_lays_out_right_to_left_in_a_hebrew_session(ui, tmp_path):
    pyatspi = atspi()

    def close_button_side(window, close_name: str) -> str:
        """Where the header bar's Close button is: right to left puts it at the start, the left."""
        box = window.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        button = find(window, lambda name: name == close_name, "push button")
        close = button.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        return "left" if close.x + close.width / 2 < box.x + box.width / 2 else "right"

    # Given the dialog as the session's language lays it out
    share_photo(ui.session, "ltr.png", seed=9)
    app = ui_app()
    assert close_button_side(dialog_for(app, "ltr.png"), T("Close")) == "right"
    ui.stop_ui()
    # When ferry-ui runs in Hebrew (GTK takes the direction from the locale), the share dialog is
    # opened in that process: the service's launch hands its command line to the running one
    ui.launch("--sign-in", LANG="he_IL.UTF-8", LC_ALL="he_IL.UTF-8", LANGUAGE="he")
    wait_for(lambda: windows(ui_app()), timeout=15, what="the sign-in window")
    share_photo(ui.session, "rtl.png", seed=10)
    window = dialog_for(ui_app(), "rtl.png")
    # Then it is mirrored: Close (GTK's word for it in Hebrew) at the left, and the page's fields
    # still there to fill in (Ferry has no Hebrew translation: they read in English)
    assert close_button_side(window, gtk_catalogue("he").gettext("Close")) == "left"
    for field, role in (("Homeserver", "text"), ("User", "text"), ("Password", "password text")):
        find(window, lambda name, field=field: name == field, role)
    keep_screenshot(ui, tmp_path, "share-dialog-rtl.png")


def test_usage_mistakes_exit_with_ex_usage(ui):
    process = ui.launch("--frobnicate")
    assert process.wait(timeout=15) == 64
    assert T("unknown argument {argument}", argument="--frobnicate") in ui.ui_log()


def test_help_needs_no_display(ui):
    env = {k: v for k, v in ui.session.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run([str(ui.ui_binary), "--help"], env=env, capture_output=True, text=True, timeout=15)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(T("Usage: {command}", command="ferry-ui [--share ID] [--sign-in] [--activation-token TOKEN]"))
    assert done.stderr == ""
