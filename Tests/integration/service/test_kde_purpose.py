"""KDE's Share menu: Ferry's Purpose plugin, installed into the prefix, found and run by Purpose's
own model and jobs (Tests/kde/purpose-driver.cpp, built by `make check`) as Spectacle, Okular
and Gwenview do: offered for files of any type and for links where Ferry is installed, and its
job makes a Ferry share, whose file or link arrives in the room once a destination is chosen."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ferryenv import file_uri, write_png
from matrixflow import complete_share, signed_in_session, wait_until_sent

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(os.environ.get("FERRY_PURPOSE_DRIVER", ROOT / "build" / "kde-purpose" / "purpose-driver"))
PLUGIN_ID = "ferryplugin"
SCREENSHOTS = ROOT / "data" / "screenshots"

pytestmark = pytest.mark.skipif(not DRIVER.exists(), reason="needs purpose-driver (make check builds it)")


def qt_plugin_dir(prefix: Path) -> Path:
    [directory] = (prefix / "lib").glob("*/qt5/plugins")
    return directory


def purpose(session, command: str, plugin_type: str, data: dict, *rest: str,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The driver in the session's environment, with Qt finding the prefix's plugins (a /usr
    install needs nothing: Qt looks in its own plugin directory) and drawing off screen."""
    return subprocess.run([str(DRIVER), command, plugin_type, json.dumps(data), *rest],
                          env={**os.environ, **session.env, "QT_PLUGIN_PATH": str(qt_plugin_dir(session.prefix)),
                               "QT_QPA_PLATFORM": "offscreen", **(env or {})},
                          capture_output=True, text=True, timeout=120)


def alternatives(session, plugin_type: str, data: dict, env: dict[str, str] | None = None) -> dict[str, dict]:
    done = purpose(session, "list", plugin_type, data, env=env)
    assert done.returncode == 0, done.stderr
    return {entry["id"]: entry for entry in map(json.loads, done.stdout.splitlines())}


def run_ferry(session, plugin_type: str, data: dict) -> tuple[int, dict]:
    done = purpose(session, "run", plugin_type, data, PLUGIN_ID)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout.splitlines()[-1])


def test_purpose_offers_ferry_for_a_picture_any_file_and_a_link(new_session):
    session = new_session()
    photo = write_png(session.files / "screenshot.png")

    for data in ({"urls": [file_uri(photo)], "mimeType": "image/png"},
                 {"urls": [file_uri(photo), file_uri(session.files / "notes.odt")], "mimeType": "application/octet-stream"}):
        entry = alternatives(session, "Export", data)[PLUGIN_ID]
        assert (entry["name"], entry["action"], entry["icon"]) == ("Ferry", "Send via Ferry…", "io.github.ferryshare.Ferry")
    # A browser's page (plasma-browser-integration gives a type too)
    assert PLUGIN_ID in alternatives(session, "ShareUrl", {"urls": ["https://example.org/"], "title": "Example",
                                                           "mimeType": "text/html"})


def test_the_entry_speaks_the_persons_language(new_session):
    session = new_session()
    photo = write_png(session.files / "bildschirmfoto.png")
    data = {"urls": [file_uri(photo)], "mimeType": "image/png"}
    for language, action in (("de", "Mit Ferry senden …"), ("fr", "Envoyer avec Ferry…")):
        locale = {"de": "de_DE.UTF-8", "fr": "fr_FR.UTF-8"}[language]
        entry = alternatives(session, "Export", data, env={"LANGUAGE": language, "LANG": locale, "LC_ALL": locale})
        assert entry[PLUGIN_ID]["action"] == action


def test_not_offered_where_ferry_is_not_installed(new_session, tmp_path):
    session = new_session()
    photo = write_png(session.files / "screenshot.png")
    data = {"urls": [file_uri(photo)], "mimeType": "image/png"}
    # The plugin is there, Ferry's desktop file is not (another system's XDG data directories)
    empty = tmp_path / "share"
    (empty / "applications").mkdir(parents=True)
    offered = alternatives(session, "Export", data, env={"XDG_DATA_DIRS": str(empty)})
    assert PLUGIN_ID not in offered
    # …while Purpose's other plugins still are: the constraint is Ferry's own
    assert offered


def test_a_screenshot_shared_from_the_menu_arrives(new_session, homeserver):
    owner = homeserver.new_user("kde")
    session = signed_in_session(new_session, homeserver, owner)
    room = homeserver.create_room(owner.token, name="Screenshots")
    photo = write_png(session.files / "Screenshot_20261129.png", seed=7)
    before = set(session.share_ids())

    # When Spectacle's Share menu runs Ferry's entry (in Purpose's own process, as it does)
    status, result = run_ferry(session, "Export", {"urls": [file_uri(photo)], "mimeType": "image/png"})

    # Then the job finishes with the new share's id, as soon as Ferry holds the file
    assert status == 0 and result["error"] == 0, result
    [share_id] = set(session.share_ids()) - before
    assert result["output"] == {"url": "", "ferryShareId": share_id}
    # And the file Spectacle removes afterwards changes nothing
    photo_bytes = photo.read_bytes()
    photo.unlink()
    share = session.get_share(share_id)
    assert share["state"] == "awaiting-destination"
    assert [item["name"] for item in share["items"]] == ["Screenshot_20261129.png"]

    # And once the dialog's choice is made, the picture arrives as a picture
    complete_share(session, share_id, [room]).expect_ok()
    wait_until_sent(session, [share_id])
    [event] = homeserver.messages(owner.token, room)
    assert event["content"]["msgtype"] == "m.image"
    assert homeserver.download(owner.token, event["content"]["url"]) == photo_bytes


