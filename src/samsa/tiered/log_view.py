"""What tiered storage needs from a partition's local log: the seam to ``samsa.storage``.

The remote log manager never imports the Log; the log side implements
``TieredLog`` for each partition of a topic with ``remote.storage.enable``.
Kafka's RemoteLogManager asks the same of UnifiedLog.  The plain methods are
cheap and non-blocking (in-memory state), so tasks on the event loop call
them directly; the coroutines may touch files (a snapshot to write, segments
to delete below a new log start) and do so off the loop; file contents are
read by the remote store's own threads.

The leader epoch cache must not be empty for a tiered partition: every rule
about which remote segments are valid is about epochs.  (A single-node broker
that writes batches without a leader epoch must give tiered topics epoch 0.)

Contract the log side keeps while a segment is listed by ``segments_from``:

* a rolled segment's files (log, indexes, transaction index) are complete and
  do not change, and are not deleted before ``highest_offset_in_remote_storage``
  covers them (local retention of a tiered topic waits for the copy) or the
  log itself is deleted;
* ``producer_snapshot(offset)`` returns a snapshot file taken exactly at
  ``offset`` (a rolled segment's end + 1), writing one if needed, as Kafka
  writes one at every roll.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from samsa.tiered.metadata.model import EpochEntry, TopicIdPartition

__all__ = ["LocalSegmentFiles", "TieredLog"]


@dataclass(frozen=True, slots=True)
class LocalSegmentFiles:
    """One local segment as the copy task sees it (the active one included)."""

    base_offset: int
    size_bytes: int
    largest_timestamp_ms: int
    log: Path
    offset_index: Path
    time_index: Path
    transaction_index: Path | None
    """None when the segment has no aborted transaction (no file, or an empty one)."""


class TieredLog(Protocol):
    """One partition's local log, seen by the remote log manager."""

    @property
    def topic_id_partition(self) -> TopicIdPartition: ...

    def log_start_offset(self) -> int:
        """The partition's start, remote data included."""

    def local_log_start_offset(self) -> int:
        """The first offset still on local disk."""

    def log_end_offset(self) -> int: ...

    def last_stable_offset(self) -> int:
        """Below both the high watermark and every open transaction."""

    def leader_epoch_entries(self) -> list[EpochEntry]:
        """The leader epoch cache's entries, oldest first."""

    def segments_from(self, offset: int) -> list[LocalSegmentFiles]:
        """The local segments holding ``offset`` and after, oldest first, the
        active segment last (Kafka's ``logSegments(offset, Long.MAX_VALUE)``)."""

    async def producer_snapshot(self, offset: int) -> Path | None:
        """The producer state snapshot at ``offset`` (see the module doc), taken
        off the event loop if it must be written."""

    def local_only_size_bytes(self) -> int:
        """Bytes of the local segments not yet copied (Kafka's
        ``onlyLocalLogSegmentsSize``: base offset >= the highest copied offset)."""

    def retention_ms(self) -> int:
        """The topic's ``retention.ms`` (total retention, remote included; -1: none)."""

    def retention_bytes(self) -> int:
        """The topic's ``retention.bytes`` (-1: none)."""

    def highest_offset_in_remote_storage(self) -> int:
        """The highest offset known copied (-1: none known yet)."""

    def update_highest_offset_in_remote_storage(self, offset: int) -> None:
        """Everything up to ``offset`` is copied: local retention may now
        delete segments that end at or below it (Kafka's method of that name)."""

    async def update_log_start_offset_from_remote(self, offset: int) -> None:
        """The partition starts at ``offset`` (the first remote segment's start,
        or past what remote retention deleted); local segments wholly below
        it are deleted, off the event loop."""
