"""The share partitions this broker leads, and the share sessions that read them.

The partition leader owns each share partition's in-flight state (as in
Kafka, where the SharePartitionManager sits beside the ReplicaManager); the
group coordinator only decides which members read which partitions.  Log reads
come in through ``LogReader`` so this module stays free of the broker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from samsa.share.sessions import PartitionKey, ShareSession, ShareSessionCache
from samsa.share.share_partition import ShareLimits, SharePartition, StateBatch

ShareKey = tuple[str, bytes, int]
"""(group id, topic id, partition)."""

StartOffset = Callable[[str, bytes, int], int]
"""Where a new share partition of (group, topic id, partition) starts."""


@dataclass(frozen=True, slots=True)
class ShareSettings:
    limits: ShareLimits = field(default_factory=ShareLimits)
    auto_offset_reset: str = "latest"
    session_idle_ms: int = 45_000
    """A share session unused this long is dropped (``group.share.session.timeout.ms``:
    its member is out of the group by then)."""

    @classmethod
    def from_properties(cls, props: dict[str, object]) -> ShareSettings:
        def number(key: str, default: int) -> int:
            value = props.get(key)
            return default if value is None else int(str(value))

        limits = ShareLimits(
            lock_duration_ms=number("group.share.record.lock.duration.ms", 30_000),
            delivery_count_limit=number("group.share.delivery.count.limit", 5),
            max_in_flight=number("group.share.partition.max.record.locks", 2000),
        )
        # Values come checked by BrokerConfig (Kafka's bounds, latest or earliest).
        return cls(
            limits,
            str(props.get("share.auto.offset.reset") or "latest").lower(),
            number("group.share.session.timeout.ms", 45_000),
        )


class Persister(Protocol):
    """Durable share-partition state (``__share_group_state`` through the share coordinator)."""

    async def read(
        self, group_id: str, topic_id: bytes, partition: int, leader_epoch: int
    ) -> tuple[int, int, list[StateBatch]] | None: ...

    async def write(
        self,
        group_id: str,
        topic_id: bytes,
        partition: int,
        *,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: list[StateBatch],
    ) -> None: ...


class SharePartitionManager:
    def __init__(self, settings: ShareSettings, persister: Persister | None = None) -> None:
        self.settings = settings
        self.persister = persister
        self.partitions: dict[ShareKey, SharePartition] = {}
        self.sessions = ShareSessionCache()
        self._loading: dict[ShareKey, asyncio.Lock] = {}

    async def ensure(
        self, group_id: str, key: PartitionKey, leader_epoch: int, start: Callable[[], int]
    ) -> SharePartition:
        """The share partition as of this leader epoch: a new leader (or this broker
        leading again) reads the persisted state first, so records acknowledged
        under an earlier leader are not delivered again; a share partition with no
        state starts at ``start()`` and persists that start at once."""
        full = (group_id, key[0], key[1])
        partition = self.partitions.get(full)
        if partition is not None and partition.leader_epoch == leader_epoch:
            return partition
        async with self._loading.setdefault(full, asyncio.Lock()):
            partition = self.partitions.get(full)
            if partition is not None and partition.leader_epoch == leader_epoch:
                return partition
            stored = None
            if self.persister is not None:
                stored = await self.persister.read(group_id, key[0], key[1], leader_epoch)
            if stored is None:
                partition = SharePartition(start(), self.settings.limits)
            else:
                state_epoch, start_offset, batches = stored
                partition = SharePartition(start_offset, self.settings.limits)
                partition.restore(start_offset, batches)
                partition.state_epoch = state_epoch
            partition.leader_epoch = leader_epoch
            if stored is None:
                await self.persist(group_id, key, partition)
            self.partitions[full] = partition
            return partition

    async def persist(self, group_id: str, key: PartitionKey, partition: SharePartition) -> None:
        """Write the share partition's state; raises KafkaError when it was not written."""
        if self.persister is None:
            return
        await self.persister.write(
            group_id,
            key[0],
            key[1],
            state_epoch=partition.state_epoch,
            leader_epoch=partition.leader_epoch,
            start_offset=partition.start_offset,
            batches=partition.state_batches(),
        )

    def existing(self, group_id: str, key: PartitionKey) -> SharePartition | None:
        return self.partitions.get((group_id, key[0], key[1]))

    def open_session(self, group_id: str, member_id: str, epoch: int, now_ms: int) -> ShareSession:
        """The request's share session (see ``ShareSessionCache``); opening one also
        drops idle sessions and gives back what their members had acquired."""
        if epoch == 0:
            for idle in self.sessions.evict_idle(now_ms, self.settings.session_idle_ms):
                self.release_member(idle.group_id, idle.member_id, idle.partitions)
        return self.sessions.open_or_advance(group_id, member_id, epoch, now_ms)

    def release_member(self, group_id: str, member_id: str, keys: set[PartitionKey]) -> None:
        for key in keys:
            partition = self.existing(group_id, key)
            if partition is not None:
                partition.release_member(member_id)

    def forget(self, group_id: str, topic_id: bytes, index: int) -> None:
        """Drop the cached state of one share partition (its offsets were reset or
        deleted): the next read loads it again."""
        self.partitions.pop((group_id, topic_id, index), None)

    async def revalidate(self, group_id: str, keys: set[PartitionKey]) -> None:
        """A new share session of the group: a cached share partition whose stored
        state was started over (a new state epoch: its offsets were reset through
        any broker) or deleted is loaded again.  Only the state epoch is compared,
        never the offsets: a write of this leader still in flight must not make it
        drop acknowledgements it has applied."""
        if self.persister is None:
            return
        for key in keys:
            full = (group_id, key[0], key[1])
            partition = self.partitions.get(full)
            if partition is None or partition.has_acquired():
                continue
            async with self._loading.setdefault(full, asyncio.Lock()):
                stored = await self.persister.read(group_id, key[0], key[1], partition.leader_epoch)
                started_over = stored is None or stored[0] != partition.state_epoch
                if started_over and self.partitions.get(full) is partition:
                    del self.partitions[full]

    def forget_partition(self, topic_id: bytes, index: int) -> None:
        """This broker no longer leads the partition: its share state goes with it."""
        for key in [k for k in self.partitions if k[1] == topic_id and k[2] == index]:
            del self.partitions[key]
