"""Run the marked blocks of doc pages against a real broker (docs/README.md).

Pages whose blocks need only a broker share one (``broker`` blocks), started
with ``samsa.testing.BrokerProcess`` on 127.0.0.1:9092 inside the pages' own
loopback; a page that starts its own processes (``background`` blocks) gets a
loopback of its own.  Each page gets a fresh shell, in a scratch directory where
``examples/`` is the repository's, with the test's ``samsa`` and ``python`` first
on ``PATH`` (the docs assume an activated venv).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from tests.docs.doc_blocks import REPO, Block
from tests.docs.shell_session import Background, ShellSession

from samsa.testing import BrokerProcess

RUNNABLE = ("broker", "run", "background")


def runnable(blocks: Iterable[Block]) -> list[Block]:
    return [b for b in blocks if b.marker is not None and b.marker.kind in RUNNABLE]


def has_background(blocks: Iterable[Block]) -> bool:
    return any(b.marker is not None and b.marker.kind == "background" for b in blocks)


def doc_env() -> dict[str, str]:
    """The environment of a reader whose venv is active (this test's own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SAMSA_", "PYTEST_"))}
    bin_dir = Path(sys.executable).parent
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    # examples/cluster/run.sh runs the installed Samsa instead of setting up .venv.
    env["SAMSA_PYTHON"] = sys.executable
    return env


def scratch_dir(base: Path) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    (base / "examples").symlink_to(REPO / "examples")
    return base


class PageBroker:
    """The broker ``broker`` blocks talk to, started when first needed."""

    def __init__(self, data_dir: Path, prefix: Sequence[str]) -> None:
        self.data_dir = data_dir
        self.prefix = list(prefix)
        self.proc: BrokerProcess | None = None

    def ensure(self) -> None:
        if self.proc is None:
            self.proc = BrokerProcess(self.data_dir, port=9092, command_prefix=self.prefix)
            self.proc.start(timeout=180)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc.kill()
            self.proc = None


def run_page(
    blocks: Sequence[Block], workdir: Path, prefix: Sequence[str], broker: PageBroker
) -> None:
    """Run a page's runnable blocks in order; DocBlockFailed on the first that fails."""
    env = doc_env()
    session = ShellSession(workdir, env, prefix)
    background: Background | None = None
    try:
        for block in runnable(blocks):
            assert block.marker is not None
            if block.marker.kind == "background":
                if background is not None:
                    background.stop()
                broker.stop()  # the block starts its own, on the documented ports
                background = Background(block, workdir, env, prefix)
                background.wait_for(block.marker.wait_for, block.marker.times)
                continue
            if block.marker.kind == "broker":
                if background is not None:
                    background.stop()
                    background = None
                broker.ensure()
            session.run(block)
    finally:
        session.close()
        if background is not None:
            background.stop()
