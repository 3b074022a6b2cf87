#!/usr/bin/env bash
# The code's layout, checked (make check; make format rewrites it): swift format's rules from
# .swift-format, and no line over 120 characters. The one exception is a translatable message:
# tr("…") takes a StaticString, so a message stays one literal on its own line, the form the
# C scanner of scripts/update-pot.sh reads.
set -euo pipefail
cd "$(dirname "$0")/.."

"${SWIFT:-swift}" format lint --strict --recursive --parallel Sources Tests Package.swift

python3 - <<'PY'
import pathlib, re, sys
long = 0
for path in sorted(p for top in ("Sources", "Tests") for p in pathlib.Path(top).rglob("*.swift")):
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, 1):
        recent = "\n".join(lines[max(0, number - 4):number - 1])
        message = re.match(r'\s*"', line) and re.search(r"(^|[^A-Za-z])tr[nc]?\(", recent)
        if len(line) > 120 and not message:
            print(f"{path}:{number}: {len(line)} characters, over 120")
            long += 1
sys.exit(1 if long else 0)
PY
