"""A desktop notification server (org.freedesktop.Notifications) for a private session bus, playing
the part of the desktop's: it records every Notify call it gets as one JSON line in a file, so a
test can read what Ferry told the person. No real one can run here (they need a display).

    python3 notification_server.py RECORD_FILE    (DBUS_SESSION_BUS_ADDRESS names the bus)
"""

from __future__ import annotations

import json
import sys

from gi.repository import Gio, GLib

INTERFACE = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
  </interface>
</node>
"""


def main(record_path: str) -> int:
    loop = GLib.MainLoop()
    counter = [0]

    def on_call(connection, sender, path, interface, method, parameters, invocation):
        if method == "GetCapabilities":
            invocation.return_value(GLib.Variant("(as)", (["actions", "body", "persistence"],)))
        elif method == "GetServerInformation":
            invocation.return_value(GLib.Variant("(ssss)", ("ferry-test-notifications", "ferry", "1", "1.2")))
        elif method == "CloseNotification":
            invocation.return_value(None)
        elif method == "Notify":
            app_name, replaces_id, icon, summary, body, actions, hints, timeout = parameters.unpack()
            counter[0] += 1
            notification_id = replaces_id or counter[0]
            with open(record_path, "a", encoding="utf-8") as record:
                record.write(json.dumps({"id": notification_id, "app_name": app_name, "summary": summary,
                                         "body": body, "actions": actions,
                                         "desktop-entry": hints.get("desktop-entry")}) + "\n")
            invocation.return_value(GLib.Variant("(u)", (notification_id,)))
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", method)

    def on_bus(connection, name):
        info = Gio.DBusNodeInfo.new_for_xml(INTERFACE)
        connection.register_object("/org/freedesktop/Notifications", info.interfaces[0], on_call, None, None)

    def on_name(connection, name):
        with open(record_path, "a", encoding="utf-8"):
            pass  # the file exists once the name is owned: the test waits for that

    Gio.bus_own_name(Gio.BusType.SESSION, "org.freedesktop.Notifications", Gio.BusNameOwnerFlags.NONE,
                     on_bus, on_name, lambda *a: loop.quit())
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
