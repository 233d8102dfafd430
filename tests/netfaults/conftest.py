"""The fault run both network tests start from: three combined nodes, one per
network namespace, with the producers, the reader and the checker of
``tests.cluster.fault_run`` in the root namespace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.fault_run import Run, open_run
from tests.netfaults.network import HostNetwork, host_network

from samsa.testing.cluster import LocalCluster

__all__ = ["NODES", "host_network", "run"]

NODES = [1, 2, 3]


@pytest.fixture
def run(tmp_path: Path, host_network: HostNetwork) -> Iterator[Run]:
    with (
        LocalCluster(
            tmp_path,
            controllers=3,
            hosts={n: host_network.address(n) for n in NODES},
            command_prefix=host_network.command_prefix,
        ) as cluster,
        open_run(cluster, tmp_path, NODES) as state,
    ):
        yield state
