"""Two accounts signed in, as a person meets them: the main window lists both, with Sign Out for
each and "Add Account…", and the share dialog says whose each room is. Under Xvfb, through AT-SPI,
against a real Synapse."""

from __future__ import annotations

from ferryenv import wait_for
from matrixflow import get_status, sign_in
from secretstorage import bootstrap
from test_ui_delivery import (colour_near_start, gradient, next_page, open_dialog, open_with_ferry, picture,
                              room_messages, share)
from test_ui_dialog import keep_screenshot
from uidesktop import T, click, find, focused, press, signed_out, type_text, ui_app, windows


def main_window(ui):
    ui.stop_ui()
    done = ui.session.run("gapplication", "launch", "io.github.ferryshare.Ferry")
    assert done.returncode == 0, done.stderr
    return wait_for(lambda: [w for w in windows(ui_app()) if w.name == "Ferry"], timeout=15, what="the main window")[0]


def test_two_accounts_are_listed_each_room_says_whose_it_is_and_one_signs_out_alone(ui, homeserver, tmp_path):
    # Given Ferry signed in as a work account and then a personal one, each with a room
    work, home = homeserver.new_user("work"), homeserver.new_user("home")
    homeserver.create_room(work.token, name="Work harbour")
    homeserver.create_room(home.token, name="Home harbour")
    # (the personal account with a green picture of its own, the work account with none)
    homeserver.call("PUT", f"/_matrix/client/v3/profile/{home.user_id}/avatar_url", home.token,
                    json_body={"avatar_url": homeserver.upload(home.token, gradient("#40e040", "#00a000"),
                                                               "image/png")})
    signed_out(ui.session)
    sign_in(ui.session, homeserver, work)
    sign_in(ui.session, homeserver, home)
    try:
        # When the share dialog lists where a picture can go
        open_with_ferry(ui.session, picture(ui.session, "two-accounts.png", seed=31))
        dialog = open_dialog(ui, "two-accounts.png")

        # Then each room's second line ends with the account it belongs to
        find(dialog, lambda name: name.endswith(f" · {work.user_id}"), timeout=20)
        find(dialog, lambda name: name.endswith(f" · {home.user_id}"), timeout=5)
        keep_screenshot(ui, tmp_path, "share-dialog-accounts.png")

        # When the main window is opened
        window = main_window(ui)

        # Then it shows the account signed in last above, the other below with its own Sign Out,
        # and a way to add another
        home_row = find(window, T("Account: {account}", account=home.user_id), timeout=15)
        work_row = find(window, T("Account: {account}", account=work.user_id), timeout=15)
        find(window, T("Add Account…"), "push button")
        # And the personal account's row shows its picture, the work account's its initials
        def green(colour) -> bool:
            return colour[1] > 150 and colour[0] < 100 and colour[2] < 100

        wait_for(lambda: green(colour_near_start(ui, tmp_path, home_row)), timeout=15, what="the account's picture")
        assert not green(colour_near_start(ui, tmp_path, work_row))
        keep_screenshot(ui, tmp_path, "main-window-accounts.png")

        # When the work account's Sign Out is pressed
        click(find(window, T("Sign out {account}", account=work.user_id), "push button"))

        # Then it alone is signed out, and its row goes
        wait_for(lambda: [a["user-id"] for a in get_status(ui.session)["accounts"]] == [home.user_id], timeout=30,
                 what="the work account signed out, the personal one not")
        wait_for(lambda: not [w for w in windows(ui_app()) if w.name == "Ferry"]
                 or _gone(window, T("Account: {account}", account=work.user_id)), timeout=15,
                 what="the work account's row gone")
    finally:
        signed_out(ui.session)


def _gone(window, name: str) -> bool:
    try:
        find(window, name, timeout=0.5)
    except AssertionError:
        return True
    return False


