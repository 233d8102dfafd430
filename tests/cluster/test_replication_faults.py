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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.cluster.checker import CheckReport, check
from tests.cluster.helpers import admin, create_topic, node_metadata, wait_until
from tests.cluster.workload import (
    ConfluentProducer,
    ProducerWorkload,
    Reader,
    SamsaProducer,
    end_offsets,
    read_final_log,
)

from samsa.client.metadata import TopicPartition
from samsa.protocol.record_batch import iter_batches
from samsa.testing_cluster import FAST_SETTINGS, LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "faults"
PARTITIONS = 3
REPLICATION = 3
LAG_MAX_S = int(FAST_SETTINGS["replica.lag.time.max.ms"]) / 1000
PROGRESS = 20
"""Acknowledgements every producer must get on every partition to call the cluster
working again after a fault."""


@dataclass(frozen=True)
class PartitionView:
    leader: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


@dataclass
class Figures:
    faults: list[str] = field(default_factory=list)
    acknowledged: int = 0
    lost: int = 0
    duplicates: int = 0
    reordered: int = 0
    phantom_reads: int = 0
    delivery_failures: int = 0
    shutdown_failed_records: int | None = None
    """Records failed from a controlled shutdown's SIGTERM until producers recover."""
    shutdown_retried_requests: int | None = None
    retries_per_fault: dict[str, dict[str, int]] = field(default_factory=dict)
    replica_batches_compared: int = 0

    def lines(self) -> list[str]:
        return [
            f"faults injected: {len(self.faults)} ({'; '.join(self.faults)})",
            f"records acknowledged: {self.acknowledged}",
            f"lost: {self.lost}, duplicates: {self.duplicates}, reordered: {self.reordered}, "
            f"phantom reads: {self.phantom_reads}",
            f"delivery failures over the whole run: {self.delivery_failures}",
            *(
                [
                    f"controlled shutdown: {self.shutdown_failed_records} records failed, "
                    f"{self.shutdown_retried_requests} produce attempts retried"
                ]
                if self.shutdown_failed_records is not None
                else []
            ),
            f"produce attempts retried per fault: {self.retries_per_fault}",
            f"replica logs identical on disk: {self.replica_batches_compared} batches compared",
        ]


