"""The client's view of the cluster: brokers, partitions and their leaders.

``Cluster`` is an immutable snapshot, replaced whole on every Metadata
response, so the Sender and application threads can read it without locks.
``Metadata`` holds the current snapshot plus the refresh policy (Kafka's
Metadata/ProducerMetadata): topics are fetched lazily, only those someone asked
for; the snapshot is refreshed every ``metadata.max.age.ms`` and at once after
``request_update()`` (a leader change, an unknown partition, a disconnect), but
never more often than ``retry.backoff.ms``.  Threads that need a topic wait on a
condition that every update signals.

Thread-safety: every method is safe to call from any thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from samsa.client.errors import KafkaTimeoutError
from samsa.errors import ErrorCode, KafkaError

__all__ = ["Cluster", "Metadata", "Node", "PartitionInfo", "TopicPartition"]


class TopicPartition(NamedTuple):
    """A (topic, partition) pair; equal to the plain tuple, which hot paths use."""

    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class Node:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


class Cluster:
    """Immutable snapshot of one Metadata response (or of the bootstrap list)."""

    __slots__ = (
        "available_by_topic",
        "cluster_id",
        "controller_id",
        "leaders",
        "nodes",
        "partitions_by_node",
        "partitions_by_topic",
        "topic_errors",
    )

    def __init__(
        self,
        nodes: Iterable[Node],
        partitions: Iterable[PartitionInfo],
        topic_errors: dict[str, ErrorCode] | None = None,
        cluster_id: str | None = None,
        controller_id: int = -1,
    ) -> None:
        self.nodes: dict[int, Node] = {n.node_id: n for n in nodes}
        self.cluster_id = cluster_id
        self.controller_id = controller_id
        self.topic_errors: dict[str, ErrorCode] = dict(topic_errors or {})
        by_topic: dict[str, list[PartitionInfo]] = {}
        self.leaders: dict[tuple[str, int], int] = {}
        by_node: dict[int, list[tuple[str, int]]] = {}
        for p in partitions:
            by_topic.setdefault(p.topic, []).append(p)
            if p.leader >= 0 and p.leader in self.nodes:
                self.leaders[(p.topic, p.partition)] = p.leader
                by_node.setdefault(p.leader, []).append((p.topic, p.partition))
        self.partitions_by_topic: dict[str, list[PartitionInfo]] = {
            t: sorted(ps, key=lambda p: p.partition) for t, ps in by_topic.items()
        }
        self.available_by_topic: dict[str, list[int]] = {
            t: [p.partition for p in ps if (t, p.partition) in self.leaders]
            for t, ps in self.partitions_by_topic.items()
        }
        self.partitions_by_node = by_node

    @classmethod
    def bootstrap(cls, servers: list[tuple[str, int]]) -> Cluster:
        """Seed snapshot: bootstrap addresses as nodes with negative ids, as Kafka does."""
        return cls([Node(-(i + 1), h, p) for i, (h, p) in enumerate(servers)], [])

    @property
    def is_bootstrap(self) -> bool:
        return all(n < 0 for n in self.nodes)

    def leader_for(self, tp: tuple[str, int]) -> Node | None:
        node_id = self.leaders.get(tp)
        return None if node_id is None else self.nodes[node_id]

    def partition_count(self, topic: str) -> int | None:
        ps = self.partitions_by_topic.get(topic)
        return len(ps) if ps else None


def cluster_from_response(body: dict[str, Any]) -> Cluster:
    nodes = [Node(b["node_id"], b["host"], b["port"], b.get("rack")) for b in body["brokers"]]
    partitions: list[PartitionInfo] = []
    errors: dict[str, ErrorCode] = {}
    for t in body["topics"]:
        name = t["name"]
        if name is None:
            continue
        code = ErrorCode(t["error_code"])
        if code is not ErrorCode.NONE:
            errors[name] = code
            continue
        for p in t["partitions"]:
            # LEADER_NOT_AVAILABLE partitions stay listed, without a leader.
            leader = p["leader_id"] if p["error_code"] in (0, 9) else -1
            partitions.append(
                PartitionInfo(
                    name,
                    p["partition_index"],
                    leader,
                    p.get("leader_epoch", -1),
                    tuple(p["replica_nodes"]),
                    tuple(p["isr_nodes"]),
                )
            )
    return Cluster(nodes, partitions, errors, body.get("cluster_id"), body.get("controller_id", -1))


class Metadata:
    """Current cluster snapshot plus when to refresh it and for which topics."""

    def __init__(
        self,
        bootstrap: list[tuple[str, int]],
        max_age_ms: int = 300000,
        refresh_backoff_ms: int = 100,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self.max_age_ms = max_age_ms
        self.refresh_backoff_ms = refresh_backoff_ms
        self._clock = clock_ms or (lambda: int(time.monotonic() * 1000))
        self._cond = threading.Condition()
        self.cluster = Cluster.bootstrap(bootstrap)
        self._topics: set[str] = set()
        self._need_update = True
        self._last_refresh_ms = 0
        self._last_success_ms = 0
        self.version = 0
        self.fatal: KafkaError | None = None
        """An error no retry will fix (a refused SASL login); waits raise it."""
        self._closed = False

    # -- what to fetch ------------------------------------------------------
    def topics(self) -> list[str]:
        with self._cond:
            return sorted(self._topics)

    def add_topic(self, topic: str) -> bool:
        """Start tracking ``topic``; True (and an update is requested) if it is new."""
        with self._cond:
            if topic in self._topics:
                return False
            self._topics.add(topic)
            self._need_update = True
            # A new topic should not wait for the refresh backoff (Kafka's
            # requestUpdateForNewTopics).
            self._last_refresh_ms = 0
            return True

    def request_update(self) -> int:
        """Ask for a refresh as soon as the backoff allows; returns the current version."""
        with self._cond:
            self._need_update = True
            return self.version

    @property
    def update_requested(self) -> bool:
        return self._need_update

    def time_to_next_update_ms(self, now_ms: int) -> int:
        """0 when a Metadata request is due now."""
        with self._cond:
            expire = self._last_success_ms + self.max_age_ms - now_ms
            if self._need_update:
                expire = 0
            backoff = self._last_refresh_ms + self.refresh_backoff_ms - now_ms
            return max(0, expire, backoff if self._last_refresh_ms else 0)

    # -- results ------------------------------------------------------------
    def update(self, body: dict[str, Any], now_ms: int) -> None:
        cluster = cluster_from_response(body)
        with self._cond:
            if not cluster.nodes:
                # A reply without brokers cannot route anything; keep the old view.
                self._last_refresh_ms = now_ms
                return
            self.cluster = cluster
            self._need_update = any(
                code.retriable and code is not ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                for code in cluster.topic_errors.values()
            ) or any(
                len(cluster.available_by_topic.get(t, ())) < len(ps)
                for t, ps in cluster.partitions_by_topic.items()
            )
            self._last_refresh_ms = now_ms
            self._last_success_ms = now_ms
            self.version += 1
            self._cond.notify_all()

    def failed_update(self, now_ms: int) -> None:
        with self._cond:
            self._last_refresh_ms = now_ms
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- waiting (application threads) --------------------------------------
    def wait_for_topic(
        self,
        topic: str,
        timeout_ms: float,
        wakeup: Callable[[], None] | None = None,
        partition: int | None = None,
    ) -> Cluster:
        """Block until the snapshot knows ``topic`` (and ``partition``), or raise.

        Raises KafkaTimeoutError after ``timeout_ms`` (max.block.ms) and
        KafkaError for a topic error the broker reports as permanent.
        """
        cluster = self.cluster
        count = cluster.partition_count(topic)
        if count is not None and (partition is None or partition < count):
            return cluster
        deadline = time.monotonic() + timeout_ms / 1000.0
        self.add_topic(topic)
        with self._cond:
            while True:
                cluster = self.cluster
                count = cluster.partition_count(topic)
                if count is not None:
                    if partition is None or partition < count:
                        return cluster
                    raise KafkaError(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        f"partition {partition} of topic {topic!r} does not exist ({count} partitions)",
                    )
                code = cluster.topic_errors.get(topic)
                if code is not None and not code.retriable:
                    raise KafkaError(code, f"topic {topic!r}")
                if self._closed:
                    raise KafkaError(ErrorCode.NETWORK_EXCEPTION, "client closed")
                if self.fatal is not None:
                    raise self.fatal
                left = deadline - time.monotonic()
                if left <= 0:
                    raise KafkaTimeoutError(
                        f"topic {topic!r} not present in metadata after {int(timeout_ms)} ms"
                    )
                self._need_update = True
                if wakeup is not None:
                    wakeup()
                self._cond.wait(min(left, 0.05))
