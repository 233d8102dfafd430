"""Leader-epoch lineage rules for remote segments: which are valid, where a leader resumes.

Sans-I/O versions of the decisions Kafka's RemoteLogManager takes against a
partition's leader epoch cache (``LeaderEpochFileCache`` entries: each epoch
and the first offset it wrote) and its remote metadata
(``RemoteLogMetadataCache``):

* ``filtered_epochs`` (``buildFilteredLeaderEpochMap``): drop epochs that
  wrote nothing (an epoch whose start equals the next one's).
* ``is_segment_within_leader_epochs`` (``isRemoteSegmentWithinLeaderEpochs``):
  is a remote segment part of this replica's history?  After an unclean
  election or a leader change mid-copy the bucket may hold segments of a
  history the current log diverged from; those are never served and are
  deleted by retention.
* ``find_segment`` (``fetchRemoteLogSegmentMetadata`` after ``epochForOffset``):
  the remote segment a fetch at ``offset`` reads, and ``next_segment`` after it.
* ``highest_remote_offset`` (``findHighestRemoteOffset``): the last offset
  already copied on this lineage, from which a new leader continues copying
  with no re-upload and no gap.
* ``remote_log_start_offset`` (``findLogStartOffset``): where the log starts
  when remote data is counted.
* ``candidate_segments`` (``RLMCopyTask.candidateLogSegments`` without the copy
  lag settings): which rolled local segments a leader copies next.

Epoch maps are sequences of ``EpochEntry`` (epoch, start offset), ascending,
as ``LeaderEpochFileCache.entries()`` returns them.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import NamedTuple

from samsa.storage.leader_epoch_cache import LeaderEpochFileCache
from samsa.tiered.metadata.cache import RemoteLogMetadataCache
from samsa.tiered.metadata.model import (
    EpochEntry,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentState,
)

__all__ = [
    "NO_EPOCH",
    "LocalSegment",
    "OffsetAndEpoch",
    "candidate_segments",
    "epochs_in_range",
    "filtered_epochs",
    "find_segment",
    "highest_remote_offset",
    "is_segment_within_leader_epochs",
    "next_segment",
    "remote_log_start_offset",
    "segment_for_timestamp",
]

NO_EPOCH = -1
"""Kafka's RecordBatch.NO_PARTITION_LEADER_EPOCH."""


class OffsetAndEpoch(NamedTuple):
    offset: int
    epoch: int


def filtered_epochs(entries: Sequence[EpochEntry]) -> list[EpochEntry]:
    """The entries of epochs that wrote at least one record (the last always stays)."""
    kept: list[EpochEntry] = []
    for i, entry in enumerate(entries):
        if i + 1 == len(entries) or entries[i + 1].start_offset != entry.start_offset:
            kept.append(EpochEntry(entry.epoch, entry.start_offset))
    return kept


def is_segment_within_leader_epochs(
    segment: RemoteLogSegmentMetadata, log_end_offset: int, leader_epochs: Sequence[EpochEntry]
) -> bool:
    """Whether ``segment`` lies within the lineage ``leader_epochs`` (already
    filtered, see ``filtered_epochs``) of a log ending at ``log_end_offset``.

    * its last epoch lies between the lineage's first and last epoch;
    * from its first epoch that the lineage still has (the lineage may have
      lost older epochs to retention), every epoch is in the lineage, starts
      where the lineage says (the very first may start later when it is the
      lineage's first epoch, whose start moved with the log start), and is
      followed by the same next epoch at the same offset;
    * it ends before its last epoch's successor starts, and before the log end.
    """
    if not leader_epochs:
        return False
    lineage = {e: o for e, o in leader_epochs}
    lineage_epochs = [e for e, _ in leader_epochs]
    seg = filtered_epochs(segment.segment_leader_epochs)
    seg_epochs = [e for e, _ in seg]
    last_epoch = seg_epochs[-1]
    if last_epoch < lineage_epochs[0] or last_epoch > lineage_epochs[-1]:
        return False
    first_index = bisect.bisect_left(seg_epochs, lineage_epochs[0])
    if first_index == len(seg_epochs):
        return False
    first_epoch = seg_epochs[first_index]
    for i in range(first_index, len(seg)):
        epoch, offset = seg[i]
        if epoch not in lineage:
            return False
        position = bisect.bisect_left(lineage_epochs, epoch)
        if epoch == first_epoch and position > 0 and offset < lineage[epoch]:
            return False
        lineage_next = leader_epochs[position + 1] if position + 1 < len(leader_epochs) else None
        if epoch == last_epoch:
            if lineage_next is not None and segment.end_offset > lineage_next.start_offset - 1:
                return False
        elif lineage_next is None or tuple(lineage_next) != tuple(seg[i + 1]):
            return False
    return segment.end_offset < log_end_offset


