"""What a restarting node tells clients before it is ready.

Clients reconnect to a restarting broker as soon as its port accepts
connections, and they keep the API versions its first ApiVersions answer
listed for the life of that connection.  So from the moment the client
listener accepts a connection, that answer must list the client APIs
(Produce, Fetch, Metadata): a connection made earlier must either wait or
be refused.  The fault tests found the opposite (see
``test_replication_faults.STARTUP_API_VERSIONS_BUG``, now fixed); this test
pins it deterministically: every node of the cluster restarts at once (so each waits
for a Raft election before it is ready) and one of them is probed every few
milliseconds while it starts.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.helpers import call

from samsa.testing_cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

API_VERSIONS, PRODUCE, FETCH, METADATA = 18, 0, 1, 3
CLIENT_APIS = {PRODUCE, FETCH, METADATA}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, controllers=3) as c:
        c.start()
        yield c


def _api_keys(address: str) -> set[int] | None:
    """The API keys one fresh connection's ApiVersions answer lists (None: no answer)."""
    body = {"client_software_name": "startup-probe", "client_software_version": "1"}
    try:
        answer = call(address, API_VERSIONS, 3, body)
    except OSError:
        return None
    return {entry["api_key"] for entry in answer["api_keys"]}


@pytest.mark.timeout(120)
def test_a_restarting_node_never_advertises_fewer_than_the_client_apis(
    cluster: LocalCluster,
) -> None:
    # A whole-cluster restart: each node's startup then takes a Raft election at
    # least, so the window before the node is ready is never a race to hit.
    for node_id in cluster.nodes:
        cluster.kill(node_id)
    launched = {node_id: node.launch() for node_id, node in cluster.nodes.items()}
    ready = launched[1]
    address = f"127.0.0.1:{cluster.client_ports[1]}"
    answers: list[tuple[float, set[int]]] = []
    started = time.monotonic()
    while not ready.is_set():
        keys = _api_keys(address)
        if keys is not None:
            answers.append((time.monotonic() - started, keys))
        ready.wait(0.005)
    for node_id, event in launched.items():
        cluster.nodes[node_id].wait_ready(event, 60)
    final = _api_keys(address)
    assert final is not None and final >= CLIENT_APIS
    short = [(round(at, 3), sorted(keys)) for at, keys in answers if not keys >= CLIENT_APIS]
    assert short == [], (
        f"{len(short)} of {len(answers)} ApiVersions answers during startup lacked "
        f"Produce/Fetch/Metadata, first {short[:2]}"
    )