def test_a_link_from_a_browsers_share_menu_becomes_a_link_share(new_session, homeserver):
    owner = homeserver.new_user("kde-link")
    session = signed_in_session(new_session, homeserver, owner)
    room = homeserver.create_room(owner.token, name="Links")
    before = set(session.share_ids())

    # What plasma-browser-integration gives Purpose for a page: its address, title and type
    status, result = run_ferry(session, "ShareUrl", {"urls": ["https://example.org/harbour"], "title": "The harbour",
                                                     "mimeType": "text/html"})

    assert status == 0, result
    [share_id] = set(session.share_ids()) - before
    share = session.get_share(share_id)
    [item] = share["items"]
    assert (item["kind"], item["text"], share["subject"]) == ("link", "https://example.org/harbour", "The harbour")
    complete_share(session, share_id, [room]).expect_ok()
    wait_until_sent(session, [share_id])
    [event] = homeserver.messages(owner.token, room)
    assert "https://example.org/harbour" in event["content"]["body"]


def test_text_a_page_shares_goes_as_text(new_session):
    session = new_session()
    before = set(session.share_ids())

    # A page's navigator.share(): its text among the "urls", as the browser integration passes it
    # ("Help:" is also the scheme of KIO's help: protocol; text it stays)
    status, result = run_ferry(session, "ShareUrl", {"urls": ["https://example.org/tides", "Help: high water at 14:05"],
                                                     "title": "Tides", "mimeType": "text/plain"})

    assert status == 0, result
    [share_id] = set(session.share_ids()) - before
    share = session.get_share(share_id)
    [item] = share["items"]
    assert (item["kind"], item["text"]) == ("text", "https://example.org/tides\nHelp: high water at 14:05")
    assert share["subject"] == "Tides"


def test_a_file_behind_a_kio_url_is_shared_as_the_file(new_session):
    """Dolphin's trash, Plasma's desktop and recent files name files by KIO URLs (trash:/,
    desktop:/, recentlyused:/) that Ferry, reading through GIO, cannot open: KIO says which file."""
    session = new_session()
    trash = Path(session.env["XDG_DATA_HOME"]) / "Trash"
    (trash / "files").mkdir(parents=True)
    (trash / "info").mkdir()
    photo = write_png(trash / "files" / "old-pier.png", seed=3)
    (trash / "info" / "old-pier.png.trashinfo").write_text(
        f"[Trash Info]\nPath={session.files / 'old-pier.png'}\nDeletionDate=2026-11-29T08:00:00\n")
    before = set(session.share_ids())

    status, result = run_ferry(session, "Export", {"urls": ["trash:/0-old-pier.png"], "mimeType": "image/png"})

    assert status == 0, result
    [share_id] = set(session.share_ids()) - before
    [item] = session.get_share(share_id)["items"]
    assert item["name"] == "old-pier.png" and item["size"] == photo.stat().st_size


def test_a_bare_path_is_a_file(new_session):
    session = new_session()
    photo = write_png(session.files / "a pier at dusk.png")
    before = set(session.share_ids())

    status, result = run_ferry(session, "Export", {"urls": [str(photo)], "mimeType": "image/png"})

    assert status == 0, result
    [share_id] = set(session.share_ids()) - before
    [item] = session.get_share(share_id)["items"]
    assert (item["kind"], item["name"]) == ("file", "a pier at dusk.png")


def test_without_a_session_bus_the_job_fails_and_says_so(new_session):
    session = new_session()
    photo = write_png(session.files / "screenshot.png")
    done = purpose(session, "run", "Export", {"urls": [file_uri(photo)], "mimeType": "image/png"}, PLUGIN_ID,
                   env={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={session.root / 'no-bus'}"})
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["error"] != 0 and result["errorText"]


def test_a_file_ferry_refuses_is_the_jobs_error_in_ferrys_words(new_session):
    session = new_session()
    gone = session.files / "moved-away.png"
    before = set(session.share_ids())

    status, result = run_ferry(session, "Export", {"urls": [file_uri(gone)], "mimeType": "image/png"})

    # Then the application shows Ferry's sentence, nothing was accepted, and Ferry stays up
    assert status == 1 and result["error"] != 0
    assert "moved-away.png" in result["errorText"]
    assert set(session.share_ids()) == before
    assert session.service_running()


def test_the_share_menu_shows_ferry_with_its_icon(new_session, tmp_path):
    """Purpose's own menu widget (Okular's and Gwenview's Share menu), drawn off screen;
    FERRY_UPDATE_SCREENSHOTS=1 keeps the picture in data/screenshots for the README."""
    session = new_session()
    photo = write_png(session.files / "screenshot.png")
    picture = tmp_path / "kde-share-menu.png"

    done = purpose(session, "menu", "Export", {"urls": [file_uri(photo)], "mimeType": "image/png"}, str(picture),
                   env={"QT_SCALE_FACTOR": "2"})

    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout.splitlines()[0])["entries"]
    # Ferry's entry is there, with the icon the package installs into hicolor
    assert "Send via Ferry…" in entries, entries
    assert picture.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("FERRY_UPDATE_SCREENSHOTS") == "1":
        shutil.copy(picture, SCREENSHOTS / picture.name)
