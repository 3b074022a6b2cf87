#!/usr/bin/env python3
"""Marks each entry of a .pot whose English holds {name} placeholders as python-brace-format.

xgettext reads Ferry's Swift as C and offers no brace format for C, so it cannot add the flag
itself; with it, `msgfmt --check` verifies that every translation keeps the same placeholders.

    scripts/pot-brace-flags.py FILE.pot      (rewrites the file)
"""
import re
import sys

PLACEHOLDER = re.compile(r"\{[a-z][a-z0-9_]*\}")


def main(path: str) -> None:
    entries = open(path, encoding="utf-8").read().split("\n\n")
    marked = []
    for entry in entries:
        lines = entry.split("\n")
        msgid_part = entry.split("\nmsgstr")[0]
        if PLACEHOLDER.search(msgid_part.split("msgid", 1)[-1]) and "python-brace-format" not in entry:
            flags = next((i for i, line in enumerate(lines) if line.startswith("#,")), None)
            if flags is None:
                first = next(i for i, line in enumerate(lines) if line.startswith(("msgctxt", "msgid")))
                lines.insert(first, "#, python-brace-format")
            else:
                lines[flags] += ", python-brace-format"
        marked.append("\n".join(lines))
    open(path, "w", encoding="utf-8").write("\n\n".join(marked))


if __name__ == "__main__":
    main(sys.argv[1])
