"""The README followed on a fresh clone, verbatim (issue 38, items 1, 2, 3 and 5).

A clone of this repository sets itself up with the README's own command, then
the README's ``fresh-clone`` blocks run in order, in one shell, as a newcomer
pastes them: ``samsa`` is on PATH only because the README activates the venv,
the broker is started the README's way, and the consume example ends by itself.

The set-up needs the package index, which a network namespace cannot reach, so
``./scripts/venv.sh`` (the quick start's first line) runs once first on the
machine's network; the README's blocks then run on a loopback of their own
(their ports are the documented ones) and find the set-up done, which is what
a second start must do anyway.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from tests.docs.doc_blocks import REPO, parse
from tests.docs.fresh_clone import fresh_clone, newcomer_env
from tests.docs.isolation import own_loopback
from tests.docs.shell_session import Background, ShellSession

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

TEST_TOOLCHAIN = ("pytest", "confluent_kafka", "pyspark", "playwright", "mypy")


def test_the_readme_on_a_fresh_clone(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path / "samsa")
    env = newcomer_env()
    setup = subprocess.run(
        ["./scripts/venv.sh"], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert setup.returncode == 0, setup.stderr
    assert "installing Samsa into .venv" in setup.stderr, setup.stderr

    # Item 5: the broker's set-up installs Samsa alone, not the test toolchain...
    for module in TEST_TOOLCHAIN:
        probe = subprocess.run([".venv/bin/python", "-c", f"import {module}"], cwd=clone)
        assert probe.returncode != 0, f"{module} was installed for the broker"
    # ...and a later start finds nothing to do.
    started = time.monotonic()
    again = subprocess.run(
        ["./scripts/venv.sh"], cwd=clone, env=env, capture_output=True, text=True, timeout=60
    )
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert time.monotonic() - started < 10

    blocks = [
        b
        for b in parse(REPO / "README.md")
        if b.marker is not None and b.marker.kind.startswith("fresh-clone")
    ]
    assert [b.marker.kind for b in blocks if b.marker] == [
        "fresh-clone background", "fresh-clone", "fresh-clone", "fresh-clone",
    ]  # fmt: skip
    outputs: list[str] = []
    with own_loopback() as prefix:
        session = ShellSession(clone, env, prefix)
        try:
            for block in blocks:
                assert block.marker is not None
                if block.marker.kind == "fresh-clone background":
                    broker = Background(block, clone, env, prefix)
                    broker.wait_for(block.marker.wait_for, block.marker.times)
                    outputs.append(broker.stop())  # Ctrl-C, before the quick start's own
                else:
                    outputs.append(session.run(block))
        finally:
            session.close()

    run_broker, quick_start, python_client, cli = outputs
    assert "installing" not in run_broker, run_broker  # set-up skipped: nothing changed
    # Both records, and the consume example ended by itself (the block finished).
    assert "k1\thello\n" in quick_start and "k2\tworld\n" in quick_start, quick_start
    assert python_client.count("b'hello ") == 3, python_client
    assert "my-group" in cli and "greetings" in cli, cli
