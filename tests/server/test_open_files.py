"""The broker raises its open-file limit at start (10,000 partitions need it)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from samsa.server.connections.open_files import WANTED_OPEN_FILES
from samsa.testing import BrokerProcess

CAP_SYS_RESOURCE = 24


def may_raise_hard_limit() -> bool:
    """Root in a container often lacks CAP_SYS_RESOURCE, which raising needs."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return False


PRIVILEGED = may_raise_hard_limit()


def open_files_limits(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no 'Max open files' line")


def low_limits() -> None:
    """What a distribution's default (or a container's) gives a process."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 4096))


def test_a_started_broker_runs_with_kafkas_recommended_limit(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        assert broker.proc is not None
        soft, _ = open_files_limits(broker.proc.pid)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if PRIVILEGED or hard >= WANTED_OPEN_FILES:
            assert soft >= WANTED_OPEN_FILES
        else:
            assert soft == hard
            assert "Kafka recommends at least 100000" in broker.log_text()
    finally:
        broker.stop()


def run_raise() -> subprocess.CompletedProcess[str]:
    code = (
        "import logging, resource; logging.basicConfig(level=logging.INFO);"
        "from samsa.server.connections.open_files import raise_open_files_limit;"
        "print(raise_open_files_limit(), *resource.getrlimit(resource.RLIMIT_NOFILE))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=low_limits,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


@pytest.mark.skipif(not PRIVILEGED, reason="raising the hard limit needs CAP_SYS_RESOURCE")
def test_root_raises_the_hard_limit_too() -> None:
    done = run_raise()
    assert done.stdout.split() == [str(WANTED_OPEN_FILES)] * 3
    assert "open file limit raised from 1024 (hard 4096)" in done.stderr


@pytest.mark.skipif(PRIVILEGED, reason="this process may raise the hard limit")
def test_without_privilege_the_soft_limit_rises_to_the_hard_one_with_advice() -> None:
    done = run_raise()
    assert done.stdout.split() == ["4096", "4096", "4096"]
    assert "Kafka recommends at least 100000" in done.stderr
