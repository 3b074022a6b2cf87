"""Share1 and org.freedesktop.Application.Open, called by gdbus and busctl on a private bus:
what a share looks like once it is accepted, and how it is routed while nobody is signed in."""

from __future__ import annotations

import time

from ferryenv import file_uri, pdf_bytes, write_png

NOW_SLACK_US = 5 * 60 * 1_000_000


def test_share_of_one_png_through_gdbus_is_a_send_of_an_image(bus, tmp_path):
    # Given a PNG on disk
    photo = write_png(tmp_path / "photo.png")

    # When a client shares it through Share1.Share
    share_id = bus.share_ok(uris=[file_uri(photo)])

    # Then GetShare describes one image file, waiting for sign-in
    share = bus.get_share(share_id)
    assert share["id"] == share_id
    assert share["state"] == "awaiting-sign-in"
    assert share["action"] == "send"
    assert share["content-type"] == "image/png"
    assert share["source"] == "share"
    [item] = share["items"]
    assert item["kind"] == "file"
    assert item["name"] == "photo.png"
    assert item["content-type"] == "image/png"
    assert item["size"] == photo.stat().st_size
    assert item["uri"] == file_uri(photo)
    now_us = int(time.time() * 1_000_000)
    assert abs(share["created"] - now_us) < NOW_SLACK_US
    assert share["updated"] >= share["created"]
    assert "error-name" not in share


def test_busctl_share_with_one_file_uri_creates_a_share(bus, tmp_path):
    # Given a PNG
    photo = write_png(tmp_path / "busctl.png")

    # When busctl calls Share with a hand-typed a{sv}
    reply = bus.busctl_call("Share", "a{sv}", "1", "uris", "as", "1", file_uri(photo))

    # Then it returns an id that GetShare and ListShares know
    share_id = reply.expect_ok()
    assert isinstance(share_id, str) and share_id
    assert bus.get_share(share_id)["items"][0]["uri"] == file_uri(photo)
    assert share_id in bus.share_ids()


def test_application_open_through_gdbus_makes_one_share_of_all_uris(bus, tmp_path):
    # Given two PNGs
    first, second = write_png(tmp_path / "one.png", seed=1), write_png(tmp_path / "two.png", seed=2)
    before = set(bus.share_ids())

    # When a file manager calls org.freedesktop.Application.Open with both
    bus.open_uris([file_uri(first), file_uri(second)]).expect_ok()

    # Then exactly one new share holds both, in order, as a send-multiple of images
    [new_id] = set(bus.share_ids()) - before
    share = bus.get_share(new_id)
    assert share["source"] == "open"
    assert share["action"] == "send-multiple"
    # Both are PNGs: the common type is image/png itself (image/* is for PNG with JPEG, see the unit tests).
    assert share["content-type"] == "image/png"
    assert [i["name"] for i in share["items"]] == ["one.png", "two.png"]


def test_share_is_in_the_database_when_share_returns(bus, tmp_path):
    # Given a PNG
    photo = write_png(tmp_path / "durable.png")

    # When Share returns
    share_id = bus.share_ok(uris=[file_uri(photo)])

    # Then the outbox already has its row and its item (read directly, read-only)
    [row] = [r for r in bus.db_rows("share") if r["id"] == share_id]
    assert row["state"] == "awaiting-sign-in"
    items = [r for r in bus.db_rows("share_item") if r["share_id"] == share_id]
    assert [(i["position"], i["kind"], i["name"]) for i in items] == [(0, "file", "durable.png")]


def test_png_and_pdf_together_have_the_common_type_of_everything(bus, tmp_path):
    # Given a PNG and a PDF
    photo = write_png(tmp_path / "mixed.png")
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(pdf_bytes())

    # When they are shared together
    share = bus.get_share(bus.share_ok(uris=[file_uri(photo), file_uri(paper)]))

    # Then the share is send-multiple of */*, each item keeps its own type
    assert share["action"] == "send-multiple"
    assert share["content-type"] == "*/*"
    assert [i["content-type"] for i in share["items"]] == ["image/png", "application/pdf"]


def test_png_named_txt_is_typed_by_its_content(bus, tmp_path):
    # Given PNG bytes in a file named .txt
    disguised = write_png(tmp_path / "notes.txt")

    # When it is shared
    share = bus.get_share(bus.share_ok(uris=[file_uri(disguised)]))

    # Then its type comes from its content
    assert share["items"][0]["content-type"] == "image/png"
    assert share["content-type"] == "image/png"


def test_text_alone_is_a_text_share(bus):
    # When a plain text is shared
    share = bus.get_share(bus.share_ok(text="Lunch at noon?"))

    # Then it is one text item
    assert share["action"] == "send"
    [item] = share["items"]
    assert item["kind"] == "text"
    assert item["text"] == "Lunch at noon?"
    assert share["content-type"] == "text/plain"


def test_text_that_is_one_url_is_a_link_share(bus):
    # When the text is a single URL
    share = bus.get_share(bus.share_ok(text="https://example.org/a/page?x=1"))

    # Then it is one link item
    [item] = share["items"]
    assert item["kind"] == "link"
    assert item["text"] == "https://example.org/a/page?x=1"