def epochs_in_range(entries: Sequence[EpochEntry], start: int, end: int) -> list[EpochEntry]:
    """The epochs of offsets [start, end): Kafka's ``epochEntriesInRange``.

    The epoch covering ``start`` is moved to start there (a segment's first
    epoch begins at the segment's base); epochs starting at ``end`` or later
    are dropped.  ``start`` -1 keeps every epoch before ``end`` (the leader
    epoch checkpoint uploaded with a segment)."""
    cache = LeaderEpochFileCache(None, "range", entries)
    if start >= 0:
        cache.truncate_from_start(start)
    cache.truncate_from_end(end)
    return cache.entries()


def find_segment(
    cache: RemoteLogMetadataCache, leader_epochs: Sequence[EpochEntry], offset: int
) -> RemoteLogSegmentMetadata | None:
    """The finished remote segment that holds ``offset`` on this lineage, or None
    (the fetch then answers OFFSET_OUT_OF_RANGE, as Kafka's ``read`` does)."""
    epoch = _epoch_for_offset(leader_epochs, offset)
    return cache.segment_for(epoch, offset) if epoch != NO_EPOCH else None


def next_segment(
    cache: RemoteLogMetadataCache,
    leader_epochs: Sequence[EpochEntry],
    segment: RemoteLogSegmentMetadata,
) -> RemoteLogSegmentMetadata | None:
    """The remote segment after ``segment`` (Kafka's ``findNextSegmentMetadata``)."""
    return find_segment(cache, leader_epochs, segment.end_offset + 1)


def segment_for_timestamp(
    cache: RemoteLogMetadataCache,
    leader_epochs: Sequence[EpochEntry],
    log_end_offset: int,
    timestamp: int,
    starting_offset: int,
) -> RemoteLogSegmentMetadata | None:
    """The first finished remote segment on this lineage that may hold a record
    at or after ``timestamp`` and ``starting_offset`` (Kafka's
    ``findOffsetByTimestamp`` walk): epochs from the one of ``starting_offset``
    on, each epoch's segments by start offset."""
    first = _epoch_for_offset(leader_epochs, starting_offset)
    if first == NO_EPOCH:
        return None
    lineage = filtered_epochs(leader_epochs)
    for epoch, _ in leader_epochs:
        if epoch < first:
            continue
        for segment in cache.list_segments(epoch):
            if (
                segment.max_timestamp_ms >= timestamp
                and segment.end_offset >= starting_offset
                and segment.state is RemoteLogSegmentState.COPY_SEGMENT_FINISHED
                and is_segment_within_leader_epochs(segment, log_end_offset, lineage)
            ):
                return segment
    return None


def _epoch_for_offset(leader_epochs: Sequence[EpochEntry], offset: int) -> int:
    starts = [o for _, o in leader_epochs]
    i = bisect.bisect_right(starts, offset) - 1
    return leader_epochs[i].epoch if i >= 0 else NO_EPOCH


def highest_remote_offset(
    cache: RemoteLogMetadataCache, leader_epochs: Sequence[EpochEntry], log_end_offset: int
) -> OffsetAndEpoch:
    """The highest offset already in the remote tier on this lineage, and its epoch.

    Walks the epochs from the newest back; the first that has finished remote
    copies answers.  If the remote copies of that epoch reach past where the
    epoch ended on this log (an unclean election cut it short), the answer is
    capped at the epoch's end here, so the new leader copies its own
    successor data instead of trusting the other history.  (-1, -1) when
    nothing of this lineage was copied: copying starts at the log start.
    """
    epochs = LeaderEpochFileCache(None, "lineage", leader_epochs)
    for epoch, _ in reversed(leader_epochs):
        highest = cache.highest_offset_for_epoch(epoch)
        if highest is None:
            continue
        requested_epoch, end_offset = epochs.end_offset_for(epoch, log_end_offset)
        if end_offset <= highest:
            return OffsetAndEpoch(end_offset - 1, requested_epoch)
        return OffsetAndEpoch(highest, epoch)
    return OffsetAndEpoch(-1, NO_EPOCH)


def remote_log_start_offset(
    cache: RemoteLogMetadataCache, leader_epochs: Sequence[EpochEntry], local_log_start: int
) -> int:
    """The first offset of the partition counting the remote tier: the start of
    the first remote segment of the earliest epoch that has one (finished or
    not, as Kafka's ``findLogStartOffset`` lists them), else the local start."""
    for epoch, _ in leader_epochs:
        segments = cache.list_segments(epoch)
        if segments:
            return segments[0].start_offset
    return local_log_start


class LocalSegment(NamedTuple):
    """What the copy task needs to know of a local segment (oldest first)."""

    base_offset: int
    size_bytes: int


def candidate_segments(
    segments: Sequence[LocalSegment], last_stable_offset: int
) -> list[tuple[LocalSegment, int]]:
    """The segments to copy, each with its end offset + 1 (the next segment's base).

    ``segments`` are the local segments from the first one to copy on (Kafka
    passes ``logSegments(fromOffset, MAX)``), the active one last.  A segment
    is copied once it is rolled and the next segment starts at or below the
    last stable offset: the remote tier holds only committed, decided data.
    """
    chosen: list[tuple[LocalSegment, int]] = []
    for previous, current in itertools.pairwise(segments):
        if current.base_offset <= last_stable_offset:
            chosen.append((previous, current.base_offset))
    return chosen
