"""The share dialog's pages, driven by keyboard and AT-SPI, with a stand-in for the service
(standin_share1.py) that lists rooms and plays what happens after Share: the lists, multi-select,
encrypted rooms, the preview, the offline banner, a failure with Retry.

Delivery through the real service to a real homeserver is test_ui_delivery.py's.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ferryenv import file_uri, png_bytes, wait_for
from test_ui_dialog import dialog_for, keep_screenshot
from uidesktop import (no_windows, click, find, find_all, focused, has_state, press, standin_service,  # noqa: F401
                       type_text, ui_app, windows)

ROOMS = [
    {"id": "!team:example.org", "kind": "room", "name": "Design Team", "alias": "#design:example.org",
     "members": 12, "recent": True},
    {"id": "!dm-bob:example.org", "kind": "direct", "name": "Bob", "user-id": "@bob:example.org", "members": 2,
     "recent": True},
    {"id": "!secret:example.org", "kind": "room", "name": "Secret Plans", "members": 4, "encrypted": True},
    {"id": "!photos:example.org", "kind": "room", "name": "Holiday Photos", "alias": "#photos:example.org",
     "members": 7},
    {"id": "@carol:example.org", "kind": "person", "name": "Carol", "user-id": "@carol:example.org"},
]


def scenario(session, share_id="s-photo", name="beach.png", online=True, outcome="sent", text=None):
    if text is not None:
        items = [{"kind": "text", "name": "text", "content-type": "text/plain", "size": len(text), "text": text}]
    else:
        path = session.files / name
        path.write_bytes(png_bytes(480, 320, seed=90))
        items = [{"kind": "file", "name": name, "content-type": "image/png", "size": path.stat().st_size,
                  "uri": file_uri(path)}]
    return {"shares": [{"id": share_id, "state": "awaiting-destination", "items": items}],
            "destinations": ROOMS, "account": {"online": online}, "outcome": outcome}


def open_dialog(ui, share_id, title):
    ui.launch("--share", share_id)
    window = dialog_for(ui_app(), title)
    find(window, "Search rooms and people", "entry")
    return window


def test_page_one_lists_recents_first_and_shows_encrypted_rooms_unpickable(ui, tmp_path):
    with standin_service(ui, scenario(ui.session), tmp_path):
        window = open_dialog(ui, "s-photo", "beach.png")
        wait_for(lambda: (focused(window) or window).name == "Search rooms and people", timeout=5,
                 what="focus in the search field")
        find(window, "Recent destinations", "list")
        recent = [n.name for n in find_all(find(window, "Recent destinations", "list"), "list item")]
        assert recent == ["Design Team", "Bob"]
        secret = find(window, "Secret Plans", "list item")
        assert not has_state(secret, "sensitive")
        assert "encrypted" in secret.description
        find(window, "Choose Holiday Photos", "check box")
        assert not has_state(find(window, "Next", "push button"), "sensitive")
        keep_screenshot(ui, tmp_path, "share-dialog-page1.png")


def test_typing_filters_and_enter_picks_then_next_shows_page_two(ui, tmp_path):
    with standin_service(ui, scenario(ui.session), tmp_path) as calls:
        window = open_dialog(ui, "s-photo", "beach.png")
        wait_for(lambda: (focused(window) or window).name == "Search rooms and people", timeout=5, what="focus")
        type_text("holi")
        wait_for(lambda: any(c["method"] == "ListDestinations" and c["args"][0] == "holi" for c in calls()),
                 timeout=5, what="a search for 'holi'")
        find(window, "Holiday Photos", "list item")
        wait_for(lambda: not find_all(window, "check box") or
                 [n.name for n in find_all(window, "check box")] == ["Choose Holiday Photos"],
                 timeout=5, what="only Holiday Photos left")
        press("Return")  # Enter ticks the first match
        wait_for(lambda: has_state(find(window, "Choose Holiday Photos", "check box"), "checked"), timeout=5,
                 what="Holiday Photos ticked")
        next_button = find(window, "Next", "push button")
        wait_for(lambda: has_state(next_button, "sensitive"), timeout=5, what="Next enabled")
        click(next_button)

        find(window, "Recipients: Holiday Photos", "label")
        find(window, "Preview of beach.png")
        find(window, "Message", "text")
        find(window, "Share", "push button")
        keep_screenshot(ui, tmp_path, "share-dialog-page2.png")


def test_several_destinations_and_share_closes_the_dialog_when_sent(ui, tmp_path):
    with standin_service(ui, scenario(ui.session), tmp_path) as calls:
        window = open_dialog(ui, "s-photo", "beach.png")
        click(find(window, "Choose Design Team", "check box"))
        click(find(window, "Choose Bob", "check box"))
        click(find(window, "Next", "push button"))
        find(window, "Recipients: Design Team, Bob", "label")
        wait_for(lambda: (focused(window) or window).name == "Message", timeout=5, what="focus in the message")
        type_text("Look at this")
        click(find(window, "Share", "push button"))

        complete = wait_for(lambda: [c for c in calls() if c["method"] == "CompleteShare"], timeout=10,
                            what="CompleteShare")[0]
        assert complete["args"] == ["s-photo", ["!team:example.org", "!dm-bob:example.org"], "Look at this"]
        wait_for(no_windows, timeout=10, what="the dialog to close once sent")
        assert not any(c["method"] == "Cancel" for c in calls())


def test_a_text_share_prefills_the_message_and_an_untouched_message_stays_the_shares(ui, tmp_path):
    with standin_service(ui, scenario(ui.session, share_id="s-text", text="Meeting moved to 3pm"), tmp_path) as calls:
        window = open_dialog(ui, "s-text", "Meeting moved to 3pm")
        click(find(window, "Choose Bob", "check box"))
        click(find(window, "Next", "push button"))
        keep_screenshot(ui, tmp_path, "share-dialog-page2-text.png")
        click(find(window, "Share", "push button"))
        complete = wait_for(lambda: [c for c in calls() if c["method"] == "CompleteShare"], timeout=10,
                            what="CompleteShare")[0]
        assert complete["args"][2] == ""


def test_a_failure_shows_the_reason_and_retry_sends_again(ui, tmp_path):
    with standin_service(ui, scenario(ui.session, outcome="failed"), tmp_path) as calls:
        window = open_dialog(ui, "s-photo", "beach.png")
        click(find(window, "Choose Design Team", "check box"))
        click(find(window, "Next", "push button"))
        click(find(window, "Share", "push button"))
        find(window, "Error: You may not post in this room.", "label", timeout=10)
        keep_screenshot(ui, tmp_path, "share-dialog-failed.png")
        click(find(window, "Retry", "push button"))
        wait_for(lambda: any(c["method"] == "Retry" for c in calls()), timeout=5, what="Retry")
        wait_for(no_windows, timeout=10, what="the dialog to close once sent")


def test_offline_a_banner_says_so_and_share_closes_at_once(ui, tmp_path):
    with standin_service(ui, scenario(ui.session, online=False, outcome="queued"), tmp_path) as calls:
        window = open_dialog(ui, "s-photo", "beach.png")
        find(window, lambda n: n.startswith("You are offline"))
        click(find(window, "Choose Bob", "check box"))
        click(find(window, "Next", "push button"))
        keep_screenshot(ui, tmp_path, "share-dialog-offline.png")
        click(find(window, "Share", "push button"))
        wait_for(no_windows, timeout=5, what="the dialog to close at once")
        assert any(c["method"] == "CompleteShare" for c in calls())
        assert not any(c["method"] == "Cancel" for c in calls())


def test_escape_on_page_two_cancels(ui, tmp_path):
    with standin_service(ui, scenario(ui.session), tmp_path) as calls:
        window = open_dialog(ui, "s-photo", "beach.png")
        click(find(window, "Choose Bob", "check box"))
        click(find(window, "Next", "push button"))
        find(window, "Recipients: Bob", "label")
        wait_for(lambda: focused(window) is not None, timeout=5, what="focus")
        press("Escape")
        wait_for(lambda: any(c["method"] == "Cancel" and c["args"] == ["s-photo"] for c in calls()), timeout=5,
                 what="Cancel")
        assert not any(c["method"] == "CompleteShare" for c in calls())
