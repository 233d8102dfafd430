"""Fetches parked on partitions until bytes they may read arrive (Kafka's fetch purgatory).

Which bytes wake a fetch depends on who reads (see fetch_waiter): appends
count for followers everywhere and for consumers of a standalone partition
(its watermark is its log end); on a replicated leader consumers count only
the bytes a high watermark move makes visible.  A role change or deletion
wakes everything parked on the partition so each fetch re-reads and answers
with the new error.  A follower's parked fetch can also be woken by who sent
it: when this broker starts leading partitions that follower must now fetch
(see fresh_leaderships).  Runs on the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.replication.fetch_waiter import FetchWaiter
from samsa.replication.partition_base import PartitionBase, PartitionRole

__all__ = ["FetchPurgatory"]

TopicPartition = tuple[str, int]


class FetchPurgatory:
    def __init__(self) -> None:
        self._waiters: dict[TopicPartition, set[FetchWaiter]] = {}
        self._by_follower: dict[int, set[FetchWaiter]] = {}

    def park(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        for key in keys:
            self._waiters.setdefault(key, set()).add(waiter)
        if waiter.replica_id >= 0:
            self._by_follower.setdefault(waiter.replica_id, set()).add(waiter)

    def unpark(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        followers = self._by_follower.get(waiter.replica_id)
        if followers is not None:
            followers.discard(waiter)
            if not followers:
                del self._by_follower[waiter.replica_id]
        for key in keys:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[key]

    def parked(self) -> int:
        """Fetches waiting for data (Kafka's fetch purgatory size)."""
        waiting: set[FetchWaiter] = set()
        for waiters in self._waiters.values():
            waiting |= waiters
        return len(waiting)

    def on_append(self, partition: PartitionBase, size: int) -> None:
        waiters = self._waiters.get((partition.topic, partition.index))
        if waiters:
            everyone = partition.role is PartitionRole.STANDALONE
            for waiter in list(waiters):
                if everyone or waiter.from_follower:
                    waiter.on_bytes(size)

    def on_high_watermark(self, partition: PartitionBase, visible_bytes: int) -> None:
        waiters = self._waiters.get((partition.topic, partition.index))
        if waiters:
            for waiter in list(waiters):
                if not waiter.from_follower:
                    waiter.on_bytes(visible_bytes)

    def wake_all(self, key: TopicPartition, *, forget: bool = False) -> None:
        waiters = self._waiters.pop(key, set()) if forget else self._waiters.get(key, set())
        for waiter in list(waiters):
            waiter.wake()

    def wake_follower(self, replica_id: int) -> int:
        """Answer the follower's parked fetches now; how many there were."""
        waiters = list(self._by_follower.get(replica_id, ()))
        for waiter in waiters:
            waiter.wake()
        return len(waiters)