def test_a_room_both_accounts_joined_is_ticked_once_for_each_and_goes_out_from_each(ui, homeserver):
    # Given two accounts signed in, both in the team room
    work, home = homeserver.new_user("work"), homeserver.new_user("home")
    team = homeserver.create_room(work.token, name="Team harbour", invite=[home.user_id])
    homeserver.join(home.token, team)
    signed_out(ui.session)
    sign_in(ui.session, homeserver, work)
    sign_in(ui.session, homeserver, home)
    try:
        # When a picture is opened with Ferry and the room is ticked as each account
        open_with_ferry(ui.session, picture(ui.session, "for-the-team.png", seed=37))
        dialog = open_dialog(ui, "for-the-team.png")
        for account in (work.user_id, home.user_id):
            click(find(dialog, T("Choose {name} as {account}", name="Team harbour", account=account), "check box",
                       timeout=20))
        next_page(dialog)
        share(dialog)

        # Then the room gets the picture once from each account
        wait_for(lambda: sorted(m["sender"] for m in room_messages(homeserver, work, team)
                                if m["content"].get("body") == "for-the-team.png") == sorted([work.user_id,
                                                                                              home.user_id]),
                 timeout=60, what="the picture from both accounts")
    finally:
        signed_out(ui.session)


def test_the_other_accounts_device_is_verified_from_its_own_row(ui, homeserver):
    # Given a work account with a recovery passphrase, and a personal one signed in after it
    work, home = homeserver.new_user("work"), homeserver.new_user("home")
    bootstrap(homeserver, work, passphrase="harbour lights")
    signed_out(ui.session)
    sign_in(ui.session, homeserver, work)
    sign_in(ui.session, homeserver, home)
    try:
        # When the main window's row of the work account offers Verify, and the passphrase is typed
        window = main_window(ui)
        click(find(window, T("Verify the device of {account}", account=work.user_id), "push button", timeout=30))
        verify = wait_for(lambda: [w for w in windows(ui_app()) if w.name == T("Verify This Device")], timeout=15,
                          what="the verify window")[0]
        find(verify, work.user_id, "label", timeout=10)
        wait_for(lambda: (focused(verify) or verify).name == T("Recovery key or passphrase"), timeout=30,
                 what="the key field focused")
        type_text("harbour lights")
        press("Return")

        # Then the work account's device is verified, and the personal one's is not taken for it
        wait_for(lambda: {a["user-id"]: a["device-verification"] for a in get_status(ui.session)["accounts"]}
                 .get(work.user_id) == "verified", timeout=60, what="the work device verified")
        assert {a["user-id"]: a for a in get_status(ui.session)["accounts"]}[home.user_id][
            "device-verification"] != "verified"
    finally:
        signed_out(ui.session)


def test_a_share_made_for_one_account_lists_only_that_accounts_rooms(ui, homeserver):
    # Given two accounts signed in, each with a room
    work, home = homeserver.new_user("work"), homeserver.new_user("home")
    work_room = homeserver.create_room(work.token, name="Work quay")
    homeserver.create_room(home.token, name="Home quay")
    signed_out(ui.session)
    sign_in(ui.session, homeserver, work)
    sign_in(ui.session, homeserver, home)
    try:
        # When a picture is shared with `ferry send --account` for the work account and no destination
        path = picture(ui.session, "for-work-only.png", seed=41)
        done = ui.session.ferry("send", str(path), "--no-wait", "--account", work.user_id)
        assert done.returncode == 0, done.stderr
        dialog = open_dialog(ui, "for-work-only.png")

        # Then the dialog lists the work account's room only, as it would with one account
        choose = find(dialog, T("Choose {name}", name="Work quay"), "check box", timeout=20)
        for name in (T("Choose {name}", name="Home quay"),
                     T("Choose {name} as {account}", name="Home quay", account=home.user_id)):
            assert _gone(dialog, name), f"{name} is listed"

        # And the picture goes out as the work account
        click(choose)
        next_page(dialog)
        share(dialog)
        wait_for(lambda: [m["sender"] for m in room_messages(homeserver, work, work_room)
                          if m["content"].get("body") == "for-work-only.png"] == [work.user_id],
                 timeout=60, what="the picture from the work account")
    finally:
        signed_out(ui.session)
