"""A data dir belongs to one node of one cluster: a mismatch stops the node at once.

Starting a node on another node's data dir (or another cluster's) would let it
speak for a node it is not, or replay a foreign metadata log; the node refuses
with one line naming the data dir and both values, and exits non-zero.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration


def _start(data_dir: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "samsa.cli", "broker", "--listen", "127.0.0.1:0"]
    cmd += ["--data-dir", str(data_dir)]
    for item in settings:
        cmd += ["--set", item]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def used_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("identity") / "data"
    broker = BrokerProcess(data_dir)
    broker.start()
    assert broker.stop() == 0
    return data_dir


def test_another_node_id_is_refused(used_data_dir: Path) -> None:
    result = _start(used_data_dir, "node.id=2")
    assert result.returncode == 2
    assert "belongs to node.id=1, but this broker is node.id=2" in result.stderr
    assert "Traceback" not in result.stderr


def test_another_cluster_id_is_refused(used_data_dir: Path) -> None:
    result = _start(used_data_dir, "cluster.id=someone-elses")
    assert result.returncode == 2
    assert "belongs to cluster" in result.stderr and "someone-elses" in result.stderr


def test_a_new_cluster_node_without_a_cluster_id_is_refused(tmp_path: Path) -> None:
    result = _start(
        tmp_path / "fresh",
        "node.id=4",
        "process.roles=broker",
        "controller.quorum.voters=1@127.0.0.1:1",
    )
    assert result.returncode == 2
    assert "needs cluster.id" in result.stderr
