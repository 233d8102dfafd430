"""No acknowledged record is lost while brokers crash, hang, restart and move data.

Three combined broker+controller processes hold a topic with replication
factor 3 and ``min.insync.replicas=2``.  A librdkafka producer and a Samsa
producer (both acks=all, idempotent) write all along, and a consumer reads
all along, while faults come one after another, each waited out on what the
cluster shows (new leaders in every node's Metadata, the ISR whole again,
every producer acknowledged again on every partition):

* ``test_..._crashes_hangs_shutdowns_and_moves``, in one run:
  1. SIGKILL of a partition leader, then its restart;
  2. SIGSTOP of a leader for longer than ``replica.lag.time.max.ms``, then SIGCONT
     (the resumed node still believes it leads: a zombie that must not expose or
     keep what it appended alone);
  3. a controlled shutdown (SIGTERM) of the broker leading the most partitions,
     which must fail no record, then its restart;
  4. a reassignment of a partition, its leader replaced, onto a fourth
     (broker-only) node.
* ``test_..._full_cluster_restart``: every node SIGTERMed at once, then all
  started together (the clients reconnect to nodes still starting: see
  test_node_startup.py for what those must answer).

Then the producers stop, every partition is read back from offset 0 and
``checker.check`` proves that nothing acknowledged was lost, duplicated or
reordered and that nothing a consumer saw was later truncated; no record may
have failed (the producers retry for two minutes, far longer than any fault
here lasts); and every
replica's log on disk must equal its leader's, batch for batch.  The figures
(faults, records acknowledged, lost, duplicates, reorderings, produce attempts
retried per fault and client) are printed (``pytest -s``) and attached to the
JUnit report as properties.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.cluster.fault_run import (
    LAG_MAX_S,
    TOPIC,
    Run,
    finish_and_check,
    open_run,
)
from tests.cluster.helpers import admin, wait_until

from samsa.client.metadata import TopicPartition
from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    """Nodes 1-3 up (node 4 joins for the reassignment), the topic created, both
    producers and the reader running and acknowledged on every partition."""
    with (
        LocalCluster(tmp_path, controllers=3, brokers=1) as cluster,
        open_run(cluster, tmp_path, [1, 2, 3]) as state,
    ):
        yield state


def _kill_a_leader_and_restart_it(run: Run) -> None:
    victim = run.agreed_view()[0].leader  # type: ignore[index]
    run.cluster.kill(victim)
    run.down.add(victim)
    run.wait_left_out(victim, "killed")
    run.wait_progress(f"node {victim} killed")
    run.cluster.start([victim])
    run.down.discard(victim)
    run.wait_healthy(f"node {victim} restarted")
    run.wait_progress(f"node {victim} restarted")


def _pause_a_leader_and_resume_it(run: Run) -> None:
    victim = run.agreed_view()[1].leader  # type: ignore[index]
    paused_at = time.monotonic()
    run.cluster.pause(victim)
    run.down.add(victim)
    try:
        run.wait_left_out(victim, "paused")
        run.wait_progress(f"node {victim} paused")
        # Paused for longer than replica.lag.time.max.ms: the node's own view of
        # its followers is stale by then, which is what makes a resumed leader risky.
        wait_until(
            lambda: time.monotonic() - paused_at > 1.5 * LAG_MAX_S,
            10 * LAG_MAX_S,
            "the pause to outlast replica.lag.time.max.ms",
        )
    finally:
        run.cluster.resume(victim)
        run.down.discard(victim)
    run.wait_healthy(f"node {victim} resumed")
    run.wait_progress(f"node {victim} resumed")


def _restart_the_whole_cluster(run: Run) -> None:
    """Every node SIGTERMed at once (each asks for its controlled shutdown while
    the quorum still runs), all exited cleanly, then all started together."""
    nodes = run.up
    run.down.update(nodes)
    with ThreadPoolExecutor(len(nodes)) as pool:
        codes = dict(zip(nodes, pool.map(run.cluster.stop, nodes), strict=True))
    assert set(codes.values()) == {0}, codes
    run.cluster.start(nodes)
    run.down.difference_update(nodes)
    run.wait_healthy("full restart")
    run.wait_progress("full restart", timeout=30)


def _controlled_shutdown(run: Run) -> tuple[float, float]:
    """SIGTERM of the broker leading the most partitions; the window from the
    signal until every producer is acknowledged on every partition again."""
    leaders = run.leaders()
    victim = max(leaders, key=lambda n: len(leaders[n]))
    start = time.monotonic()
    run.down.add(victim)
    assert run.cluster.stop(victim) == 0, run.cluster.nodes[victim].log_text()[-3000:]
    wait_until(
        lambda: (
            (v := run.agreed_view()) is not None and all(p.leader in run.up for p in v.values())
        ),
        30,
        f"leaders away from node {victim}",
    )
    run.wait_progress(f"node {victim} shut down")
    end = time.monotonic()
    run.cluster.start([victim])
    run.down.discard(victim)
    run.wait_healthy(f"node {victim} back after its controlled shutdown")
    run.wait_progress(f"node {victim} back after its controlled shutdown")
    return start, end


def _reassign_onto_the_fourth_broker(run: Run) -> None:
    newcomer = 4
    run.cluster.start([newcomer])
    run.bootstrap_nodes.append(newcomer)
    before = run.agreed_view()[2]  # type: ignore[index]
    # Replace the leader itself: the data is copied to node 4, then leadership moves.
    target = [r for r in before.replicas if r != before.leader] + [newcomer]
    tp = TopicPartition(TOPIC, 2)
    with admin(run.bootstrap) as client:
        errors = client.alter_partition_reassignments({tp: target}, timeout=15)
        assert errors == {tp: None}, errors

        def completed() -> bool:
            if client.list_partition_reassignments([tp], timeout=5):
                return False
            view = run.agreed_view()
            if view is None:
                return False
            p = view[2]
            return (
                list(p.replicas) == target and p.isr == tuple(sorted(target)) and p.leader in target
            )

        wait_until(completed, 60, f"partition 2 moved from {before.replicas} to {target}")
    run.wait_healthy("reassignment")
    run.wait_progress("reassignment")


@pytest.mark.timeout(400)
def test_acknowledged_records_survive_crashes_hangs_shutdowns_and_moves(
    run: Run, record_property: Callable[[str, Any], None]
) -> None:
    run.fault("SIGKILL of a leader + restart", lambda: _kill_a_leader_and_restart_it(run))
    run.fault("SIGSTOP of a leader + SIGCONT", lambda: _pause_a_leader_and_resume_it(run))
    window: list[tuple[float, float]] = []
    run.fault("controlled shutdown + restart", lambda: window.append(_controlled_shutdown(run)))
    run.fault("reassignment onto node 4", lambda: _reassign_onto_the_fourth_broker(run))
    start, end = window[0]
    run.figures.shutdown_failed_records = run.failures_between(start, end)
    run.figures.shutdown_retried_requests = run.retries_between(start, end)
    for p in run.producers:
        for when, what in p.retries_between(start, end):
            print(f"shutdown retry {p.producer_name} +{when - start:.2f}s: {what}")
    finish_and_check(run, record_property)
    assert run.figures.shutdown_failed_records == 0, [
        f for p in run.producers for f in p.failures_between(start, end)
    ]


@pytest.mark.timeout(300)
def test_acknowledged_records_survive_a_full_cluster_restart(
    run: Run, record_property: Callable[[str, Any], None]
) -> None:
    run.fault("full-cluster restart", lambda: _restart_the_whole_cluster(run))
    finish_and_check(run, record_property)
