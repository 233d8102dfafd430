"""Fetches parked on partitions until bytes they may read arrive (Kafka's fetch purgatory).

Which bytes wake a fetch depends on who reads (see fetch_waiter): appends
count for followers everywhere and for consumers of a standalone partition
(its watermark is its log end); on a replicated leader consumers count only
the bytes a high watermark move makes visible.  A role change or deletion
wakes everything parked on the partition so each fetch re-reads and answers
with the new error.  A follower's parked fetch can also be woken by who sent
it: when this broker starts leading partitions that follower must now fetch
(see fresh_leaderships).  Fetch sessions register a ``SessionWatch`` per
partition they hold, told of the same events whether or not they wait (see
session_watch), and park one waiter for the whole session.  Runs on the
event loop.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.partition_base import PartitionBase, PartitionRole
from samsa.replication.session_watch import SessionWatch

__all__ = ["FetchPurgatory"]

TopicPartition = tuple[str, int]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)


class FetchPurgatory:
    def __init__(self) -> None:
        self._waiters: dict[TopicPartition, set[FetchWaiter]] = {}
        self._by_follower: dict[int, set[FetchWaiter]] = {}
        self._watches: dict[TopicPartition, set[SessionWatch]] = {}
        self._parked_sessions: set[SessionWatch] = set()

    def park(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        _add(self._waiters, keys, waiter)
        if waiter.replica_id >= 0:
            _add(self._by_follower, (waiter.replica_id,), waiter)

    def unpark(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        _discard(self._by_follower, (waiter.replica_id,), waiter)
        _discard(self._waiters, keys, waiter)

    def watch(self, keys: Iterable[TopicPartition], watch: SessionWatch) -> None:
        _add(self._watches, keys, watch)

    def unwatch(self, keys: Iterable[TopicPartition], watch: SessionWatch) -> None:
        _discard(self._watches, keys, watch)

    def park_session(self, watch: SessionWatch, waiter: FetchWaiter) -> None:
        """Park a session's fetch on all its partitions at once (O(1))."""
        watch.waiter = waiter
        self._parked_sessions.add(watch)
        if waiter.replica_id >= 0:
            _add(self._by_follower, (waiter.replica_id,), waiter)

    def unpark_session(self, watch: SessionWatch, waiter: FetchWaiter) -> None:
        if watch.waiter is waiter:
            watch.waiter = None
        self._parked_sessions.discard(watch)
        _discard(self._by_follower, (waiter.replica_id,), waiter)

    def parked(self) -> int:
        """Fetches waiting for data (Kafka's fetch purgatory size)."""
        waiting: set[FetchWaiter] = set()
        for waiters in self._waiters.values():
            waiting |= waiters
        return len(waiting) + len(self._parked_sessions)

    def on_append(self, partition: PartitionBase, size: int) -> None:
        key = (partition.topic, partition.index)
        waiters = self._waiters.get(key)
        if waiters:
            standalone = partition.role is PartitionRole.STANDALONE
            for waiter in list(waiters):
                waiter.on_append(size, standalone=standalone)
        for watch in list(self._watches.get(key, ())):
            watch.on_append(partition, size)

    def on_high_watermark(self, partition: PartitionBase, visible_bytes: int) -> None:
        key = (partition.topic, partition.index)
        waiters = self._waiters.get(key)
        if waiters:
            for waiter in list(waiters):
                waiter.on_visible(visible_bytes)
        for watch in list(self._watches.get(key, ())):
            watch.on_high_watermark(partition, visible_bytes)

    def wake_all(self, key: TopicPartition, *, forget: bool = False) -> None:
        waiters = self._waiters.pop(key, set()) if forget else self._waiters.get(key, set())
        for waiter in list(waiters):
            waiter.wake()
        for watch in list(self._watches.get(key, ())):
            watch.on_wake(key)

    def wake_follower(self, replica_id: int) -> int:
        """Answer the follower's parked fetches now; how many there were."""
        waiters = list(self._by_follower.get(replica_id, ()))
        for waiter in waiters:
            waiter.wake()
        return len(waiters)


def _add(index: dict[K, set[V]], keys: Iterable[K], item: V) -> None:
    for key in keys:
        index.setdefault(key, set()).add(item)


def _discard(index: dict[K, set[V]], keys: Iterable[K], item: V) -> None:
    for key in keys:
        items = index.get(key)
        if items is not None:
            items.discard(item)
            if not items:
                del index[key]
