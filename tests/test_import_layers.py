"""The import rules of docs/architecture.md, read from the source with ``ast``.

Imports flow one way: cli -> server -> the subsystems (controller, replication,
coordinator, transaction, share, storage, ...) -> protocol; raft stands on
protocol and storage, the client on protocol, spark on the client (and on
tiered's readers); nothing imports the server or the command but themselves;
no two packages (nor two sub-packages of one package) import each other,
however indirectly; and no folder is a drawer of more than 15 loose modules.

Nothing is imported or run: every ``import`` statement under ``src/samsa`` is
read, those inside functions and under ``TYPE_CHECKING`` included, since each
says what a module knows about.  A failure names the file and line of each
import that breaks a rule.  Where the code breaks a rule for a reason, the one
import is recorded in ``EXCEPTIONS`` with that reason; an exception that no
code needs any more fails too, so the list stays true.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "samsa"

GROUND = frozenset({"errors", "eventloop"})
"""Kafka's error codes (``samsa/errors.py``) and the asyncio helpers: any
package above the wire may stand on them."""

# Each package (``samsa.errors`` counts as one) -> the other packages it may
# import.  docs/architecture.md's Imports table says the same in words, and
# tests/docs/test_layout_map.py checks that the two agree.
MAY_IMPORT: dict[str, frozenset[str]] = {
    # The ground: the wire and the error codes know nothing of Samsa.
    "errors": frozenset(),
    "protocol": frozenset({"errors"}),
    "eventloop": frozenset({"errors"}),
    # The subsystems, each on what is below it.
    "storage": GROUND | {"protocol"},
    # Broker settings give every topic config its default (config/synonyms.py
    # reads storage's topic config table), so config stands on storage.
    "config": frozenset({"errors", "storage", "protocol"}),
    "security": GROUND | {"config", "protocol"},
    "net": GROUND | {"security", "config", "protocol"},
    "raft": GROUND | {"storage", "protocol"},
    "controller": GROUND | {"storage", "config", "protocol"},
    # The group coordinator is handed its storage by the broker (coordinator/__init__.py).
    "coordinator": GROUND | {"protocol"},
    "transaction": GROUND | {"coordinator", "protocol"},
    "share": GROUND | {"protocol"},
    "replication": GROUND | {"controller", "net", "storage", "tiered", "config", "protocol"},
    # Tiered storage's parts (stores, __remote_log_metadata, lineage rules, tasks)
    # stand on the log; the partition leaders in replication drive them.
    "tiered": GROUND | {"storage", "config", "protocol"},
    # The HTTP surfaces see the broker through ports they define, never the server.
    "http": GROUND | {"security", "config", "protocol"},
    "console": GROUND | {"http", "controller", "storage", "security", "config", "protocol"},
    # The user's side: the client speaks the wire protocol only; spark reads through it,
    # and reads tiered history straight from the object store with tiered's catalog,
    # stores and segment reads (spark/direct), as no broker stands in between.
    "client": frozenset({"errors", "protocol"}),
    "spark": frozenset({"errors", "client", "tiered"}),
    # Test helpers start brokers as processes and talk to them as clients do.
    "testing": GROUND | {"client", "config", "protocol"},
}
# The schema registry serves HTTP and keeps its state in a topic, as a client.
MAY_IMPORT["registry"] = GROUND | {"client", "http", "security", "config", "protocol"}
EVERY_PACKAGE = frozenset(MAY_IMPORT) | {"server", "cli"}
# The node's assembly: every subsystem; the node reaches other nodes with net,
# never with the client library.
MAY_IMPORT["server"] = EVERY_PACKAGE - {"server", "cli", "testing", "client", "spark"}
# The command: everything but the test helpers.
MAY_IMPORT["cli"] = EVERY_PACKAGE - {"cli", "testing"}

EXCEPTIONS: dict[tuple[str, str], str] = {
    ("samsa.client.network.security", "samsa.config.ssl"): (
        "Kafka's ssl.* settings make the same SSLContext for the broker's listeners and "
        "the client (config/ssl.py imports nothing but samsa.errors)"
    ),
    ("samsa.client.network.sasl_client", "samsa.config.jaas"): (
        "sasl.jaas.config is parsed the same way by the broker and the client "
        "(config/jaas.py imports nothing but samsa.errors)"
    ),
    ("samsa.testing.cluster", "samsa.server.metadata.meta_properties"): (
        "a local cluster's cluster.id in Kafka's format, from the node's own generator: "
        "the one thing samsa.testing takes from the server (its nodes run as processes)"
    ),
}
"""(importing module, imported module) -> why this import may break its package's rule."""

ONLY_THEIR_OWN: dict[str, frozenset[str]] = {
    "cli": frozenset({"cli"}),
    "server": frozenset({"server", "cli"}),
}
"""Nobody imports the node or the command but the packages named."""

MAX_LOOSE_MODULES = 15
BIG_FOLDERS: dict[str, str] = {
    "server/handlers": "one module per Kafka API family, the router's table of them",
    "protocol/messages": "one schema module per Kafka API, a registry loaded by name",
    "client/admin/families": "one module per Admin API family behind the Admin facade, as handlers",
}
"""Folders allowed more than MAX_LOOSE_MODULES, and why."""


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path.relative_to(SRC.parent)}:{self.line} imports {self.imported}"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports() -> tuple[Import, ...]:
    known = modules()
    found = []
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".") if is_package else name.split(".")[:-1]
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                # ``from samsa.config import ssl`` imports the module samsa.config.ssl
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
                ]
            else:
                continue
            found += [
                Import(name, target, path, node.lineno)
                for target in dict.fromkeys(targets)
                if target == "samsa" or target.startswith("samsa.")
            ]
    return tuple(found)


