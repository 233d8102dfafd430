"""Every module of ``bench/`` imports, and every benchmark starts (``--help``).

Benchmarks are not run in CI (they measure, and take minutes), so a module
moved between ``bench/`` sub-packages or a renamed import would otherwise be
found only by the next person who runs it.  ``python -m bench --check`` does the
whole walk in one process (a few seconds).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_bench_module_imports_and_every_bench_answers_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 problems" in done.stdout, done.stdout


def test_the_listing_names_the_benchmarks_by_their_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "python -m bench.replication.replication_bench\n" in done.stdout
    assert "python -m bench.common.load_client\n" in done.stdout
