"""A stand-in for Ferry's service, for the UI's page tests only: it owns Ferry's bus name on a
test's private bus and answers Share1 from a scenario (a JSON file) — shares waiting for a
destination, rooms to list, and what happens after CompleteShare — and records every call.

It exists so that the dialog's pages (lists, multi-select, encrypted rooms, preview, offline,
failure and Retry) can be looked at and driven without a homeserver. The tests that deliver for
real (test_ui_delivery.py) use the real service and a real Synapse.

    python3 standin_share1.py SCENARIO.json CALLS.jsonl
"""

import json
import sys
from pathlib import Path

from gi.repository import Gio, GLib

NAME = "io.github.ferryshare.Ferry"
PATH = "/io/github/ferryshare/Ferry"
IFACE = "io.github.ferryshare.Ferry.Share1"
XML = (Path(__file__).resolve().parents[2] / "data" / "dbus" / "io.github.ferryshare.Ferry.Share1.xml").read_text()

ITEM_TYPES = {"kind": "s", "name": "s", "content-type": "s", "size": "t", "uri": "s", "text": "s"}
SHARE_TYPES = {"id": "s", "state": "s", "action": "s", "content-type": "s", "subject": "s", "message": "s",
               "destinations": "as", "source": "s", "created": "x", "updated": "x", "error-name": "s",
               "error-message": "s"}
DEST_TYPES = {"id": "s", "kind": "s", "name": "s", "alias": "s", "user-id": "s", "members": "u",
              "encrypted": "b", "last-activity": "x", "recent": "b"}
DELIVERY_TYPES = {"destination": "s", "state": "s", "bytes-sent": "t", "bytes-total": "t", "error-name": "s",
                  "error-message": "s"}


def dictionary(values, types):
    return {k: GLib.Variant(types[k], v) for k, v in values.items() if k in types}


def share_variant(share):
    return GLib.Variant("a{sv}", share_dict(share))


def share_dict(share):
    result = dictionary(share, SHARE_TYPES)
    result["items"] = GLib.Variant("aa{sv}", [dictionary(i, ITEM_TYPES) for i in share.get("items", [])])
    if "deliveries" in share:
        result["deliveries"] = GLib.Variant("aa{sv}", [dictionary(d, DELIVERY_TYPES) for d in share["deliveries"]])
    return result


class StandIn:
    def __init__(self, scenario_path, calls_path):
        self.scenario = json.loads(Path(scenario_path).read_text())
        self.shares = {s["id"]: s for s in self.scenario["shares"]}
        self.calls = open(calls_path, "a", buffering=1)
        self.connection = Gio.bus_get_sync(Gio.BusType.SESSION)
        info = Gio.DBusNodeInfo.new_for_xml(XML).lookup_interface(IFACE)
        self.connection.register_object(PATH, info, self.method, self.get_property, None)
        Gio.bus_own_name_on_connection(self.connection, NAME, Gio.BusNameOwnerFlags.REPLACE, self.owned, None)

    def owned(self, *_):
        self.calls.write(json.dumps({"method": "ready"}) + "\n")

    def get_property(self, connection, sender, path, iface, name):
        account = self.scenario.get("account", {})
        values = {"SignedIn": GLib.Variant("b", account.get("signed-in", True)),
                  "AccountId": GLib.Variant("s", account.get("user-id", "@ada:example.org")),
                  "Homeserver": GLib.Variant("s", account.get("homeserver", "https://example.org")),
                  "Online": GLib.Variant("b", account.get("online", True))}
        return values[name]

    def method(self, connection, sender, path, iface, method, params, invocation):
        args = params.unpack()
        self.calls.write(json.dumps({"method": method, "args": list(args)}) + "\n")
        if method == "GetShare":
            share = self.shares.get(args[0])
            if not share:
                return invocation.return_dbus_error(f"{NAME}.Error.NoSuchShare", "No such share.")
            return invocation.return_value(GLib.Variant.new_tuple(share_variant(share)))
        if method == "ListShares":
            return invocation.return_value(GLib.Variant.new_tuple(
                GLib.Variant("aa{sv}", [share_dict(s) for s in self.shares.values()])))
        if method == "ListDestinations":
            query = args[0].lower()
            found = [d for d in self.scenario["destinations"]
                     if not query or query in d["name"].lower() or query in d.get("alias", "").lower()]
            found.sort(key=lambda d: not d.get("recent", False))
            return invocation.return_value(GLib.Variant.new_tuple(
                GLib.Variant("aa{sv}", [dictionary(d, DEST_TYPES) for d in found])))
        if method == "CompleteShare":
            share = self.shares[args[0]]
            share.update(state="queued", destinations=args[1])
            invocation.return_value(None)
            self.changed(share)
            outcome = self.scenario.get("outcome", "sent")
            GLib.timeout_add(300, self.finish, share, outcome)
            return
        if method == "Retry":
            share = self.shares[args[0]]
            invocation.return_value(None)
            GLib.timeout_add(300, self.finish, share, "sent")
            return
        if method == "Cancel":
            share = self.shares[args[0]]
            share["state"] = "cancelled"
            invocation.return_value(None)
            self.changed(share)
            return
        invocation.return_dbus_error(f"{NAME}.Error.InvalidArgument", f"{method} is not part of this stand-in")

    def finish(self, share, outcome):
        share["deliveries"] = [{"destination": d, "state": "sent" if outcome == "sent" else "failed",
                                "error-name": "" if outcome == "sent" else f"{NAME}.Error.Forbidden",
                                "error-message": "" if outcome == "sent" else "You may not post in this room."}
                               for d in share["destinations"]]
        share["state"] = outcome
        self.changed(share)
        return False

    def changed(self, share):
        self.connection.emit_signal(None, PATH, IFACE, "ShareChanged",
                                    GLib.Variant.new_tuple(GLib.Variant("s", share["id"]), share_variant(share)))


if __name__ == "__main__":
    StandIn(sys.argv[1], sys.argv[2])
    GLib.MainLoop().run()
