"""The broker's partitions as its fetch sessions see them (server/fetch_sessions/cache.py).

One narrow object instead of the whole ReplicaManager: a session asks for a
partition's ``ReadState`` (its change signature), registers the partitions it
holds so their appends, watermark moves and role changes mark it dirty, and
parks its long poll once for all of them (see session_watch).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from samsa.replication.leader.fetch_purgatory import FetchPurgatory
from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.partition_base import PartitionBase
from samsa.replication.session_watch import ReadState, SessionWatch, read_state

__all__ = ["SessionPartitions"]

TopicPartition = tuple[str, int]


class SessionPartitions:
    def __init__(
        self, partitions: Mapping[TopicPartition, PartitionBase], purgatory: FetchPurgatory
    ) -> None:
        self._partitions = partitions
        self._purgatory = purgatory

    def read_state(self, key: TopicPartition, *, consumer: bool) -> ReadState | None:
        partition = self._partitions.get(key)
        return None if partition is None else read_state(partition, consumer=consumer)

    def watch(self, keys: Iterable[TopicPartition], watch: SessionWatch) -> None:
        self._purgatory.watch(keys, watch)

    def unwatch(self, keys: Iterable[TopicPartition], watch: SessionWatch) -> None:
        self._purgatory.unwatch(keys, watch)

    def release(self, keys: Collection[TopicPartition], watch: SessionWatch) -> None:
        """The session is gone: stop watching, keeping the follower's proofs."""
        self._purgatory.unwatch(keys, watch)
        partitions = self._partitions
        watch.release(p for p in map(partitions.get, keys) if p is not None)

    def park(self, watch: SessionWatch, waiter: FetchWaiter) -> None:
        self._purgatory.park_session(watch, waiter)

    def unpark(self, watch: SessionWatch, waiter: FetchWaiter) -> None:
        self._purgatory.unpark_session(watch, waiter)
