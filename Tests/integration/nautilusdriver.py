"""Drives Ferry's GNOME Files extension the way Nautilus does, through the same introspection API
(nautilus-python's Nautilus 4.0): loads the installed extension file, offers it a selection, prints
the menu entries it returns as JSON, and with --activate activates the first and waits until Ferry
answered the D-Bus call it makes.

    python nautilusdriver.py EXTENSION.py [--activate] URI…

The selection's files are Nautilus.FileInfo objects as Nautilus hands them over: here each is a
GObject implementing that interface over a Gio.File (Nautilus's own implementation lives inside
the nautilus program, which is not run)."""

from __future__ import annotations

import importlib.util
import json
import sys

import gi

gi.require_version("Nautilus", "4.0")
from gi.repository import Gio, GLib, GObject, Nautilus  # noqa: E402


class FileInfo(GObject.Object, Nautilus.FileInfo):
    def __init__(self, uri: str):
        super().__init__()
        self.file = Gio.File.new_for_uri(uri)

    def do_get_uri(self) -> str:
        return self.file.get_uri()

    def do_get_uri_scheme(self) -> str:
        return self.file.get_uri_scheme()

    def do_get_name(self) -> str:
        return self.file.get_basename()

    def do_is_directory(self) -> bool:
        return self.file.query_file_type(Gio.FileQueryInfoFlags.NONE, None) == Gio.FileType.DIRECTORY

    def do_is_gone(self) -> bool:
        return False

    def do_get_activation_uri(self) -> str:
        # What Nautilus answers for a file that stands for another (recent:, trash:): its target.
        info = self.file.query_info("standard::target-uri", Gio.FileQueryInfoFlags.NONE, None)
        return info.get_attribute_string("standard::target-uri") or self.file.get_uri()


def main() -> None:
    path, arguments = sys.argv[1], sys.argv[2:]
    activate = "--activate" in arguments
    uris = [a for a in arguments if a != "--activate"]
    spec = importlib.util.spec_from_file_location("ferry_share", path)
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)
    providers = [cls for cls in vars(extension).values()
                 if isinstance(cls, type) and issubclass(cls, Nautilus.MenuProvider) and cls is not Nautilus.MenuProvider]
    items = [item for provider in providers for item in provider().get_file_items([FileInfo(u) for u in uris])]
    print(json.dumps([{"name": i.props.name, "label": i.props.label, "icon": i.props.icon} for i in items],
                     ensure_ascii=False), flush=True)
    if activate and items:
        loop = GLib.MainLoop()
        opened = extension.FerryShareMenu._opened

        def answered(bus, result):
            opened(bus, result)
            loop.quit()

        extension.FerryShareMenu._opened = staticmethod(answered)
        items[0].activate()
        GLib.timeout_add_seconds(60, loop.quit)
        loop.run()


if __name__ == "__main__":
    main()
