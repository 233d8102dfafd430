"""Which remote segments total retention deletes: Kafka's RLMExpirationTask decisions, sans-I/O.

A leader runs these every ``remote.log.manager.task.interval.ms``.  Walking
its lineage's epochs oldest first, and each epoch's remote segments by start
offset, a segment is deleted when:

* it is DELETE_SEGMENT_STARTED already (a delete that failed earlier: retry);
* it lies wholly before the log start (DeleteRecords, or retention moved it)
  and has no epoch newer than the lineage's first;
* it is on the lineage (``lineage.is_segment_within_leader_epochs``) and
  breaches ``retention.ms`` (its newest record is older) or ``retention.bytes``
  (the partition, its local-only part plus its finished remote part, is too
  big, and deleting this segment still leaves it at least as big as allowed).

The walk stops at the first segment that is on the lineage and kept (later
ones are newer), and at a segment the copy task is uploading.  Segments whose
every epoch is older than the lineage's earliest epoch (another history, left
by an unclean election) are deleted too.  The new log start is the end + 1 of
the last segment deleted for retention.

``plan_expiration`` decides; the expiration task (the broker's) publishes
DELETE_SEGMENT_STARTED, deletes the objects, publishes DELETE_SEGMENT_FINISHED
for each segment of the plan, then moves the log start.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from samsa.tiered.lineage import filtered_epochs, is_segment_within_leader_epochs
from samsa.tiered.metadata.cache import RemoteLogMetadataCache
from samsa.tiered.metadata.model import (
    EpochEntry,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentState,
)

__all__ = ["ExpirationPlan", "RetentionLimits", "plan_expiration"]

S = RemoteLogSegmentState


@dataclass(frozen=True, slots=True)
class RetentionLimits:
    """The topic's total retention (``retention.ms``, ``retention.bytes``; -1: none)."""

    retention_ms: int = -1
    retention_bytes: int = -1


@dataclass(slots=True)
class ExpirationPlan:
    """Segments to delete, oldest first, and the log start they leave (None: unchanged)."""

    delete: list[RemoteLogSegmentMetadata] = field(default_factory=list)
    new_log_start: int | None = None

    @property
    def size_bytes(self) -> int:
        return sum(s.segment_size_bytes for s in self.delete)


def plan_expiration(
    cache: RemoteLogMetadataCache,
    leader_epochs: Sequence[EpochEntry],
    *,
    log_start_offset: int,
    log_end_offset: int,
    local_only_bytes: int,
    limits: RetentionLimits,
    now_ms: int,
    being_copied: Collection[RemoteLogSegmentId] = (),
) -> ExpirationPlan:
    """What to delete now (see the module doc); ``leader_epochs`` unfiltered."""
    plan = ExpirationPlan()
    if not leader_epochs:
        return plan
    lineage = filtered_epochs(leader_epochs)
    all_segments = list(cache.list_all())
    finished_bytes = sum(
        s.segment_size_bytes for s in all_segments if s.state is S.COPY_SEGMENT_FINISHED
    )
    breach = _size_breach(limits, local_only_bytes, finished_bytes, cache, lineage, log_end_offset)
    cleanup_until = now_ms - limits.retention_ms if limits.retention_ms > -1 else -1
    chosen: set[RemoteLogSegmentId] = set()
    log_start: int | None = None
    first_epoch = lineage[0].epoch
    can_process = True
    for epoch, _ in lineage:
        if not can_process:
            break
        for segment in cache.list_segments(epoch):
            if segment.segment_id in being_copied:
                can_process = False
                break
            if segment.state is S.DELETE_SEGMENT_STARTED:
                _add(plan, chosen, segment)
                continue
            if segment.segment_id in chosen:
                continue
            delete = segment.end_offset < log_start_offset and all(
                e <= first_epoch for e in segment.epochs
            )
            valid = False
            if not delete:
                valid = is_segment_within_leader_epochs(segment, log_end_offset, lineage)
                if valid and cleanup_until >= 0 and segment.max_timestamp_ms < cleanup_until:
                    delete = True
                    breach = max(0, breach - segment.segment_size_bytes)
                elif valid and breach > 0 and segment.segment_size_bytes <= breach:
                    delete = True
                    breach -= segment.segment_size_bytes
                if delete:
                    log_start = max(log_start or 0, segment.end_offset + 1)
            if delete:
                _add(plan, chosen, segment)
            if not (delete or not valid):
                can_process = False
                break
    earliest = leader_epochs[0].epoch
    for segment in sorted(all_segments, key=lambda s: s.start_offset):
        if segment.segment_id not in chosen and all(e < earliest for e in segment.epochs):
            _add(plan, chosen, segment)
    plan.new_log_start = log_start
    return plan


def _add(
    plan: ExpirationPlan, chosen: set[RemoteLogSegmentId], segment: RemoteLogSegmentMetadata
) -> None:
    chosen.add(segment.segment_id)
    plan.delete.append(segment)


def _size_breach(
    limits: RetentionLimits,
    local_only_bytes: int,
    finished_bytes: int,
    cache: RemoteLogMetadataCache,
    lineage: Sequence[EpochEntry],
    log_end_offset: int,
) -> int:
    """How many bytes over ``retention.bytes`` the partition is (0: not over).
    Counts the finished remote segments on the lineage, each once."""
    if limits.retention_bytes < 0 or local_only_bytes + finished_bytes <= limits.retention_bytes:
        return 0
    seen: set[RemoteLogSegmentId] = set()
    remote = 0
    for epoch, _ in lineage:
        for segment in cache.list_segments(epoch):
            if segment.state is not S.COPY_SEGMENT_FINISHED or segment.segment_id in seen:
                continue
            seen.add(segment.segment_id)
            if is_segment_within_leader_epochs(segment, log_end_offset, lineage):
                remote += segment.segment_size_bytes
    return max(0, local_only_bytes + remote - limits.retention_bytes)
