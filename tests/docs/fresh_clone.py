"""A fresh clone of this repository, as a newcomer gets it, and a newcomer's shell.

The clone is of the commit checked out here, with the working tree's uncommitted
changes and new files laid over it, so a developer tests what they see (in CI
the tree is clean and the overlay is empty).  The newcomer's environment is this
one without the test's venv: no ``samsa`` on PATH until the README puts it there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.docs.doc_blocks import REPO


def _git(*argv: str, cwd: Path = REPO, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", *argv], cwd=cwd, input=stdin, capture_output=True, timeout=120, check=True
    )
    return done.stdout


def fresh_clone(dest: Path) -> Path:
    _git("clone", "--quiet", str(REPO), str(dest))
    head = _git("rev-parse", "HEAD").decode().strip()
    _git("checkout", "--quiet", "--detach", head, cwd=dest)
    changes = _git("diff", "HEAD", "--binary")
    if changes:
        _git("apply", "--whitespace=nowarn", cwd=dest, stdin=changes)
    for name in _git("ls-files", "--others", "--exclude-standard", "-z").split(b"\0"):
        relative = name.decode()
        if not relative or relative.startswith(".kafka-reference"):
            continue
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / relative, dest / relative, follow_symlinks=False)
    return dest


def newcomer_env() -> dict[str, str]:
    """This environment less the test's venv and Samsa's own variables."""
    venv_bin = str(Path(sys.executable).parent)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SAMSA_", "PYTEST_", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env
