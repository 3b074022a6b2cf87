""""Verify This Device" as a person meets it: under Xvfb, through AT-SPI and the keyboard, with a
real Synapse. The account's cross-signing identity and secret storage were set up by a client we
did not write in Swift (secretstorage.py), which also judges the result with its own signature
check; the share the person was making goes on either way.
"""

from __future__ import annotations

import time

from crosssigning import CrossSigningIdentity, is_device_cross_signed
from matrixflow import get_property, sign_in, wait_for_state
from secretstorage import SecretStorage, bootstrap, wrong_recovery_key
from test_ui_delivery import (next_page, open_dialog, open_with_ferry, picture, room_messages, search_and_pick,
                              share, signed_in_as, type_sign_in)
from test_ui_dialog import keep_screenshot
from ferryenv import wait_for
from uidesktop import N, T, click, find, focused, no_windows, press, signed_out, type_text, ui_app, windows  # noqa: F401


def ferrys_device(session) -> str:
    return get_property(session, "AccountId") and session.busctl_call("GetStatus").expect_ok()["device-id"]


def sign_in_from_the_dialog(ui, homeserver, user, photo):
    """Signed out, a picture opened with Ferry; the person signs in on the dialog's first page."""
    share_id = open_with_ferry(ui.session, photo)
    window = open_dialog(ui, photo.name)
    wait_for(lambda: (focused(window) or window).name == T("Homeserver"), timeout=10, what="focus in Homeserver")
    type_sign_in(homeserver, user)
    return share_id, window


def main_window_signed_in_as(ui, homeserver, user):
    """Ferry signed in as `user`, and its main window opened from the app grid (Activate)."""
    signed_in_as(ui.session, homeserver, user)
    ui.stop_ui()
    done = ui.session.run("gapplication", "launch", "io.github.ferryshare.Ferry")
    assert done.returncode == 0, done.stderr
    return wait_for(lambda: [w for w in windows(ui_app()) if w.name == "Ferry"], timeout=15, what="the main window")[0]


def on_the_verify_page(window) -> None:
    wait_for(lambda: (focused(window) or window).name == T("Recovery key or passphrase"), timeout=30,
             what="focus in the recovery key field")


def test_after_sign_in_the_recovery_key_verifies_the_device_and_the_share_goes_on(ui, homeserver, tmp_path):
    # Given an account with cross-signing and secret storage, a room, and nobody signed in to Ferry
    user = homeserver.new_user("verify-ui")
    identity, storage = bootstrap(homeserver, user)
    room = homeserver.create_room(user.token, name="Garden")
    signed_out(ui.session)
    photo = picture(ui.session, "tulips.png", seed=21)

    # When the person signs in from the share's dialog, "Verify This Device" comes next
    share_id, window = sign_in_from_the_dialog(ui, homeserver, user, photo)
    on_the_verify_page(window)
    find(window, "Skip", "push button")
    keep_screenshot(ui, tmp_path, "share-dialog-verify.png")

    # And a wrong key is said in place, and nothing is signed
    type_text(wrong_recovery_key(storage.recovery_key))
    press("Return")
    find(window, lambda name: name.startswith(T("Error: {message}", message=T("That recovery key does not open this account's secret storage; it may be an older one."))), timeout=30)
    device = ferrys_device(ui.session)
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, device)

    # And with the right key (the field is emptied first) the device is verified
    for _ in range(80):
        press("BackSpace")
    type_text(storage.recovery_key)
    press("Return")

    # Then the same window goes on to "Share to", and the share is delivered once
    search_and_pick(window, "gard", "Garden")
    assert is_device_cross_signed(homeserver, user.token, user.user_id, device, master=identity.public(identity.master))
    assert get_property(ui.session, "DeviceVerification") == "verified"
    assert not find_banner(window)
    next_page(window)
    share(window)
    wait_for_state(ui.session, share_id, "sent")
    wait_for(no_windows, timeout=30, what="the dialog to close once sent")
    time.sleep(1)
    assert [e["content"]["body"] for e in room_messages(homeserver, user, room)] == [photo.name]


def find_banner(window) -> bool:
    try:
        find(window, lambda name: name.startswith(T("This device is not verified: others may see a warning on what Ferry sends.")), timeout=2)
        return True
    except AssertionError:
        return False


