"""docs/architecture.md is the living map: every package on it, said as its code says it.

The Layout lists each package of ``src/samsa`` with the first line of its
``__init__.py`` docstring; the Imports table says what each package may import,
which ``tests/test_import_layers.py`` enforces.  A package added, moved or
renamed without its line, or a rule changed in one place only, fails here.
"""

from __future__ import annotations

import ast
import re

from tests.docs.doc_blocks import REPO
from tests.test_import_layers import EVERY_PACKAGE, MAY_IMPORT

PAGE = REPO / "docs" / "architecture.md"
SRC = REPO / "src" / "samsa"
ENTRY = re.compile(r"^\s*- `([\w/]+)/`: (.+)$")
ROW = re.compile(r"^\| (.+?) \| (.+?) \| .* \|$")
NAME = re.compile(r"`(\w+)`")


def section(title: str) -> list[str]:
    lines = PAGE.read_text().splitlines()
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def purpose(package_dir: str) -> str:
    docstring = ast.get_docstring(ast.parse((SRC / package_dir / "__init__.py").read_text()))
    return (docstring or "").splitlines()[0] if docstring else ""


def test_every_package_is_on_the_map_with_its_purpose() -> None:
    on_map = {m.group(1): m.group(2) for line in section("Layout") if (m := ENTRY.match(line))}
    packages = sorted(
        str(init.parent.relative_to(SRC)) for init in SRC.rglob("__init__.py") if init.parent != SRC
    )
    problems = [f"{p}/: no docstring in its __init__.py" for p in packages if not purpose(p)]
    problems += [f"{p}/: not on the map" for p in packages if p not in on_map]
    problems += [f"{p}/: on the map, not in src/samsa" for p in on_map if p not in packages]
    problems += [
        f"{p}/: the map says {on_map[p]!r}, its __init__.py {purpose(p)!r}"
        for p in packages
        if p in on_map and purpose(p) and on_map[p] != purpose(p)
    ]
    assert not problems, "docs/architecture.md, Layout:\n" + "\n".join(problems)


def test_the_imports_table_says_what_the_layer_test_enforces() -> None:
    said: dict[str, frozenset[str]] = {}
    for line in section("Imports"):
        row = ROW.match(line)
        if not row or row.group(1) in ("package", "---"):
            continue
        who, may = NAME.findall(row.group(1)), row.group(2)
        for package in who:
            if may == "nothing":
                said[package] = frozenset()
            elif may.startswith("every package but "):
                said[package] = EVERY_PACKAGE - {package, *NAME.findall(may)}
            else:
                said[package] = frozenset(NAME.findall(may))
    differ = [
        f"{p}: the page says {sorted(said.get(p, ()))}, the test {sorted(MAY_IMPORT.get(p, ()))}"
        for p in sorted(set(said) | set(MAY_IMPORT))
        if said.get(p) != MAY_IMPORT.get(p)
    ]
    assert not differ, "docs/architecture.md, Imports table vs MAY_IMPORT:\n" + "\n".join(differ)