class Run:
    """The cluster, the clients, and the waits on what the cluster shows."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.bootstrap_nodes = [1, 2, 3]
        self.down: set[int] = set()
        """Nodes that are stopped or paused: not asked anything."""
        self.producers: list[ProducerWorkload] = []
        self.reader: Reader | None = None
        self.figures = Figures()

    @property
    def up(self) -> list[int]:
        """Nodes running and not paused: the ones asked what they see."""
        return [
            n
            for n, node in sorted(self.cluster.nodes.items())
            if node.running and n not in self.down
        ]

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap_of(self.bootstrap_nodes)

    # -- what the cluster shows ---------------------------------------------------------
    def view(self, node_id: int) -> dict[int, PartitionView]:
        for topic in node_metadata(self.cluster, node_id)["topics"]:
            if topic["name"] == TOPIC and not topic["error_code"]:
                return {
                    p["partition_index"]: PartitionView(
                        p["leader_id"], tuple(sorted(p["isr_nodes"])), tuple(p["replica_nodes"])
                    )
                    for p in topic["partitions"]
                }
        return {}

    def agreed_view(self) -> dict[int, PartitionView] | None:
        """The partitions as every responsive node sees them, if they all agree."""
        views = [self.view(n) for n in self.up]
        first = views[0]
        if len(first) != PARTITIONS or any(v != first for v in views[1:]):
            return None
        return first

    def healthy(self) -> dict[int, PartitionView] | None:
        """Every partition led by a responsive node, its ISR all of its replicas."""
        view = self.agreed_view()
        if view is None:
            return None
        for p in view.values():
            if p.leader not in self.up or p.isr != tuple(sorted(p.replicas)):
                return None
            if len(p.replicas) != REPLICATION:
                return None
        return view

    def wait_healthy(self, what: str, timeout: float = 60) -> dict[int, PartitionView]:
        return wait_until(self.healthy, timeout, f"every partition whole again ({what})")

    def wait_left_out(self, node: int, how: str) -> None:
        """Until every partition is led by a running node and ``node`` is in no ISR."""

        def left_out() -> bool:
            view = self.agreed_view()
            return view is not None and all(
                p.leader in self.up and node not in p.isr for p in view.values()
            )

        wait_until(left_out, 30, f"leaders and ISRs without the {how} node {node}")

    def leaders(self) -> dict[int, list[int]]:
        view = self.agreed_view() or {}
        out: dict[int, list[int]] = {}
        for index, p in sorted(view.items()):
            out.setdefault(p.leader, []).append(index)
        return out

    def wait_progress(self, what: str, timeout: float = 60) -> None:
        """Every producer acknowledged again on every partition."""
        marks = [p.acked_per_partition() for p in self.producers]

        def moved() -> bool:
            self.check_clients()
            return all(
                now[i] >= before[i] + PROGRESS
                for producer, before in zip(self.producers, marks, strict=True)
                for now in (producer.acked_per_partition(),)
                for i in range(PARTITIONS)
            )

        try:
            wait_until(
                moved,
                timeout,
                f"every producer acknowledged on every partition ({what})",
                errors=(),
            )
        except TimeoutError as exc:
            stalled = [
                f"{p.producer_name}: acks per partition {before} -> {p.acked_per_partition()}, "
                f"{p.unresolved()} unresolved, failures {p.failures[-3:]}, "
                f"last retries {[r for _, r in p.retries[-2:]]}"
                for p, before in zip(self.producers, marks, strict=True)
            ]
            raise AssertionError("\n".join([str(exc), *stalled])) from None

    def check_clients(self) -> None:
        """Fail at once on a dead client."""
        for producer in self.producers:
            if producer.crashed is not None:
                raise AssertionError(f"{producer.name} crashed") from producer.crashed
        if self.reader is not None and self.reader.crashed is not None:
            raise AssertionError("the reader crashed") from self.reader.crashed

    def retries_between(self, start: float, end: float) -> int:
        return sum(len(p.retries_between(start, end)) for p in self.producers)

    def failures_between(self, start: float, end: float) -> int:
        return sum(len(p.failures_between(start, end)) for p in self.producers)

    def fault(self, name: str, inject: Callable[[], None]) -> tuple[float, float]:
        """Run one fault (injection and recovery) and note it; returns its window."""
        start = time.monotonic()
        inject()
        end = time.monotonic()
        self.figures.faults.append(f"{name} ({end - start:.1f}s)")
        self.figures.retries_per_fault[name] = {
            p.producer_name: len(p.retries_between(start, end)) for p in self.producers
        }
        return start, end


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    """Nodes 1-3 up (node 4 joins for the reassignment), the topic created, both
    producers and the reader running and acknowledged on every partition."""
    with LocalCluster(tmp_path, controllers=3, brokers=1) as cluster:
        cluster.start([1, 2, 3])
        state = Run(cluster)
        try:
            create_topic(
                state.bootstrap,
                TOPIC,
                partitions=PARTITIONS,
                replication_factor=REPLICATION,
                configs={"min.insync.replicas": "2"},
            )
            state.wait_healthy("topic created")
            state.producers = [
                ConfluentProducer("librdkafka", state.bootstrap, TOPIC, PARTITIONS),
                SamsaProducer("samsa", state.bootstrap, TOPIC, PARTITIONS),
            ]
            state.reader = Reader("reader", state.bootstrap, TOPIC, PARTITIONS)
            for producer in state.producers:
                producer.start()
            state.reader.start()
            state.wait_progress("start")
            yield state
        finally:
            for producer in state.producers:
                producer.abort()
            if state.reader is not None:
                state.reader.abort()
            for node_id, node in cluster.nodes.items():  # for whoever reads a failure
                (tmp_path / f"node-{node_id}.log").write_text(node.log_text())


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


BatchId = tuple[int, int, int, int]
"""(base offset, last offset, partition leader epoch, CRC) of one stored batch."""


def replica_batches(data_dir: Path, partition: int) -> list[BatchId]:
    """The batches of one replica's log, read from its segment files: a follower
    stores the leader's batches byte for byte, so equal CRCs at equal offsets
    mean equal logs.  (Read while the broker runs: nothing writes once the
    producers stopped and the followers caught up.)"""
    out: list[BatchId] = []
    for segment in sorted((data_dir / f"{TOPIC}-{partition}").glob("*.log")):
        data = segment.read_bytes()
        out.extend(
            (h.base_offset, h.last_offset, h.partition_leader_epoch, h.crc)
            for _, h in iter_batches(data)
        )
    return out


def replicas_agree(run: Run, ends: dict[int, int]) -> int:
    """Number of batches compared once every replica of every partition holds
    exactly the leader's log up to its high watermark; 0 while they differ."""
    view = run.healthy()
    if view is None:
        return 0
    compared = 0
    for partition, p in view.items():
        logs = {n: replica_batches(run.cluster.nodes[n].data_dir, partition) for n in p.replicas}
        first = logs[p.leader]
        if any(batches != first for batches in logs.values()):
            return 0
        if (first[-1][1] + 1 if first else 0) != ends[partition]:
            return 0
        compared += len(first) * len(logs)
    return compared


def _finish_and_check(run: Run, record_property: Callable[[str, Any], None]) -> CheckReport:
    """Stop writing (every record sent must resolve), let the reader catch up,
    read every partition back from offset 0 and check the histories."""
    for producer in run.producers:
        producer.finish(60)
        run.check_clients()
        assert producer.unresolved() == 0, f"{producer.name}: records never resolved"
    ends = end_offsets(run.bootstrap, TOPIC, PARTITIONS)
    reader = run.reader
    assert reader is not None
    wait_until(lambda: reader.caught_up(ends), 60, f"the reader to reach {ends}")
    seen = reader.finish(30)
    final = read_final_log(run.bootstrap, TOPIC, PARTITIONS)
    acks = [ack for producer in run.producers for ack in producer.acks]
    report = check(acks, final, seen)
    figures = run.figures
    figures.replica_batches_compared = wait_until(
        lambda: replicas_agree(run, ends),
        30,
        f"every replica's log equal to its leader's, to {ends}",
    )
    figures.acknowledged = report.acknowledged
    figures.lost = len(report.lost)
    figures.duplicates = len(report.duplicates)
    figures.reordered = len(report.reordered)
    figures.phantom_reads = len(report.phantom_reads)
    figures.delivery_failures = sum(len(p.failures) for p in run.producers)
    for line in [*figures.lines(), report.summary()]:
        print(line)
        record_property("figures", line)
    assert report.ok, "\n".join(report.problems())
    assert report.acknowledged > 0 and report.reads_checked > 0
    failed = {p.producer_name: p.failures[:3] for p in run.producers if p.failures}
    assert not failed, f"records failed: {failed}"
    return report


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
    _finish_and_check(run, record_property)
    assert run.figures.shutdown_failed_records == 0, [
        f for p in run.producers for f in p.failures_between(start, end)
    ]


@pytest.mark.timeout(300)
def test_acknowledged_records_survive_a_full_cluster_restart(
    run: Run, record_property: Callable[[str, Any], None]
) -> None:
    run.fault("full-cluster restart", lambda: _restart_the_whole_cluster(run))
    _finish_and_check(run, record_property)