def test_skip_goes_on_to_the_share_and_its_pages_say_the_device_is_not_verified(ui, homeserver):
    user = homeserver.new_user("skip-ui")
    identity, _ = bootstrap(homeserver, user)
    homeserver.create_room(user.token, name="Kitchen")
    signed_out(ui.session)
    photo = picture(ui.session, "bread.png", seed=22)

    share_id, window = sign_in_from_the_dialog(ui, homeserver, user, photo)
    on_the_verify_page(window)
    click(find(window, "Skip", "push button"))

    search_and_pick(window, "kitch", "Kitchen")
    assert find_banner(window)
    find(window, "Verify this device", "push button")
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, ferrys_device(ui.session))
    next_page(window)
    share(window)
    wait_for_state(ui.session, share_id, "sent")


def test_an_account_without_cross_signing_goes_straight_on_without_a_banner(ui, homeserver):
    user = homeserver.new_user("plain-ui")
    homeserver.create_room(user.token, name="Attic")
    signed_out(ui.session)
    photo = picture(ui.session, "dust.png", seed=23)

    share_id, window = sign_in_from_the_dialog(ui, homeserver, user, photo)

    search_and_pick(window, "atti", "Attic")
    assert get_property(ui.session, "DeviceVerification") == "no-identity"
    assert not find_banner(window)
    next_page(window)
    share(window)
    wait_for_state(ui.session, share_id, "sent")


def test_the_main_window_shows_the_device_and_verifies_it(ui, homeserver, tmp_path):
    user = homeserver.new_user("main-ui")
    identity, storage = bootstrap(homeserver, user, passphrase="open sesame")
    window = main_window_signed_in_as(ui, homeserver, user)

    find(window, lambda name: name.startswith(T("This device: {verification}", verification=T("Not verified: your other devices may show a warning on what Ferry sends"))), timeout=15)
    keep_screenshot(ui, tmp_path, "main-window-unverified.png")
    click(find(window, "Verify this device", "push button"))
    verify = wait_for(lambda: [w for w in windows(ui_app()) if w.name == T("Verify This Device")], timeout=15,
                      what="the verify window")[0]
    on_the_verify_page(verify)
    type_text("open sesame")
    press("Return")

    find(window, lambda name: name == T("This device: {verification}", verification=T("Verified: your other devices trust what Ferry sends")), timeout=60)
    wait_for(lambda: not [w for w in windows(ui_app()) if w.name == T("Verify This Device")], timeout=10,
             what="the verify window to close")
    device = ferrys_device(ui.session)
    assert is_device_cross_signed(homeserver, user.token, user.user_id, device, master=identity.public(identity.master))


def test_the_main_window_sets_up_recovery_for_an_account_without_it_and_shows_the_key_once(ui, homeserver, tmp_path):
    user = homeserver.new_user("setup-ui")
    window = main_window_signed_in_as(ui, homeserver, user)

    find(window, lambda name: name == T("This device: {verification}", verification=T("Not verified: your account has no recovery key yet")), timeout=15)
    click(find(window, "Set up recovery", "push button"))
    setup = wait_for(lambda: [w for w in windows(ui_app()) if w.name == T("Set Up Recovery")], timeout=15,
                     what="the set-up window")[0]
    # Nothing happens until the person asks for it
    assert get_property(ui.session, "DeviceVerification") == "no-identity"
    click(find(setup, "Make a Recovery Key", "push button"))

    # The key, as a screen reader reads it: the label's text
    key = find(setup, lambda name: name.startswith("Es") and len(name.replace(" ", "")) == 48, "label", timeout=60).name
    keep_screenshot(ui, tmp_path, "set-up-recovery.png")
    # The other client opens the new secret storage with the key as shown, and finds Ferry's device signed
    storage = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=key)
    identity = CrossSigningIdentity.from_secret_storage(storage)
    assert is_device_cross_signed(homeserver, user.token, user.user_id, ferrys_device(ui.session),
                                  master=identity.public(identity.master))

    click(find(setup, "I Have Saved It", "push button"))
    wait_for(lambda: not [w for w in windows(ui_app()) if w.name == T("Set Up Recovery")], timeout=10,
             what="the set-up window to close")
    find(window, lambda name: name == T("This device: {verification}", verification=T("Verified: your other devices trust what Ferry sends")), timeout=30)
