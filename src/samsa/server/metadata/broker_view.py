"""A read-only view of one broker, for the metrics endpoint and the web console.

Both need the same answers (partitions with their offsets and sizes, groups
with their lag, the cleaner's health) and neither may change anything, so
they depend on this narrow interface instead of the Broker itself.  It is the
one place that knows where those answers live inside the broker; everything
it returns is a plain value copied at the moment of the call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING

from samsa.protocol.consumer_protocol import decode_assignment
from samsa.replication.tiering.stats import RemoteStorageStats, remote_storage_stats
from samsa.storage.cleaner.manager import CleanerStats

if TYPE_CHECKING:
    from samsa.replication.partition import Partition
    from samsa.security.quotas import ThrottleTotals
    from samsa.server.broker_api import BrokerApi


@dataclass(frozen=True, slots=True)
class PartitionState:
    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    size_bytes: int
    segments: int


@dataclass(frozen=True, slots=True)
class MemberState:
    member_id: str
    client_id: str
    client_host: str
    assignment: dict[str, list[int]]


@dataclass(frozen=True, slots=True)
class GroupState:
    group_id: str
    state: str
    protocol_type: str | None
    protocol: str | None
    members: tuple[MemberState, ...]
    committed: dict[tuple[str, int], int]


@dataclass(frozen=True, slots=True)
class SharePartitionState:
    group_id: str
    topic: str
    partition: int
    start_offset: int
    in_flight: dict[str, int]
    """Records between the start offset and the end of the window, by state."""
    archived_total: int


@dataclass(frozen=True, slots=True)
class ShareGroupState:
    group_id: str
    state: str
    group_epoch: int
    members: tuple[MemberState, ...]


@dataclass(frozen=True, slots=True)
class PartitionSample:
    """What ``/metrics`` shows of one hosted partition (observability's
    partition_metrics writes these as exposition text)."""

    topic: str
    partition: int
    size_bytes: int
    segments: int
    log_start_offset: int
    log_end_offset: int
    leader: bool
    high_watermark: int
    last_stable_offset: int
    open_transactions: int


class BrokerView:
    def __init__(self, broker: BrokerApi) -> None:
        self._broker = broker

    def client_throttling(self) -> ThrottleTotals:
        """Throttle time handed out per quota type (``ClientQuotaManager``)."""
        return self._broker.client_quotas.throttled

    def partitions(self) -> Iterator[PartitionState]:
        node = self._broker.node_id
        image = self._broker.image
        for p in sorted(self._broker.replicas.partitions(), key=lambda p: (p.topic, p.index)):
            log = p.log
            segments = log.segments
            topic = image.topics.get(p.topic)
            registration = None if topic is None else topic.partitions.get(p.index)
            yield PartitionState(
                p.topic,
                p.index,
                registration.leader if registration else node,
                registration.replicas if registration else (node,),
                registration.isr if registration else (node,),
                log.log_start_offset,
                log.log_end_offset,
                p.high_watermark,
                sum(s.size for s in segments),
                len(segments),
            )

    def groups(self) -> list[GroupState]:
        coordinator = self._broker.groups
        if coordinator is None:
            return []
        out = []
        for group in list(coordinator.registry.groups.values()):
            members = []
            for m in group.members.values():
                assignment: dict[str, list[int]] = {}
                if m.assignment and group.protocol_type == "consumer":
                    try:
                        parts = decode_assignment(m.assignment).partitions
                        assignment = {t: sorted(ps) for t, ps in dict(parts).items()}
                    except Exception:  # a non-standard assignment payload
                        assignment = {}
                members.append(MemberState(m.member_id, m.client_id, m.client_host, assignment))
            out.append(
                GroupState(
                    group.group_id,
                    group.state.value,
                    group.protocol_type,
                    group.protocol_name,
                    tuple(sorted(members, key=lambda m: m.member_id)),
                    {tp: c.offset for tp, c in group.offsets.items()},
                )
            )
        return sorted(out, key=lambda g: g.group_id)

    def share_groups(self) -> list[ShareGroupState]:
        """The share groups this broker coordinates (members and their partitions)."""
        coordinator = self._broker.groups
        if coordinator is None:
            return []
        names = {tid: t.name for tid, t in self._broker.image.topics_by_id.items()}
        out = []
        for group in list(coordinator.share.groups.values()):
            members = tuple(
                MemberState(
                    m.member_id,
                    m.client_id,
                    m.client_host,
                    {names.get(t, t.hex()): sorted(ps) for t, ps in m.assignment.items()},
                )
                for m in sorted(group.members.values(), key=lambda m: m.member_id)
            )
            out.append(ShareGroupState(group.group_id, group.state, group.group_epoch, members))
        return sorted(out, key=lambda g: g.group_id)

    def share_partitions(self) -> list[SharePartitionState]:
        """The share partitions of the topic partitions this broker leads."""
        manager = self._broker.share_partitions
        if manager is None:
            return []
        names = {tid: t.name for tid, t in self._broker.image.topics_by_id.items()}
        out = []
        for (group_id, topic_id, index), sp in list(manager.partitions.items()):
            counts = {state.name.lower(): n for state, n in sp.counts().items()}
            out.append(
                SharePartitionState(
                    group_id,
                    names.get(topic_id, topic_id.hex()),
                    index,
                    sp.start_offset,
                    counts,
                    sp.archived_total,
                )
            )
        return sorted(out, key=lambda s: (s.group_id, s.topic, s.partition))

    def transaction_states(self) -> dict[str, int]:
        """Transactional ids this broker coordinates, by Kafka's state name."""
        coordinator = self._broker.transactions
        counts: dict[str, int] = {}
        if coordinator is not None:
            for meta in coordinator.transactions():
                name = meta.state.kafka_name
                counts[name] = counts.get(name, 0) + 1
        return counts

    def partition_count(self) -> int:
        return sum(1 for _ in self._broker.replicas.partitions())

    def hosted_in_order(self) -> list[Partition]:
        """The partitions hosted here by topic and index, the order of ``/metrics``."""
        return sorted(self._broker.replicas.partitions(), key=attrgetter("topic", "index"))

    def partition_samples(self, partitions: Iterable[Partition]) -> Iterator[PartitionSample]:
        """What ``/metrics`` shows of each of ``partitions`` (a slice of
        ``hosted_in_order``), in one pass (see partition_metrics)."""
        for p in partitions:
            log = p.log
            segments = log.segments
            leader = p.is_leader
            yield PartitionSample(
                p.topic,
                p.index,
                sum(s.size for s in segments),
                len(segments),
                log.log_start_offset,
                log.log_end_offset,
                leader,
                p.high_watermark,
                p.last_stable_offset if leader else 0,
                len(p.producer_state.ongoing_transactions()) if leader else 0,
            )

    def partition_health(self) -> tuple[int, int]:
        """(under-replicated partitions this broker leads, offline partitions in the
        cluster): Kafka's UnderReplicatedPartitions (per leader) and
        OfflinePartitionsCount, read from the metadata image."""
        image = self._broker.image
        index = image.brokers_to_isrs  # not every partition of the cluster: a scrape's cost
        under = 0
        for topic_id, partition_id in index.partitions_led_by(self._broker.node_id):
            registration = image.partition(topic_id, partition_id)
            if registration is not None and len(registration.isr) < len(registration.replicas):
                under += 1
        return under, index.offline_partition_count()

    def log_dirs(self) -> dict[str, str | None]:
        """Each log dir -> the error that took it offline, or None while it works."""
        handler = self._broker.log_dir_failures
        offline = handler.offline_dirs()
        return {d: offline.get(d) for d in handler.log_dirs}

    def high_watermark(self, topic: str, partition: int) -> int | None:
        p = self._broker.replicas.get(topic, partition)
        return None if p is None else p.high_watermark

    def parked_fetches(self) -> int:
        return self._broker.replicas.parked_fetches()

    def replica_fetch_bytes(self) -> tuple[int, int]:
        """Bytes this broker's replica fetchers sent and received."""
        traffic = self._broker.replicas.fetcher_traffic
        return (0, 0) if traffic is None else (traffic.bytes_sent, traffic.bytes_received)

    def fetch_sessions(self) -> int:
        return len(self._broker.fetch_sessions)

    def remote_storage(self) -> RemoteStorageStats | None:
        """Tiered storage's metrics (None when it is off)."""
        tiering = self._broker.replicas.tiering
        return None if tiering is None else remote_storage_stats(tiering)

    def cleaner_stats(self) -> CleanerStats | None:
        task = self._broker.cleaner_task
        return None if task is None else task.cleaner.stats
