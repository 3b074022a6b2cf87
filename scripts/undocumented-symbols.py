#!/usr/bin/env python3
"""Lists the public symbols of a module that have no documentation comment, from the symbol
graphs the compiler wrote (swift build -emit-symbol-graph); exits 1 when there are any.

    scripts/undocumented-symbols.py GRAPH_DIR MODULE...
"""
import json
import sys
from pathlib import Path


def undocumented(graph: Path) -> list[str]:
    found = []
    for symbol in json.loads(graph.read_text())["symbols"]:
        location = symbol.get("location", {})
        uri = location.get("uri", "")
        # Only what the module declares itself: not synthesized members, not other packages.
        if "/Sources/" not in uri or symbol.get("accessLevel") not in ("public", "open") or symbol.get("docComment"):
            continue
        line = location["position"]["line"] + 1
        kind = symbol["kind"]["identifier"].split(".")[-1]
        found.append(f"{uri.split('/Sources/')[1]}:{line}: {kind} {'.'.join(symbol['pathComponents'])}")
    return found


def main() -> int:
    directory, modules = Path(sys.argv[1]), sys.argv[2:]
    total = 0
    for module in modules:
        graphs = [directory / f"{module}.symbols.json", *sorted(directory.glob(f"{module}@*.symbols.json"))]
        if not graphs[0].exists():
            # No graph is not "nothing undocumented": the build did not write it.
            print(f"{module}: no symbol graph in {directory}", file=sys.stderr)
            return 2
        missing = sorted(set(line for graph in graphs if graph.exists() for line in undocumented(graph)))
        print(f"{module}: {len(missing)} public symbols without a documentation comment")
        for line in missing:
            print(f"  Sources/{line}")
        total += len(missing)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