def test_text_with_files_becomes_the_message(bus, tmp_path):
    # Given a PNG
    photo = write_png(tmp_path / "with-text.png")

    # When it is shared with a text
    share = bus.get_share(bus.share_ok(uris=[file_uri(photo)], text="Look at this"))

    # Then the text is the share's message and the only item is the file
    assert share["message"] == "Look at this"
    assert [i["kind"] for i in share["items"]] == ["file"]


def test_subject_message_and_destinations_are_kept(bus, tmp_path):
    # Given a PNG and every optional key
    photo = write_png(tmp_path / "kept.png")

    # When it is shared
    share = bus.get_share(bus.share_ok(
        uris=[file_uri(photo)], subject="Holiday", message="From the beach",
        destinations=["!opaqueroomid", "#friends:example.org", "@ann:example.org"],
    ))

    # Then all of them are kept, and signed out still means awaiting-sign-in
    assert share["subject"] == "Holiday"
    assert share["message"] == "From the beach"
    assert share["destinations"] == ["!opaqueroomid", "#friends:example.org", "@ann:example.org"]
    assert share["state"] == "awaiting-sign-in"


def test_unknown_keys_are_ignored(bus, tmp_path):
    # Given a PNG
    photo = write_png(tmp_path / "future.png")
    from gi.repository import GLib

    # When a newer client adds keys this service does not know
    reply = bus.share(uris=[file_uri(photo)], **{"x-future-key": GLib.Variant("i", 42),
                                                 "priority": GLib.Variant("s", "high")})

    # Then the share is created as if they were absent
    share = bus.get_share(reply.expect_ok())
    assert [i["name"] for i in share["items"]] == ["future.png"]


def test_file_uri_with_localhost_is_local(bus, tmp_path):
    # Given a PNG named by a file://localhost/ URI
    photo = write_png(tmp_path / "localhost.png")

    # When it is shared
    share = bus.get_share(bus.share_ok(uris=[f"file://localhost{photo}"]))

    # Then it is accepted like any local file
    assert share["items"][0]["name"] == "localhost.png"


def test_ferry_uri_with_url_through_open_is_a_link_share_with_a_message(bus):
    # When Open receives a Web Share Target style ferry: URI
    before = set(bus.share_ids())
    bus.open_uris(["ferry:share?title=Read%20this&text=Worth%20a%20look&url=https%3A%2F%2Fexample.org%2Fpost%3Fid%3D7"]
                  ).expect_ok()

    # Then one link share is made: url → link, text → message, title → subject
    [new_id] = set(bus.share_ids()) - before
    share = bus.get_share(new_id)
    [item] = share["items"]
    assert item["kind"] == "link"
    assert item["text"] == "https://example.org/post?id=7"
    assert share["message"] == "Worth a look"
    assert share["subject"] == "Read this"


def test_ferry_uri_with_text_alone_is_a_text_share(bus):
    # When a ferry: URI carries only text
    share = bus.get_share(bus.share_ok(uris=["ferry:share?text=Hello%2C%20world%20%E2%9C%93"]))

    # Then it is a text share with the decoded text
    [item] = share["items"]
    assert item["kind"] == "text"
    assert item["text"] == "Hello, world \u2713"


def test_signed_in_property_is_false_before_sign_in_exists(bus):
    # When SignedIn is read with busctl get-property
    # Then it is false
    assert bus.signed_in() is False


def test_new_share_while_signed_out_emits_share_changed_and_sign_in_required(bus, tmp_path):
    # Given a signal monitor on the bus
    photo = write_png(tmp_path / "signals.png")
    with bus.signals() as monitor:
        # When a share arrives while nobody is signed in
        share_id = bus.share_ok(uris=[file_uri(photo)])

        # Then ShareChanged announces it and SignInRequired asks for sign-in with a sentence
        monitor.wait_for_signal("ShareChanged", lambda s: s.first_string == share_id)
        reason = monitor.wait_for_signal("SignInRequired").first_string
        assert reason and len(reason.strip()) > 5


def test_list_shares_is_newest_first(bus, tmp_path):
    # Given two shares made one after the other
    older = bus.share_ok(text="first")
    time.sleep(0.01)
    newer = bus.share_ok(text="second")

    # When they are listed
    ids = bus.share_ids()

    # Then the newer comes first
    assert ids.index(newer) < ids.index(older)


def test_activate_and_activate_action_succeed(bus):
    # When the desktop activates the application, or one of its desktop actions
    from gi.repository import GLib

    activate = bus.gdbus_call("Activate", GLib.Variant("a{sv}", {}), interface="org.freedesktop.Application")
    action = bus.gdbus_call("ActivateAction", GLib.Variant("s", "shares"), GLib.Variant("av", []),
                            GLib.Variant("a{sv}", {}), interface="org.freedesktop.Application")

    # Then both calls succeed and the service is still there
    activate.expect_ok()
    action.expect_ok()
    assert bus.service_running()
