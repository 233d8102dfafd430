"""The remote log manager of one broker: Kafka's RemoteLogManager.

It exists only with ``remote.log.storage.system.enable=true`` (the replica
manager's ``tiering`` is None otherwise, and no tiering code runs).  It owns
the remote store, the index cache, the producer snapshots at segment ends and
``__remote_log_metadata`` (``MetadataTopic``), and one ``TieredPartition`` per
hosted partition of a topic with ``remote.storage.enable=true``.

``reconcile`` follows the replica manager: after each metadata batch and each
topic config change it starts what a partition's role needs here (the replay
of its metadata on every replica; copy and expiration as leader; the remote
offset as follower) and stops what it no longer needs.  A partition whose
topic turned ``remote.storage.enable`` off with ``remote.log.delete.on.disable``
has its remote data deleted by its leader (KIP-950), as has a partition of a
deleted topic (``on_partition_deleted``): every segment goes through
DELETE_SEGMENT_STARTED / FINISHED, the partition through
DELETE_PARTITION_STARTED / FINISHED.

Reads of the remote tier for fetches, ListOffsets and followers are in
``remote_reads``; this module only lends them its parts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from samsa.controller.image.metadata_image import MetadataImage
from samsa.net import ChannelPool
from samsa.replication.broker_addresses import BrokerAddresses
from samsa.replication.partition import Partition, PartitionRole
from samsa.replication.tiering.counting_storage import CountingStorageManager, RemoteCounters
from samsa.replication.tiering.metadata_topic import MetadataTopic
from samsa.replication.tiering.partition_tasks import FOLLOWER, LEADER, TieredPartition
from samsa.replication.tiering.segment_snapshots import SNAPSHOT_DIR, SegmentSnapshots
from samsa.replication.tiering.settings import TieringSettings
from samsa.replication.tiering.tiered_log import PartitionTieredLog
from samsa.storage.log import wall_clock_ms
from samsa.tiered.metadata.model import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from samsa.tiered.metadata.partitioner import METADATA_TOPIC
from samsa.tiered.quota import RateQuota
from samsa.tiered.remote_index import INDEX_CACHE_DIR, RemoteIndexCache, remove_temporaries
from samsa.tiered.store.base import RemoteStore

__all__ = ["RemoteLogManager"]

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


class RemoteLogManager:
    """Tiered storage for the partitions of one broker (see the module doc)."""

    def __init__(
        self,
        *,
        node_id: int,
        settings: TieringSettings,
        store: RemoteStore,
        data_dir: Path,
        replicas: Any,
        image: Callable[[], MetadataImage],
        create_topic: Callable[[str, int, int, dict[str, str]], Awaitable[None]],
        wait_for_image: Callable[[], Awaitable[None]],
        channels: ChannelPool,
    ) -> None:
        self.node_id = node_id
        self.settings = settings
        self.store = store
        self.counters = RemoteCounters()
        self.storage = CountingStorageManager(store, self.counters)
        self.indexes = RemoteIndexCache(
            self.storage, data_dir / INDEX_CACHE_DIR, max_bytes=settings.index_cache_bytes
        )
        self.snapshots = SegmentSnapshots(data_dir / SNAPSHOT_DIR)
        self.replicas = replicas
        self.image = image
        self.channels = channels
        self.metadata = MetadataTopic(
            node_id=node_id,
            replicas=replicas,
            image=image,
            create_topic=create_topic,
            wait_for_image=wait_for_image,
            channels=channels,
            settings=settings.metadata,
        )
        self.copy_quota = RateQuota(
            settings.copy_max_bytes_per_second,
            samples=settings.copy_quota_windows,
            window_s=settings.copy_quota_window_s,
        )
        self.fetch_quota = RateQuota(
            settings.fetch_max_bytes_per_second,
            samples=settings.fetch_quota_windows,
            window_s=settings.fetch_quota_window_s,
        )
        self.partitions: dict[TopicPartition, TieredPartition] = {}
        self.replay_timeouts = 0
        """Replay timeouts of partitions no longer hosted here (theirs go with them)."""
        self._background: set[asyncio.Task[None]] = set()
        self.reads_waiting = 0
        self.reader_slots = asyncio.Semaphore(settings.reader_threads)
        self.addresses: BrokerAddresses | None = None
        """Keeps ``channels`` pointed at the brokers (set by the server)."""

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Clear what a previous run left in the local scratch directories."""

        def clean() -> None:
            self.snapshots.clear_directory()
            remove_temporaries(self.indexes.directory)
            tidy = getattr(self.store, "remove_temporaries", None)
            if tidy is not None:
                tidy()

        await asyncio.to_thread(clean)
        log.info("tiered storage on: remote store %s", self.store.describe())

    async def stop(self) -> None:
        for state in list(self.partitions.values()):
            await state.stop()
        self.partitions.clear()
        for task in list(self._background):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.indexes.close()
        await self.store.close()
        await self.channels.close()

    def reconfigure(self, get: Callable[[str], Any]) -> None:
        """Kafka's DynamicRemoteLogConfig: the quotas, the fetch wait, the
        readers and the index cache's size change without a restart."""
        previous, self.settings = self.settings, TieringSettings.from_lookup(get)
        if self.settings.reader_threads != previous.reader_threads:
            self.reader_slots = asyncio.Semaphore(self.settings.reader_threads)
        self.copy_quota.update(self.settings.copy_max_bytes_per_second)
        self.fetch_quota.update(self.settings.fetch_max_bytes_per_second)
        self.indexes.max_bytes = self.settings.index_cache_bytes

    def interval_s(self) -> float:
        return self.settings.task_interval_ms / 1000

    # ------------------------------------------------------------------ following the replicas
    def reconcile(self) -> None:
        """Start and stop each partition's tasks as its role and config say now."""
        if self.addresses is not None:
            image = self.image()
            self.addresses.update(image, image.brokers)
        seen: set[TopicPartition] = set()
        for partition in self.replicas.partitions():
            key = (partition.topic, partition.index)
            if partition.topic == METADATA_TOPIC:
                continue
            config = partition.log.config
            state = self.partitions.get(key)
            role = _role(partition)
            if not config.remote_storage_enable or partition.topic_id is None or role is None:
                if state is not None:
                    self._drop(key, state, delete=config.remote_log_delete_on_disable)
                continue
            seen.add(key)
            if state is None or state.tip.topic_id != partition.topic_id:
                if state is not None:
                    self._drop(key, state, delete=False)
                state = self._adopt(partition)
            state.become(role, copy_enabled=not config.remote_log_copy_disable)
        for key in [k for k in self.partitions if k not in seen]:
            state = self.partitions[key]
            partition = self.replicas.get(*key)
            delete = (
                partition is not None
                and not partition.log.config.remote_storage_enable
                and partition.log.config.remote_log_delete_on_disable
            )
            self._drop(key, self.partitions[key], delete=delete)

    def _adopt(self, partition: Partition) -> TieredPartition:
        assert partition.topic_id is not None
        self.snapshots.watch(partition)
        state = TieredPartition(
            PartitionTieredLog(partition, partition.topic_id, self.snapshots),
            self.metadata,
            self.storage,
            broker_id=self.node_id,
            interval_s=self.interval_s,
            copy_quota=self.copy_quota,
            orphan_grace_ms=lambda: self.settings.orphan_grace_ms,
        )
        self.partitions[(partition.topic, partition.index)] = state
        log.info("[%s] tiered storage on", state.tip)
        return state

    def _drop(self, key: TopicPartition, state: TieredPartition, *, delete: bool) -> None:
        """Stop ``state``; its leader deletes its remote data when ``delete``."""
        self.partitions.pop(key, None)
        was_leader = state.role == LEADER
        leftover = self.snapshots.forget(state.log.partition)
        self._spawn(self._retire(state, delete=delete and was_leader, leftover=leftover))

    def on_partition_deleted(self, partition: Partition) -> None:
        """The partition's topic was deleted: its last leader deletes the remote data."""
        state = self.partitions.pop((partition.topic, partition.index), None)
        if state is None:
            return
        was_leader = state.role == LEADER
        leftover = self.snapshots.forget(partition)
        self._spawn(self._retire(state, delete=was_leader, topic_deleted=True, leftover=leftover))

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _retire(
        self,
        state: TieredPartition,
        *,
        delete: bool,
        topic_deleted: bool = False,
        leftover: Path | None = None,
    ) -> None:
        """Stop ``state``'s tasks (deleting its remote data first when
        ``delete``), and remove its last producer snapshot file, off the loop."""
        if leftover is not None:
            await asyncio.to_thread(leftover.unlink, missing_ok=True)
        if delete:
            state.stop_role_tasks()  # the replay goes on until the deletes are applied
            try:
                await asyncio.wait_for(asyncio.shield(state.loaded), 60)
                await self._delete_remote_partition(state.tip, topic_deleted=topic_deleted)
                if not topic_deleted:
                    local_start = state.log.local_log_start_offset()
                    await state.log.update_log_start_offset_from_remote(local_start)
            except Exception:
                log.exception("[%s] deleting its remote data failed", state.tip)
        await state.stop()
        self.replay_timeouts += state.replay_timeouts
        self.metadata.unload(state.tip)

    async def _delete_remote_partition(self, tip: TopicIdPartition, *, topic_deleted: bool) -> None:
        """Kafka's ``deleteRemoteLogPartition``: every segment STARTED, deleted,
        FINISHED; for a deleted topic the partition's delete states around it."""
        manager = self.metadata.manager
        cache = manager.cache(tip)
        if cache is None:
            return
        now = wall_clock_ms
        if topic_deleted:
            await manager.publish(
                RemotePartitionDeleteMetadata(
                    tip, RemotePartitionDeleteState.DELETE_PARTITION_STARTED, now(), self.node_id
                )
            )
        segments: list[RemoteLogSegmentMetadata] = list(cache.list_all())
        S = RemoteLogSegmentState
        for segment in segments:
            if segment.state is not S.DELETE_SEGMENT_STARTED:
                await manager.publish(
                    RemoteLogSegmentMetadataUpdate(
                        segment.segment_id, now(), S.DELETE_SEGMENT_STARTED, self.node_id
                    )
                )
        for segment in segments:
            await self.storage.delete_log_segment_data(segment)
        await self.indexes.remove([s.segment_id.id for s in segments])
        for segment in segments:
            await manager.publish(
                RemoteLogSegmentMetadataUpdate(
                    segment.segment_id, now(), S.DELETE_SEGMENT_FINISHED, self.node_id
                )
            )
        if topic_deleted:
            await manager.publish(
                RemotePartitionDeleteMetadata(
                    tip, RemotePartitionDeleteState.DELETE_PARTITION_FINISHED, now(), self.node_id
                )
            )
        log.info("[%s] deleted its %d remote segments", tip, len(segments))

    # ------------------------------------------------------------------ lookups
    def tiered(self, topic: str, index: int) -> TieredPartition | None:
        return self.partitions.get((topic, index))

    def remote_size_bytes(self, topic: str, index: int) -> int:
        """Bytes of the partition's finished remote segments (its remote log size)."""
        state = self.partitions.get((topic, index))
        cache = None if state is None else self.metadata.manager.cache(state.tip)
        if cache is None:
            return 0
        finished = RemoteLogSegmentState.COPY_SEGMENT_FINISHED
        return sum(s.segment_size_bytes for s in cache.list_all() if s.state is finished)

    def remote_segment_count(self, topic: str, index: int) -> int:
        state = self.partitions.get((topic, index))
        cache = None if state is None else self.metadata.manager.cache(state.tip)
        return 0 if cache is None else len(cache)


def _role(partition: Partition) -> str | None:
    role = partition.role
    if role in (PartitionRole.LEADER, PartitionRole.STANDALONE):
        return LEADER
    if role is PartitionRole.FOLLOWER:
        return FOLLOWER
    return None
