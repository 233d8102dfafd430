"""A fault run on a cluster: the clients that keep it busy, the waits on what it
shows, and the check at the end, shared by every fault test.

``open_run`` starts both idempotent acks=all producers (librdkafka and Samsa) and
the reader on a topic of ``PARTITIONS`` partitions, replication factor 3 and
``min.insync.replicas=2``; ``Run`` waits on what the nodes answer (never a fixed
sleep); ``finish_and_check`` stops writing, reads every partition back and proves
that nothing acknowledged was lost, duplicated or reordered, that nothing a
consumer saw was later truncated, and that every replica equals its leader.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cluster.checker import CheckReport, check
from tests.cluster.helpers import create_topic, node_metadata, wait_until
from tests.cluster.workload import (
    ConfluentProducer,
    ProducerWorkload,
    Reader,
    SamsaProducer,
    end_offsets,
    read_final_log,
)

from samsa.protocol.batches.record_batch import iter_batches
from samsa.testing.cluster import FAST_SETTINGS, LocalCluster

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


@contextmanager
def open_run(
    cluster: LocalCluster,
    log_dir: Path,
    nodes: list[int],
    topic_configs: dict[str, str] | None = None,
) -> Iterator[Run]:
    """``nodes`` started, the topic created (with ``topic_configs`` besides
    ``min.insync.replicas=2``), both producers and the reader running and
    acknowledged on every partition; every node's log is written to
    ``log_dir`` at the end, for whoever reads a failure."""
    cluster.start(nodes)
    state = Run(cluster)
    state.bootstrap_nodes = list(nodes)
    try:
        create_topic(
            state.bootstrap,
            TOPIC,
            partitions=PARTITIONS,
            replication_factor=REPLICATION,
            configs={"min.insync.replicas": "2", **(topic_configs or {})},
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
        for node_id, node in cluster.nodes.items():
            (log_dir / f"node-{node_id}.log").write_text(node.log_text())


BatchId = tuple[int, int, int, int]
"""(base offset, last offset, partition leader epoch, CRC) of one stored batch."""


def replica_batches(data_dir: Path, partition: int) -> list[BatchId]:
    """The batches of one replica's log, read from its segment files: a follower
    stores the leader's batches byte for byte, so equal CRCs at equal offsets
    mean equal logs.  (Read while the broker runs: nothing writes once the
    producers stopped and the followers caught up.)"""
    out: list[BatchId] = []
    for segment in sorted(replica_dir(data_dir, partition).glob("*.log")):
        data = segment.read_bytes()
        out.extend(
            (h.base_offset, h.last_offset, h.partition_leader_epoch, h.crc)
            for _, h in iter_batches(data)
        )
    return out


def replica_dir(data_dir: Path, partition: int) -> Path:
    """The partition's dir on a node; ``data_dir`` may name several log dirs
    (JBOD, comma-separated), one of which holds it."""
    name = f"{TOPIC}-{partition}"
    dirs = [Path(d) for d in str(data_dir).split(",")]
    return next((d / name for d in dirs if (d / name).is_dir()), dirs[0] / name)


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


def finish_and_check(run: Run, record_property: Callable[[str, Any], None]) -> CheckReport:
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
