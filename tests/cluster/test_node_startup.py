"""What a restarting node tells clients before it is ready.

Clients reconnect to a restarting broker as soon as its port accepts
connections, and they keep the API versions its first ApiVersions answer
listed for the life of that connection.  So until the broker is ready, an
ApiVersions answer must list the client APIs (Produce, Fetch, Metadata) or
not come at all (connection refused or closed): the fault tests found nodes
answering with ApiVersions alone, which wedged librdkafka (it never sent
Metadata on that connection again) and the Samsa producer (UNSUPPORTED_VERSION
on its batches) after a full-cluster restart.  Such requests now wait until
the broker is ready (server/connections/listener_routing.py), as they do on Kafka, instead
of being closed: a client that connected early is answered, not dropped.

Every node of the cluster restarts at once, so each waits at least for a Raft
election before it is ready and the window is never a race to hit; one node
is probed every few milliseconds while it starts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.helpers import call
from tests.startup_probe import (
    CLIENT_APIS,
    connect_when_accepting,
    read_first_answers,
    send_first_requests,
)

from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

API_VERSIONS = 18


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, controllers=3) as c:
        c.start()
        yield c


def _probe(address: str) -> frozenset[int] | str:
    """The API keys a fresh connection's ApiVersions answer lists, or how the node
    declined: "refused" (nothing listens yet) or "closed" (it hung up)."""
    body = {"client_software_name": "startup-probe", "client_software_version": "1"}
    try:
        answer = call(address, API_VERSIONS, 3, body)
    except ConnectionRefusedError:
        return "refused"
    except OSError:
        return "closed"
    return frozenset(entry["api_key"] for entry in answer["api_keys"])


@pytest.mark.timeout(120)
def test_a_restarting_node_never_advertises_fewer_than_the_client_apis(
    cluster: LocalCluster,
) -> None:
    for node_id in cluster.nodes:
        cluster.kill(node_id)
    launched = {node_id: node.launch() for node_id, node in cluster.nodes.items()}
    ready = launched[1]
    address = f"127.0.0.1:{cluster.client_ports[1]}"
    outcomes: Counter[str] = Counter()
    short: list[tuple[float, list[int]]] = []
    started = time.monotonic()
    while not ready.is_set():
        found = _probe(address)
        if isinstance(found, str):
            outcomes[found] += 1
        else:
            outcomes["answered"] += 1
            if not found >= CLIENT_APIS:
                short.append((round(time.monotonic() - started, 3), sorted(found)))
        ready.wait(0.005)
    for node_id, event in launched.items():
        cluster.nodes[node_id].wait_ready(event, 60)
    final = _probe(address)
    assert not isinstance(final, str) and final >= CLIENT_APIS, final
    assert sum(outcomes.values()) > 0, "the node was ready before the first probe"
    assert short == [], (
        f"{len(short)} ApiVersions answers during startup lacked Produce/Fetch/Metadata "
        f"(probes: {dict(outcomes)}), first {short[:2]}"
    )


@pytest.mark.timeout(120)
def test_a_client_that_connected_before_the_quorum_formed_is_answered(tmp_path: Path) -> None:
    """Node 1 alone cannot be ready (no quorum yet), so its client's first
    requests wait while nodes 2 and 3 start: the quorum forms over the controller
    listeners meanwhile, and the held requests are answered, in order, with the
    client APIs and a complete Metadata."""
    with LocalCluster(tmp_path, controllers=3) as cluster:
        first = cluster.nodes[1]
        first_ready = first.launch()
        with connect_when_accepting(cluster.client_ports[1]) as sock:
            send_first_requests(sock)
            assert not first_ready.is_set()
            cluster.start([2, 3])
            apis, metadata = read_first_answers(sock)
        first.wait_ready(first_ready, 60)
    assert apis >= CLIENT_APIS
    assert 1 in {broker["node_id"] for broker in metadata["brokers"]}
    assert metadata["controller_id"] in cluster.controller_ids


@pytest.mark.timeout(120)
def test_a_cluster_on_shared_listeners_starts_and_answers_early_clients(tmp_path: Path) -> None:
    """With one listener per node for the quorum and clients, a peer's metadata
    Fetch must be answered while the broker starts (it was closed as a client
    request, so no leader could commit and no node became ready), and a
    client's early requests still wait for the broker."""
    with LocalCluster(tmp_path, controllers=3, shared_listeners=True) as cluster:
        launched = {node_id: node.launch() for node_id, node in cluster.nodes.items()}
        with connect_when_accepting(cluster.client_ports[1]) as sock:
            send_first_requests(sock)
            apis, metadata = read_first_answers(sock)
        for node_id, ready in launched.items():
            cluster.nodes[node_id].wait_ready(ready, 60)
    assert apis >= CLIENT_APIS
    assert 1 in {broker["node_id"] for broker in metadata["brokers"]}
