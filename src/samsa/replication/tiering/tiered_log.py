"""A hosted partition as the remote log manager sees it: ``samsa.tiered.log_view.TieredLog``.

The copy and expiration tasks of ``samsa.tiered`` never import the Log or the
Partition; this adapter gives them what they read (offsets, the leader epoch
cache, the segments' files) and the two things they change (the highest
offset in the remote tier, which lets local retention go on, and the log
start).  Everything but ``producer_snapshot`` and the log start's move is
in-memory state read on the event loop; the snapshot is written off it
(``segment_snapshots``), and so are the unlinks of segments below a new log
start.

The last stable offset comes from the Partition (the high watermark and the
open transactions bound it), not the Log: a leader copies only data every
in-sync replica has and no open transaction may still abort.
"""

from __future__ import annotations

import asyncio
import bisect
from pathlib import Path

from samsa.replication.partition import Partition
from samsa.replication.tiering.segment_snapshots import SegmentSnapshots
from samsa.storage.segments.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX
from samsa.storage.segments.segment import segment_file_name as file_name
from samsa.tiered.log_view import LocalSegmentFiles
from samsa.tiered.metadata.model import EpochEntry, TopicIdPartition

__all__ = ["PartitionTieredLog"]


class PartitionTieredLog:
    """``TieredLog`` over one hosted Partition (see the module doc)."""

    def __init__(self, partition: Partition, topic_id: bytes, snapshots: SegmentSnapshots) -> None:
        self.partition = partition
        self.snapshots = snapshots
        self._tip = TopicIdPartition(topic_id, partition.topic, partition.index)

    @property
    def topic_id_partition(self) -> TopicIdPartition:
        return self._tip

    def log_start_offset(self) -> int:
        return self.partition.log.log_start_offset

    def local_log_start_offset(self) -> int:
        return self.partition.log.local_log_start_offset

    def log_end_offset(self) -> int:
        return self.partition.log.log_end_offset

    def last_stable_offset(self) -> int:
        return self.partition.last_stable_offset

    def leader_epoch_entries(self) -> list[EpochEntry]:
        """The epoch cache's entries; data older than its first entry (written
        before the partition had a leader epoch: a single node's data from
        before its metadata quorum) counts as the first epoch's, as a
        single-node KRaft Kafka's partitions start at epoch 0."""
        log = self.partition.log
        entries = [EpochEntry(e, o) for e, o in log.leader_epoch_cache.entries()]
        start = log.log_start_offset
        if entries and entries[0].start_offset > start:
            entries[0] = EpochEntry(entries[0].epoch, start)
        return entries

    def segments_from(self, offset: int) -> list[LocalSegmentFiles]:
        log = self.partition.log
        segments = log.segments
        bases = [s.base_offset for s in segments]
        first = max(0, bisect.bisect_right(bases, offset) - 1)
        directory = log.directory
        found = []
        for segment in segments[first:]:
            base = segment.base_offset
            txn = segment.txn_index
            found.append(
                LocalSegmentFiles(
                    base_offset=base,
                    size_bytes=segment.size,
                    largest_timestamp_ms=segment.largest_timestamp(),
                    log=directory / file_name(base, LOG_SUFFIX),
                    offset_index=directory / file_name(base, INDEX_SUFFIX),
                    time_index=directory / file_name(base, TIME_INDEX_SUFFIX),
                    transaction_index=txn.path if txn.entries and txn.path is not None else None,
                )
            )
        return found

    async def producer_snapshot(self, offset: int) -> Path | None:
        return await self.snapshots.snapshot_at(self.partition, offset)

    def local_only_size_bytes(self) -> int:
        copied = self.partition.log.highest_offset_in_remote_storage
        return sum(s.size for s in self.partition.log.segments if s.base_offset > copied)

    def retention_ms(self) -> int:
        return self.partition.log.config.retention_ms

    def retention_bytes(self) -> int:
        return self.partition.log.config.retention_bytes

    def highest_offset_in_remote_storage(self) -> int:
        return self.partition.log.highest_offset_in_remote_storage

    def update_highest_offset_in_remote_storage(self, offset: int) -> None:
        self.partition.log.update_highest_offset_in_remote_storage(offset)

    async def update_log_start_offset_from_remote(self, offset: int) -> None:
        """Deletes the local segments below ``offset`` in a worker thread (the
        log is thread-safe), so their unlinks never hold the event loop."""
        log = self.partition.log
        if offset > log.log_start_offset:
            await asyncio.to_thread(log.update_log_start_offset_from_remote, offset)
