"""The remote segments of a topic as ``__remote_log_metadata`` records them, for readers outside the broker.

A broker replays ``__remote_log_metadata`` into one ``RemoteLogMetadataCache``
per partition it hosts and answers with its own leader epochs.  A reader
that is not a broker -- ``samsa topics describe`` summing a topic's remote
size, a Spark executor reading tiered history straight from the object
store -- consumes the same records with any Kafka client and feeds their
values here (``apply``, in each metadata partition's order), then asks for
a partition's readable segments (``segments``): those whose copy finished
and that no later copy of the same offsets replaced, by start offset.  Each
is read with ``segment_objects.RemoteStorageManager`` over the store that
``store.settings`` opens from the brokers' ``rsm.config.*`` settings: the
objects are byte-for-byte the local segments (``fetch_log_segment``) with
their indexes.

Without the brokers' leader epochs the catalog can not tell two histories
apart after an unclean election; where finished segments overlap, the one
copied last wins, which is the history the brokers serve once retention
removed the other.  Sans-I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.errors import DecodeError
from samsa.tiered.metadata.model import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from samsa.tiered.metadata.partition_store import RemotePartitionMetadataStore
from samsa.tiered.metadata.records import decode_remote_log_metadata

__all__ = ["RemoteCatalog"]


class RemoteCatalog:
    """Remote segments of every partition seen in the replayed records."""

    def __init__(self, topics: Iterable[str] | None = None) -> None:
        """``topics``: keep only these (None: every topic)."""
        self._topics = None if topics is None else frozenset(topics)
        self._store = RemotePartitionMetadataStore()
        self.skipped = 0
        """Records that did not decode (skipped, as the brokers skip them)."""

    def apply(self, value: bytes | None) -> None:
        """One record value of ``__remote_log_metadata``, in its partition's order."""
        if value is None:
            return
        try:
            event = decode_remote_log_metadata(value)
        except DecodeError:
            self.skipped += 1
            return
        partition = event.topic_id_partition
        if self._topics is not None and partition.topic not in self._topics:
            return
        if not isinstance(event, RemotePartitionDeleteMetadata) or (
            event.state is not RemotePartitionDeleteState.DELETE_PARTITION_FINISHED
        ):
            self._store.maybe_load_partition(partition)
        self._store.apply(event)

    def partitions(self, topic: str) -> list[TopicIdPartition]:
        """The topic's partitions with remote data (the newest topic id's when
        the topic was deleted and created again)."""
        found = [p for p in self._store.partitions() if p.topic == topic]
        return sorted(found, key=lambda p: p.partition)

    def segments(self, partition: TopicIdPartition) -> list[RemoteLogSegmentMetadata]:
        """The readable remote segments of ``partition``, by start offset, never overlapping."""
        cache = self._store.cache(partition)
        if cache is None:
            return []
        finished = [
            s for s in cache.list_all() if s.state is RemoteLogSegmentState.COPY_SEGMENT_FINISHED
        ]
        chosen: list[RemoteLogSegmentMetadata] = []
        for segment in sorted(finished, key=lambda s: -s.event_timestamp_ms):
            if all(
                segment.end_offset < c.start_offset or segment.start_offset > c.end_offset
                for c in chosen
            ):
                chosen.append(segment)
        return sorted(chosen, key=lambda s: s.start_offset)

    def all_segments(self, partition: TopicIdPartition) -> list[RemoteLogSegmentMetadata]:
        """Every segment of ``partition`` the metadata still knows, in any
        state but DELETE_SEGMENT_FINISHED (copies in progress or abandoned,
        deletions in progress), by start offset: what a check of the store
        against the metadata compares."""
        cache = self._store.cache(partition)
        return [] if cache is None else sorted(cache.list_all(), key=lambda s: s.start_offset)

    def size_bytes(self, partition: TopicIdPartition) -> int:
        return sum(s.segment_size_bytes for s in self.segments(partition))
