"""docs/ARCHITECTURE.md's module table against Package.swift, as SwiftPM reads it.

The table is the map a newcomer trusts: each row names what its module may import, and a module
imports only modules above it. Both halves are checked here, so a dependency added in the package
without the map (or the other way round) fails the tests.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# The names the table uses for other packages, by the package's identity in Package.swift.
PACKAGE_NAMES = {"grdb.swift": "GRDB", "swift-log": "swift-log", "swift-nio": "swift-nio",
                 "async-http-client": "AsyncHTTPClient", "swift-nio-ssl": "NIOSSL", "swift-crypto": "swift-crypto",
                 "swift-argument-parser": "ArgumentParser"}


def short(target: str) -> str:
    """FerryCore is "Core" in the table; GLibAdapter, CGLib and the like keep their names."""
    return target.removeprefix("Ferry")


def table() -> list[tuple[str, set[str]]]:
    """(module, what it may import) in the table's order."""
    lines = (ROOT / "docs" / "ARCHITECTURE.md").read_text().splitlines()
    start = lines.index("| module | what it is | may import |") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        module = re.match(r"\| `([\w-]+)`", line).group(1)
        cell = line.rstrip(" |").rsplit(" | ", 1)[1]
        cell = re.sub(r"\([^)]*\)", "", cell)  # remarks in brackets
        names = {name.strip(" `") for name in cell.split(",")} - {"nothing"}
        rows.append((module, names))
    return rows


def package() -> dict[str, set[str]]:
    """Each target's dependencies, named as the table names them."""
    dumped = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, check=True)
    targets = json.loads(dumped.stdout)["targets"]
    own = {t["name"] for t in targets}
    result = {}
    for target in targets:
        names = set()
        for dependency in target.get("dependencies", []):
            if "product" in dependency:
                names.add(PACKAGE_NAMES.get(dependency["product"][1].lower(), dependency["product"][1]))
            else:
                name = (dependency.get("byName") or dependency.get("target"))[0]
                names.add(short(name) if name in own else name)
        result[target["name"]] = names
    return result


@pytest.mark.skipif(shutil.which("swift") is None, reason="needs the Swift toolchain")
def test_each_row_of_the_module_table_names_exactly_what_its_target_depends_on():
    dependencies = package()
    rows = table()
    assert rows, "no module table in docs/ARCHITECTURE.md"
    for module, may_import in rows:
        assert module in dependencies, f"the table lists {module}, which Package.swift does not have"
        assert may_import == dependencies[module], (
            f"{module}: the table says {sorted(may_import)}, Package.swift says {sorted(dependencies[module])}")


@pytest.mark.skipif(shutil.which("swift") is None, reason="needs the Swift toolchain")
def test_a_module_imports_only_modules_above_it_in_the_table():
    rows = table()
    seen: set[str] = set()
    listed = {short(module) for module, _ in rows}
    for module, may_import in rows:
        below = {name for name in may_import if name in listed and name not in seen}
        assert not below, f"{module} imports {sorted(below)}, listed below it"
        seen.add(short(module))
