"""The remote log metadata of every partition a broker follows: Kafka's RemotePartitionMetadataStore.

The metadata consumer replays ``__remote_log_metadata`` into this store, one
event at a time, in the order of each metadata partition.  It keeps one
``RemoteLogMetadataCache`` per user partition it was asked to load
(``maybe_load_partition``, on becoming leader or follower), and the partition
delete state of partitions being deleted.  Events of partitions it does not
hold are ignored (they belong to other brokers' partitions sharing the
metadata partition), which is why loading a partition must happen before the
replay of its metadata partition starts.

A partition whose deletion FINISHED is forgotten whole: its segments are gone
and any later event for it is a leftover.

Sans-I/O; single owner, as ``RemoteLogMetadataCache``.
"""

from __future__ import annotations

import logging

from samsa.tiered.metadata.cache import RemoteLogMetadataCache, RemoteResourceNotFoundError
from samsa.tiered.metadata.model import (
    RemoteLogMetadata,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)

__all__ = ["RemotePartitionMetadataStore"]

logger = logging.getLogger(__name__)


class RemotePartitionMetadataStore:
    """Routes replayed metadata events to their partition's cache."""

    def __init__(self) -> None:
        self._caches: dict[TopicIdPartition, RemoteLogMetadataCache] = {}
        self._deletes: dict[TopicIdPartition, RemotePartitionDeleteMetadata] = {}

    def maybe_load_partition(self, partition: TopicIdPartition) -> RemoteLogMetadataCache:
        """Start keeping ``partition``'s metadata (idempotent); returns its cache."""
        cache = self._caches.get(partition)
        if cache is None:
            cache = self._caches[partition] = RemoteLogMetadataCache()
        return cache

    def mark_initialized(self, partition: TopicIdPartition) -> None:
        """The replay reached the end its metadata partition had when loading began."""
        self._caches[partition].mark_initialized()

    def is_initialized(self, partition: TopicIdPartition) -> bool:
        cache = self._caches.get(partition)
        return cache is not None and cache.initialized

    def cache(self, partition: TopicIdPartition) -> RemoteLogMetadataCache | None:
        """The partition's cache, or None if it is not loaded."""
        return self._caches.get(partition)

    def delete_state(self, partition: TopicIdPartition) -> RemotePartitionDeleteState | None:
        metadata = self._deletes.get(partition)
        return metadata.state if metadata is not None else None

    def clear(self, partition: TopicIdPartition) -> None:
        """Stop keeping ``partition`` (it moved away from this broker)."""
        self._caches.pop(partition, None)

    def partitions(self) -> list[TopicIdPartition]:
        return list(self._caches)

    def apply(self, event: RemoteLogMetadata) -> None:
        """Replay one event of ``__remote_log_metadata``."""
        if isinstance(event, RemotePartitionDeleteMetadata):
            self._apply_delete(event)
            return
        cache = self._caches.get(event.topic_id_partition)
        if cache is None:
            return  # another broker's partition, or one this broker let go
        if isinstance(event, RemoteLogSegmentMetadata):
            cache.add_copy_in_progress(event)
        elif isinstance(event, RemoteLogSegmentMetadataUpdate):
            try:
                cache.update(event)
            except RemoteResourceNotFoundError as exc:
                logger.warning("ignoring an update of an unknown remote segment: %s", exc)

    def _apply_delete(self, event: RemotePartitionDeleteMetadata) -> None:
        partition = event.topic_id_partition
        self._deletes[partition] = event
        if event.state is RemotePartitionDeleteState.DELETE_PARTITION_FINISHED:
            logger.info("remote data of %s is deleted; forgetting its metadata", partition)
            self._caches.pop(partition, None)
            self._deletes.pop(partition, None)
