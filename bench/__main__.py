"""``python -m bench``: every benchmark, with the first line of its docstring.

``python -m bench --check`` imports every module of ``bench`` and starts each
benchmark with ``--help``, in this one process: what ``tests/benchmarks/test_bench_modules.py``
runs, so a moved module or a broken import is found without running any bench.
Run from the repository's root (``bench`` is imported from the current directory).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import pkgutil
import runpy
import sys
from pathlib import Path

import bench

MAIN_GUARD = 'if __name__ == "__main__":'


def modules() -> list[str]:
    """Every module under ``bench``, helpers included, sorted."""
    found = pkgutil.walk_packages(bench.__path__, "bench.")
    return sorted(m.name for m in found if not m.name.endswith("__main__"))


def benchmarks() -> list[str]:
    """The modules that run as a benchmark (``python -m NAME``)."""
    runnable = []
    for name in modules():
        spec = importlib.util.find_spec(name)
        if spec and spec.origin and MAIN_GUARD in Path(spec.origin).read_text():
            runnable.append(name)
    return runnable


def summary(name: str) -> str:
    doc = importlib.import_module(name).__doc__ or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def check() -> list[str]:
    """Problems found: a module that does not import, a bench whose --help fails."""
    problems = []
    for name in modules():
        try:
            importlib.import_module(name)
        except Exception as exc:
            problems.append(f"{name}: import failed: {exc!r}")
    for name in benchmarks():
        argv, sys.argv = sys.argv, [name, "--help"]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                runpy.run_module(name, run_name="__main__", alter_sys=True)
            problems.append(f"{name}: --help did not exit")
        except SystemExit as done:
            if done.code not in (0, None) or "usage:" not in out.getvalue():
                problems.append(f"{name}: --help exited {done.code}: {out.getvalue()[-300:]}")
        except Exception as exc:
            problems.append(f"{name}: --help failed: {exc!r}")
        finally:
            sys.argv = argv
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="import every module, --help each bench")
    args = ap.parse_args()
    if args.check:
        problems = check()
        for line in problems:
            print(line)
        print(f"{len(benchmarks())} benchmarks, {len(modules())} modules: {len(problems)} problems")
        return 1 if problems else 0
    for name in benchmarks():
        print(f"python -m {name}\n    {summary(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
