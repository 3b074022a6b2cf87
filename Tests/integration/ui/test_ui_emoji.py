""""Use Another Device" as a person meets it: under Xvfb, through AT-SPI, with a real Synapse and
matrix-nio 0.25 as the person's other device (test_emoji_verification.py's). nio knows no request,
so it starts once the UI asked every device, which Ferry takes while it waits. nio has no
cross-signing: once both sides confirmed, the test signs Ferry's device as Element would.
"""

from __future__ import annotations

import re
import pytest
from gi.repository import GLib

from crosssigning import is_device_cross_signed
from emojiflow import NIO, current, nio_receives, nio_sees, pictures
from matrixflow import get_property
from secretstorage import bootstrap
from test_ui_delivery import picture
from test_ui_dialog import keep_screenshot
from test_ui_verify import ferrys_device, main_window_signed_in_as, on_the_verify_page, sign_in_from_the_dialog
from ferryenv import wait_for
from uidesktop import N, T, click, find, focused, names_of, ui_app, windows  # noqa: F401


@pytest.fixture
def no_verification_left(ui):
    """A verification left running by a failed test would refuse the next one's for ten minutes."""
    yield
    left = current(ui.session)
    if left.get("state") not in (None, "done", "cancelled"):
        ui.session.gdbus_call("CancelEmojiVerification", GLib.Variant("s", left["id"]))


def other_device(nio_reader, user, ferry_device: str):
    """nio signed in as the same person, knowing Ferry's device (so that it can start with it)."""
    nio = nio_reader(NIO, user)
    wait_for(lambda: ferry_device in nio.sas_devices(), timeout=30, what="nio knowing Ferry's device")
    return nio


def shown_emoji(window) -> list[str]:
    """The pictures in the UI's order, read from their accessible names ("Emoji 3: 🐶 Dog", in the
    tests' language)."""
    pattern = re.compile(re.escape(T("Emoji {number}: {emoji} {name}")).replace(r"\{number\}", r"(?P<number>\d+)")
                         .replace(r"\{emoji\}", r"(?P<emoji>\S+)").replace(r"\{name\}", r"(?P<name>.+)"))
    cells = wait_for(lambda: (lambda found: found if len(found) == 7 else None)(
        [match for name in names_of(window, "label") if (match := pattern.fullmatch(name))]), timeout=30,
        what="seven emoji")
    cells.sort(key=lambda match: int(match["number"]))
    return [match["emoji"] for match in cells]


def compare_with_nio(window, nio, ferry_device: str) -> str:
    """Use Another Device, nio starts, both show the same seven emoji; nio's transaction."""
    click(find(window, "Use Another Device", "push button"))
    find(window, "Accept the request on your other device", timeout=30)
    transaction = nio.sas_start(ferry_device)
    theirs = nio_sees(nio, lambda sas: sas["emoji"])
    assert pictures(shown_emoji(window)) == pictures([shown for shown, _ in theirs["emoji"]])
    find(window, "They Match", "push button")
    return transaction


def test_after_sign_in_the_dialog_verifies_by_emoji_and_goes_on(ui, homeserver, nio_reader, tmp_path,
                                                                no_verification_left):
    user = homeserver.new_user("emoji-ui")
    identity, _ = bootstrap(homeserver, user)
    homeserver.create_room(user.token, name="Harbour")
    photo = picture(ui.session, "ferry.png", seed=31)
    share_id, window = sign_in_from_the_dialog(ui, homeserver, user, photo)
    on_the_verify_page(window)
    device = ferrys_device(ui.session)
    nio = other_device(nio_reader, user, device)

    transaction = compare_with_nio(window, nio, device)
    keep_screenshot(ui, tmp_path, "verify-emoji.png")

    # When the person says they match, Ferry waits for the other device
    click(find(window, "They Match", "push button"))
    find(window, "Waiting for your other device\u2026", timeout=30)
    assert current(ui.session)["state"] == "confirmed"
    # And once nio confirmed and the device is signed (as Element does), the dialog goes on to the share
    nio.sas_confirm(transaction)
    assert nio_sees(nio, lambda sas: sas["verified"])["device"] == device
    identity.verify_device(homeserver, user.token, device)
    wait_for(lambda: (focused(window) or window).name == T("Search rooms and people"), timeout=60,
             what="the dialog going on to Share to")
    find(window, T("Choose {name}", name="Harbour"), "check box", timeout=15)
    assert get_property(ui.session, "DeviceVerification") == "verified"
    assert is_device_cross_signed(homeserver, user.token, user.user_id, device,
                                  master=identity.public(identity.master))


def test_the_main_window_says_when_the_emoji_differ_and_goes_back_to_the_key(ui, homeserver, nio_reader,
                                                                            no_verification_left):
    user = homeserver.new_user("emoji-no-ui")
    bootstrap(homeserver, user)
    window = main_window_signed_in_as(ui, homeserver, user)
    device = ferrys_device(ui.session)
    nio = other_device(nio_reader, user, device)
    click(find(window, "Verify this device", "push button", timeout=15))
    verify = wait_for(lambda: [w for w in windows(ui_app()) if w.name == T("Verify This Device")], timeout=15,
                      what="the verify window")[0]
    on_the_verify_page(verify)

    compare_with_nio(verify, nio, device)
    click(find(verify, "They Don\u2019t Match", "push button"))

    # Then the other device is told why, the window says it, and nothing is verified
    assert nio_receives(nio, "m.key.verification.cancel")["code"] == "m.mismatched_sas"
    find(verify, lambda name: name.startswith(T("Error: {message}", message=T("You said the emoji do not match: nothing was verified. If they really differ, someone may be listening in."))), "label", timeout=30)
    assert not is_device_cross_signed(homeserver, user.token, user.user_id, device)
    click(find(verify, "Use Recovery Key", "push button"))
    on_the_verify_page(verify)

    # And Cancel while it waits ends it on the service's side too, back at the key
    click(find(verify, "Use Another Device", "push button"))
    find(verify, "Accept the request on your other device", timeout=30)
    click(find(verify, "Cancel", "push button"))
    on_the_verify_page(verify)
    wait_for(lambda: current(ui.session)["state"] == "cancelled", timeout=15, what="the verification cancelled")
    assert get_property(ui.session, "DeviceVerification") == "unverified"
