"""The interface XML in data/dbus is the contract, and the running service keeps it: every method
it names is implemented (a call with arguments of the declared types is answered, or refused with
one of Ferry's own documented errors, never "does not implement"), every property it names is
readable with its type, and every signal it names is emitted when the XML says it is."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gi.repository import GLib

from ferryenv import SHARE1, file_uri

INTERFACE_XML = Path(__file__).resolve().parents[3] / "data" / "dbus" / "io.github.ferryshare.Ferry.Share1.xml"
PREFIX = "io.github.ferryshare.Ferry.Error."
# Arguments of each declared type that a service must answer quickly: an empty id, no URIs, an
# empty dictionary (no network: an empty homeserver name is refused before any request).
SAMPLES = {"s": "", "as": [], "a{sv}": {}, "aa{sv}": [], "u": 0, "b": False}


def share1() -> ET.Element:
    root = ET.parse(INTERFACE_XML).getroot()
    [interface] = [i for i in root.iter("interface") if i.get("name") == SHARE1]
    return interface


def documented_errors() -> set[str]:
    """The error names the XML's comment lists: between "Errors." and "Unknown keys", each line
    that starts with a capitalised word at exactly four spaces."""
    text = INTERFACE_XML.read_text()
    listed = text[text.index("Errors."):text.index("Unknown keys")]
    return set(re.findall(r"^    ([A-Z][A-Za-z]+) ", listed, flags=re.MULTILINE))


METHODS = [m.get("name") for m in share1().iter("method")]


def test_the_xml_lists_methods_signals_properties_and_errors():
    assert len(METHODS) >= 10
    assert {"ShareChanged", "ShareRefused", "SignInRequired"} <= {s.get("name") for s in share1().iter("signal")}
    assert {"NoSuchShare", "StorageFailed", "InvalidArgument"} <= documented_errors()


@pytest.mark.parametrize("method", METHODS)
def test_every_method_in_the_interface_is_implemented(bus, method):
    [declared] = [m for m in share1().iter("method") if m.get("name") == method]
    arguments = [GLib.Variant(arg.get("type"), SAMPLES[arg.get("type")])
                 for arg in declared.iter("arg") if arg.get("direction", "in") == "in"]

    reply = bus.gdbus_call(method, *arguments, timeout=30)

    if not reply.ok:
        assert reply.error_name.startswith(PREFIX), (method, reply.stderr)
        assert reply.error_name[len(PREFIX):] in documented_errors(), (method, reply.error_name)
        assert "does not implement" not in (reply.error_message or ""), (method, reply.error_message)
    assert bus.service_running()


def test_every_property_in_the_interface_is_readable_with_its_type(bus):
    done = bus.run("gdbus", "call", "--session", "--dest", "io.github.ferryshare.Ferry",
                   "--object-path", "/io/github/ferryshare/Ferry",
                   "--method", "org.freedesktop.DBus.Properties.GetAll", SHARE1)
    assert done.returncode == 0, done.stderr
    values = GLib.Variant.parse(None, done.stdout.strip(), None, None).get_child_value(0)
    found = {values.get_child_value(i).get_child_value(0).get_string():
             values.get_child_value(i).get_child_value(1).get_variant().get_type_string()
             for i in range(values.n_children())}
    declared = {p.get("name"): p.get("type") for p in share1().iter("property")}
    assert found == declared


def test_share_refused_is_emitted_when_open_is_given_what_ferry_cannot_share(bus):
    missing = bus.files / "never-there.png"
    with bus.signals() as signals:
        # org.freedesktop.Application.Open has no error to return; the XML promises this signal.
        bus.open_uris([file_uri(missing)])
        refused = signals.wait_for_signal("ShareRefused")

    assert refused.first_string == PREFIX + "FileNotFound", refused.raw
    assert "never-there.png" in refused.raw
