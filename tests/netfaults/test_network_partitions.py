"""No acknowledged record is lost when the network between nodes breaks.

Three combined broker+controller nodes, each in its own network namespace
(``network.HostNetwork``), hold a topic with replication factor 3 and
``min.insync.replicas=2``; the producers (librdkafka and Samsa, idempotent,
acks=all) and the reader run in the root namespace and reach every node all
along.  Faults come one after another, each healed before the next:

1. the leader of a partition cut from both other nodes, but not from the
   clients: a leader that still takes writes and must not acknowledge one it
   cannot replicate, while the others elect a new leader;
2. a one-way link: everything the leader of a partition sends to the others
   is lost, while what they send it arrives;
3. a bridge: nodes 1 and 3 cannot reach each other, node 2 reaches both;
4. random loss of 10 % of what one node sends.

After each fault the network heals and the test waits until every partition is
whole again and every producer acknowledged on every partition; at the end the
checker of the process-fault tests proves nothing acknowledged was lost,
duplicated or reordered, nothing read was later truncated, and every replica
equals its leader batch for batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.cluster.fault_run import Run, finish_and_check
from tests.netfaults.conftest import NODES
from tests.netfaults.network import HostNetwork

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _cut_off(run: Run, net: HostNetwork, victim: int, inject: Callable[[], None], how: str) -> None:
    """Inject a fault that leaves ``victim`` out, wait until the others lead
    without it and acknowledge again, then heal and wait until it is back."""
    inject()
    run.down.add(victim)  # its own view is stale while it is cut off: not asked
    try:
        run.wait_left_out(victim, how)
        run.wait_progress(f"node {victim} {how}")
    finally:
        net.heal()
        run.down.discard(victim)
    run.wait_healthy(f"node {victim} reconnected")
    run.wait_progress(f"node {victim} reconnected")


def _leader_of(run: Run, partition: int) -> int:
    view = run.agreed_view()
    assert view is not None
    return view[partition].leader


def _isolate_a_leader_from_the_quorum(run: Run, net: HostNetwork) -> None:
    victim = _leader_of(run, 0)
    others = [n for n in NODES if n != victim]
    _cut_off(run, net, victim, lambda: net.isolate(victim, others), "isolated from the quorum")


def _one_way_link_from_a_leader(run: Run, net: HostNetwork) -> None:
    victim = _leader_of(run, 1)

    def inject() -> None:
        for other in NODES:
            if other != victim:
                net.drop_from(victim, other)

    _cut_off(run, net, victim, inject, "unheard (one-way loss)")


def _bridge(run: Run, net: HostNetwork) -> None:
    """1 and 3 cannot talk, 2 talks to both: a majority still exists through
    node 2, so the cluster must keep acknowledging on every partition."""
    net.cut(1, 3)
    try:
        run.wait_progress("nodes 1 and 3 cut apart, node 2 bridging")
    finally:
        net.heal()
    run.wait_healthy("bridge healed")
    run.wait_progress("bridge healed")


def _lossy_node(run: Run, net: HostNetwork) -> None:
    victim = _leader_of(run, 2)
    net.lose(victim, 10)
    try:
        run.wait_progress(f"node {victim} losing 10% of what it sends", timeout=90)
    finally:
        net.heal()
    run.wait_healthy("loss healed")
    run.wait_progress("loss healed")


@pytest.mark.timeout(420)
def test_acknowledged_records_survive_network_partitions(
    run: Run, host_network: HostNetwork, record_property: Callable[[str, Any], None]
) -> None:
    net = host_network
    run.fault(
        "leader isolated from the quorum", lambda: _isolate_a_leader_from_the_quorum(run, net)
    )
    run.fault("one-way loss from a leader", lambda: _one_way_link_from_a_leader(run, net))
    run.fault("bridge node between two halves", lambda: _bridge(run, net))
    run.fault("10% loss on a leader", lambda: _lossy_node(run, net))
    finish_and_check(run, record_property)
