"""Desktop integration: the clients a desktop uses (gapplication, gio open, xdg-open) start Ferry by
D-Bus activation from its installed desktop and service files, with nothing running before."""

from __future__ import annotations


import pytest

from ferryenv import APP_ID, file_uri, write_png, wait_for


def only_share(session, timeout: float = 10) -> dict:
    """The single share the session has, once it has one."""
    shares = wait_for(lambda: session.list_shares(), timeout=timeout, what="a share to appear")
    assert len(shares) == 1, f"expected one share, got {shares}"
    return shares[0]


def test_gapplication_launch_cold_activates_ferry_and_shares_the_file(fresh_bus, tmp_path):
    # Given no Ferry running on the bus, and a PNG
    assert not fresh_bus.service_running()
    photo = write_png(tmp_path / "cold.png")

    # When gapplication launches the app id with the file (org.freedesktop.Application.Open)
    done = fresh_bus.run("gapplication", "launch", APP_ID, photo)

    # Then the call succeeds, the share is committed, and Ferry stays running to own it
    assert done.returncode == 0, done.stderr
    rows = fresh_bus.db_rows("share")
    assert len(rows) == 1 and rows[0]["state"] == "awaiting-sign-in"
    share = only_share(fresh_bus)
    assert share["id"] == rows[0]["id"]
    assert share["source"] == "open"
    assert [(i["name"], i["content-type"], i["uri"]) for i in share["items"]] == [
        ("cold.png", "image/png", file_uri(photo))]
    assert (fresh_bus.spool_dir(share["id"]) / "0").read_bytes() == photo.read_bytes()


def test_gio_open_uses_ferry_when_it_is_the_default_for_png(fresh_bus, tmp_path):
    # Given Ferry chosen as the default application for PNG in this session's settings
    done = fresh_bus.run("xdg-mime", "default", f"{APP_ID}.desktop", "image/png")
    assert done.returncode == 0, done.stderr
    assert f"{APP_ID}.desktop" in fresh_bus.run("xdg-mime", "query", "default", "image/png").stdout
    photo = write_png(tmp_path / "opened.png")

    # When the file is opened with gio open
    done = fresh_bus.run("gio", "open", photo)

    # Then Ferry is activated and makes a share of it
    assert done.returncode == 0, done.stderr
    share = only_share(fresh_bus)
    assert [i["name"] for i in share["items"]] == ["opened.png"]
    assert share["state"] == "awaiting-sign-in"


def test_xdg_open_on_gnome_goes_through_gio_to_ferry(fresh_bus, tmp_path):
    # Given Ferry as the default for PNG, on a GNOME desktop
    assert fresh_bus.run("xdg-mime", "default", f"{APP_ID}.desktop", "image/png").returncode == 0
    photo = write_png(tmp_path / "xdg.png")

    # When xdg-open opens the file
    done = fresh_bus.run("xdg-open", photo, env={"XDG_CURRENT_DESKTOP": "GNOME"})

    # Then Ferry makes a share of it
    assert done.returncode == 0, done.stderr
    share = only_share(fresh_bus)
    assert [i["uri"] for i in share["items"]] == [file_uri(photo)]


def test_gio_open_of_a_ferry_uri_makes_a_link_share(fresh_bus):
    # Given the ferry: scheme handled by Ferry's desktop file (x-scheme-handler/ferry)
    uri = "ferry:share?text=Have%20a%20look&url=https%3A%2F%2Fexample.org%2Fnews&title=News"

    # When the URI is opened with gio open
    done = fresh_bus.run("gio", "open", uri)

    # Then Ferry makes a link share carrying the message and subject
    assert done.returncode == 0, done.stderr
    share = only_share(fresh_bus)
    [item] = share["items"]
    assert item["kind"] == "link"
    assert item["text"] == "https://example.org/news"
    assert share["message"] == "Have a look"
    assert share["subject"] == "News"


def test_cold_activation_by_share_emits_sign_in_required(fresh_bus, tmp_path):
    # Given nothing running and a signal monitor on the bus
    assert not fresh_bus.service_running()
    photo = write_png(tmp_path / "cold-signal.png")
    with fresh_bus.signals() as monitor:
        # When the first call to Ferry is a Share (activating it)
        share_id = fresh_bus.share_ok(uris=[file_uri(photo)])

        # Then no signal is lost to activation
        monitor.wait_for_signal("ShareChanged", lambda s: s.first_string == share_id)
        monitor.wait_for_signal("SignInRequired")


def test_command_line_activates_the_service(fresh_bus):
    # Given nothing running
    assert not fresh_bus.service_running()

    # When the command line lists shares
    done = fresh_bus.ferry("shares", "--json")

    # Then the service was started for it and answered with no shares
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert fresh_bus.service_running()


def test_service_exits_after_its_idle_timeout(new_session):
    # Given a session whose service idles out after 1 s
    session = new_session(FERRY_IDLE_TIMEOUT="1")
    try:
        # When it is activated and then left alone
        assert session.list_shares() == []
        assert session.service_running()

        # Then it leaves the bus by itself
        wait_for(lambda: not session.service_running(), timeout=8, what="the idle service to exit")
    finally:
        session.stop()


TYPES_OFFERED = ["text/plain", "image/png", "image/jpeg", "application/pdf", "video/mp4", "audio/ogg",
                 "application/zip", "application/x-shellscript", "application/octet-stream"]


@pytest.mark.parametrize("mime_type", TYPES_OFFERED)
def test_ferry_is_offered_in_open_with_for_common_types(bus, mime_type):
    # When GIO is asked which applications handle the type
    done = bus.run("gio", "mime", mime_type)

    # Then Ferry is among the recommended ones
    assert done.returncode == 0, done.stderr
    recommended = done.stdout.split("Recommended applications:", 1)
    assert len(recommended) == 2, done.stdout
    assert f"{APP_ID}.desktop" in recommended[1], done.stdout


def test_installed_desktop_file_is_valid(bus, prefix):
    done = bus.run("desktop-file-validate", prefix / "share" / "applications" / f"{APP_ID}.desktop")
    assert done.returncode == 0, done.stdout + done.stderr
