"""Every command block of the README and docs/ is marked, and what the docs name exists.

Fast checks, no broker: a shell or Python block without a ``<!-- test: ... -->``
marker (or with one that says nothing docs/README.md lists) fails, so an example
cannot drift from the code untested; every ``python -m bench...`` command names a
benchmark whose arguments accept it; every relative link leads to a file.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests.docs.doc_blocks import REPO, all_blocks, doc_files

PENDING_FILES: set[str] = set()
"""Linked pages another change writes (the console's security); drop each once it lands."""
BENCH_COMMAND = re.compile(r"python -m (bench(?:\.\w+)+)([^`|#\n]*)")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH_SPAN = re.compile(
    r"`((?:\.\.?/)?(?:[\w.-]+/)+[\w.-]+\.(?:py|md|sh|properties|log|json|toml))`"
)
"""A file named in a code span: `src/samsa/server/node.py`, `tests/cluster/checker.py`."""
MADE_BY_COMMANDS = {"cluster-data/nodeN.properties"}
"""Paths the docs name that a command writes (examples/cluster/run.sh)."""


def test_every_command_block_is_marked() -> None:
    problems = [
        f"{b.where}: {b.language} block: {b.marker_error or 'no <!-- test: ... --> marker'}"
        for b in all_blocks()
        if b.is_command and (b.marker is None or b.marker_error)
    ]
    problems += [f"{b.where}: a fence without a language" for b in all_blocks() if not b.language]
    assert not problems, "\n".join(problems)


def test_the_readme_is_a_front_page() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) < 300, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_files_named_in_code_spans_exist() -> None:
    """A path the docs name (from the repository's root or the page) is there: a
    moved module or test is found here, not by a reader."""
    missing = []
    for path in [*doc_files(), REPO / "bench" / "README.md", REPO / "bench/results/README.md"]:
        for named in PATH_SPAN.findall(path.read_text()):
            places = [(base / named).resolve() for base in (REPO, path.parent)]
            inside = [p for p in places if p.is_relative_to(REPO)]  # a clone has nothing beside it
            if named not in MADE_BY_COMMANDS and not any(p.exists() for p in inside):
                missing.append(f"{path.relative_to(REPO)}: {named}")
    assert not missing, "\n".join(missing)


def test_relative_links_lead_to_files() -> None:
    missing = []
    for path in [*doc_files(), REPO / "bench" / "README.md", REPO / "bench/results/README.md"]:
        for target in LINK.findall(path.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (path.parent / target).resolve()
            if not resolved.is_relative_to(REPO):  # a clone has nothing beside it
                missing.append(f"{path.relative_to(REPO)}: {target} is outside the repository")
            elif not resolved.exists() and str(resolved.relative_to(REPO)) not in PENDING_FILES:
                missing.append(f"{path.relative_to(REPO)}: {target}")
    assert not missing, "\n".join(missing)


CHECK_ARGS = """
import argparse, contextlib, io, runpy, sys
class Parsed(Exception):
    pass
known = argparse.ArgumentParser.parse_known_args
def parse_then_stop(self, args=None, namespace=None):
    _, extras = known(self, args, namespace)
    if extras:
        self.error("unrecognized arguments: " + " ".join(extras))
    raise Parsed
def parse_known_then_stop(self, args=None, namespace=None):
    known(self, args, namespace)
    raise Parsed
argparse.ArgumentParser.parse_args = parse_then_stop
argparse.ArgumentParser.parse_known_args = parse_known_then_stop
failed = []
for line in sys.stdin.read().splitlines():
    module, *argv = line.split()
    sys.argv = [module, *argv]
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        failed.append(f"{line}: ran without parsing arguments")
    except Parsed:
        pass
    except SystemExit as exc:
        if exc.code not in (0, None):  # --help exits 0
            failed.append(f"{line}: refused ({exc.code}): {said.getvalue()[-300:]}")
    except Exception as exc:
        failed.append(f"{line}: {exc!r}")
print("\\n".join(failed))
"""


def test_bench_commands_in_the_docs_name_benchmarks_and_arguments_they_take() -> None:
    commands = set()
    for path in [*doc_files(), REPO / "bench" / "README.md"]:
        for module, args in BENCH_COMMAND.findall(path.read_text()):
            commands.add(f"{module}{args}".strip())
    assert len(commands) > 20, commands
    done = subprocess.run(
        [sys.executable, "-c", CHECK_ARGS],
        input="\n".join(sorted(commands)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout


def test_fresh_clone_blocks_are_the_readmes() -> None:
    """tests/docs/test_fresh_clone.py runs the README's; elsewhere they would not run."""
    stray = [
        b.where
        for b in all_blocks()
        if b.marker is not None
        and b.marker.kind.startswith("fresh-clone")
        and b.path != REPO / "README.md"
    ]
    assert not stray, stray


def test_no_stale_claims_about_what_exists() -> None:
    """Issue 38, item 8: the README said "no authorizer yet" beside its ACL section."""
    import samsa.security.authorizer  # noqa: F401  (it exists)

    for path in doc_files():
        assert "no authorizer yet" not in path.read_text(), path
