"""Signing in where the homeserver signs people in only in the browser (the Matrix OAuth 2.0 API,
as matrix.org does): the dialog's sign-in page drops the user and password fields, offers "Sign in
with browser" and "Create Account", and the share that waited goes on once the browser is done; the
main window then offers "Manage Account…". Under Xvfb, through AT-SPI, against a Synapse that
delegates its sign-in to the test authorization server (oauthserver.py)."""

from __future__ import annotations

from ferryenv import wait_for
from matrixflow import get_property, wait_for_state
from oauthbrowser import install_oauth_browser
from test_ui_accounts import main_window
from test_ui_delivery import next_page, open_dialog, open_with_ferry, picture, search_and_pick, share
from test_ui_dialog import keep_screenshot
from uidesktop import T, click, find, focused, names_of, no_windows, signed_out, type_text


def test_a_server_that_signs_in_only_in_the_browser_gets_no_password_fields_and_the_share_goes_on(
        ui, oauth_homeserver, tmp_path):
    # Given nobody signed in, a person with a room on a server that signs in only in the browser
    server, auth = oauth_homeserver, oauth_homeserver.auth
    signed_out(ui.session)
    token, _ = auth.issue_token("oda")
    room = server.synapse.create_room(token, name="Harbour Lights")
    install_oauth_browser(ui.session, "oda")
    photo = picture(ui.session, "harbour-lights.png", seed=41)

    # When a picture is opened with Ferry and the server's address typed on the sign-in page
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)
    wait_for(lambda: (focused(window) or window).name == T("Homeserver"), timeout=10, what="focus in Homeserver")
    type_text(server.base_url)

    # Then the page offers the browser and account creation, and no user or password
    browser = find(window, "Sign in with browser", "push button", timeout=15)
    find(window, "Create Account", "push button")
    wait_for(lambda: T("Password") not in names_of(window, "password text") and T("User") not in names_of(window, "text"),
             timeout=10, what="the user and password fields hidden")
    keep_screenshot(ui, tmp_path, "share-dialog-sign-in-browser-only.png")

    # When the person signs in with the browser
    click(browser)

    # Then Ferry is signed in as Oda, and the same window goes on to "Share to", and the share goes once
    wait_for(lambda: ui.session.signed_in(), timeout=60, what="Ferry signed in")
    assert get_property(ui.session, "AccountId") == f"@oda:{server.server_name}"
    search_and_pick(window, "harb", "Harbour Lights")
    next_page(window)
    share(window)
    wait_for_state(ui.session, share_id, "sent")
    wait_for(no_windows, timeout=30, what="the dialog to close once sent")
    assert [e["content"]["body"] for e in server.synapse.messages(token, room)] == [photo.name]

    # And the main window offers the account's page at the authorization server
    window = main_window(ui)
    find(window, "Manage Account…", "push button", timeout=15)
    keep_screenshot(ui, tmp_path, "main-window-manage-account.png")