def top(module: str) -> str:
    """The package a module belongs to: ``samsa.client.admin.admin`` -> ``client``."""
    return module.split(".")[1] if "." in module else module


@cache
def packages() -> frozenset[str]:
    return frozenset(m for m, p in modules().items() if p.name == "__init__.py")


def child_of(package: str, module: str) -> str | None:
    """The sub-package of ``package`` that holds ``module`` (None: the module is
    not inside one of its sub-packages)."""
    if not module.startswith(package + "."):
        return None
    child = package + "." + module[len(package) + 1 :].split(".")[0]
    return child if child in packages() else None


def loose_modules(folder: Path) -> list[Path]:
    return [p for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]


def report(title: str, problems: Iterable[str]) -> str:
    return "\n".join([title, *(textwrap.indent(p, "  ") for p in problems)])


def test_every_package_has_a_place_in_the_layers() -> None:
    unplaced = sorted({top(m) for m in modules()} - set(MAY_IMPORT) - {"samsa"})
    assert not unplaced, report(
        "packages with no line in MAY_IMPORT (say what each may import, here and in "
        "docs/architecture.md's Imports table, and give it its line in the Layout):",
        unplaced,
    )


def test_nothing_imports_the_server_or_the_command_but_themselves() -> None:
    wrong = [
        str(i)
        for i in imports()
        if (allowed := ONLY_THEIR_OWN.get(top(i.imported))) is not None
        and top(i.importer) not in allowed
        and (i.importer, i.imported) not in EXCEPTIONS
    ]
    assert not wrong, report(
        "imports of samsa.server or samsa.cli from below them (give what they need a "
        "narrow interface in the package that needs it, as handlers have BrokerApi):",
        wrong,
    )


def test_each_package_imports_only_the_packages_below_it() -> None:
    wrong = [
        f"{i}: {top(i.importer)} may import {', '.join(sorted(MAY_IMPORT[top(i.importer)]))}"
        for i in imports()
        if top(i.importer) in MAY_IMPORT
        and top(i.imported) != top(i.importer)
        and top(i.imported) not in MAY_IMPORT[top(i.importer)]
        and (i.importer, i.imported) not in EXCEPTIONS
    ]
    assert not wrong, report(
        "imports running against the layers (move the code down, or change the rule "
        "in MAY_IMPORT and docs/architecture.md together):",
        wrong,
    )


def test_every_exception_is_still_needed() -> None:
    made = {(i.importer, i.imported) for i in imports()}
    stale = [f"{a} -> {b}" for a, b in EXCEPTIONS if (a, b) not in made]
    assert not stale, report("EXCEPTIONS no code needs any more (remove them):", stale)


def cycles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(node: str) -> Iterator[list[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                yield from visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                yield sorted(component)

    for node in sorted(graph):
        if node not in index:
            yield from visit(node)


def package_cycles() -> Iterator[str]:
    """Cycles between the top-level packages, and between the sub-packages of
    each package, each with the imports that close it."""
    levels: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    edges: dict[tuple[str, str, str], list[Import]] = defaultdict(list)
    for i in imports():
        pairs = [("samsa", f"samsa.{top(i.importer)}", f"samsa.{top(i.imported)}")]
        for package in packages() - {"samsa"}:
            a, b = child_of(package, i.importer), child_of(package, i.imported)
            if a and b:
                pairs.append((package, a, b))
        for level, a, b in pairs:
            if a != b and i.imported != "samsa":
                levels[level][a].add(b)
                edges[level, a, b].append(i)
    for level, graph in sorted(levels.items()):
        for component in cycles(graph):
            lines = [f"between {', '.join(component)}:"]
            for a in component:
                for b in component:
                    made = edges.get((level, a, b), [])
                    if made:
                        more = f" ({len(made)} imports, the first 3)" if len(made) > 3 else ""
                        lines += [f"  {a} -> {b}{more}:", *(f"    {i}" for i in made[:3])]
            yield "\n".join(lines)


def test_no_import_cycle_between_packages() -> None:
    found = list(package_cycles())
    assert not found, report(
        "packages that import each other (one of them must stop knowing the other):", found
    )


def test_no_folder_is_a_drawer_of_loose_modules() -> None:
    crowded = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        folder = init.parent
        loose = loose_modules(folder)
        where = str(folder.relative_to(PACKAGE))
        if len(loose) > MAX_LOOSE_MODULES and where not in BIG_FOLDERS:
            crowded.append(f"src/samsa/{where}/: {len(loose)} modules")
    assert not crowded, report(
        f"folders of more than {MAX_LOOSE_MODULES} loose modules (find their seams and "
        "give each part a sub-package with a one-line purpose):",
        crowded,
    )


def test_the_named_big_folders_are_still_big() -> None:
    small = [w for w in BIG_FOLDERS if len(loose_modules(PACKAGE / w)) <= MAX_LOOSE_MODULES]
    assert not small, report("BIG_FOLDERS no longer needing the exception (remove them):", small)


FIRST_IMPORTS = """
import importlib, sys
for name in sys.argv[1:]:
    for module in [m for m in sys.modules if m == "samsa" or m.startswith("samsa.")]:
        del sys.modules[module]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        print(f"{name}: {exc}")
"""


def test_every_package_imports_as_a_process_first_import() -> None:
    """A cycle between modules shows only when one of them is imported first:
    ``import samsa.storage`` in a fresh process once failed with a circular
    ImportError that every test missed (their conftest imported samsa.config
    first).  One process imports each package with no samsa module loaded."""
    names = [f"samsa.{top(m)}" for m in modules() if m.count(".") == 1]
    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORTS, *sorted(set(names))],
        cwd=SRC.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    failed = done.stdout.splitlines()
    assert not failed, report("packages that fail as a process's first import:", failed)
