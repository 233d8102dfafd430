"""Deleting what total retention expired from the remote tier: the I/O half of Kafka's RLMExpirationTask.

Each run asks ``expiration.plan_expiration`` what to delete, then for every
segment of the plan publishes DELETE_SEGMENT_STARTED, deletes its objects and
publishes DELETE_SEGMENT_FINISHED, and finally moves the log start past what
retention removed.  A segment whose objects could not be deleted stays
DELETE_SEGMENT_STARTED and is retried first on the next run (by this leader
or the next one), so a crash at any point leaves no object without metadata
that says it is being deleted.  Local segments are never touched here (local
retention is the log's, and waits for the copy).

Once no finished remote segment is left (retention removed them all, with
``remote.log.copy.disable`` no new ones come), the log starts where the
local log does: local retention went on meanwhile and the remote tier no
longer holds what lies below it.  Before its first plan, a new leader seeds
the highest offset in the remote tier from the metadata, as Kafka's
expiration task does, so that ``retention.bytes`` does not count the local
copies of remote segments twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from samsa.tiered.expiration import ExpirationPlan, RetentionLimits, plan_expiration
from samsa.tiered.lineage import highest_remote_offset
from samsa.tiered.log_view import TieredLog
from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.metadata.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)
from samsa.tiered.segment_objects import RemoteStorageManager

__all__ = ["RemoteLogExpirationTask"]

logger = logging.getLogger(__name__)


class RemoteLogExpirationTask:
    """Applies remote retention for one partition this broker leads."""

    def __init__(
        self,
        log: TieredLog,
        metadata: RemoteLogMetadataManager,
        storage: RemoteStorageManager,
        *,
        broker_id: int,
        wall_clock_ms: Callable[[], int],
        being_copied: Callable[[], Collection[RemoteLogSegmentId]] = frozenset,
    ) -> None:
        self.log = log
        self.metadata = metadata
        self.storage = storage
        self.broker_id = broker_id
        self._now_ms = wall_clock_ms
        self._being_copied = being_copied
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def plan(self) -> ExpirationPlan:
        partition = self.log.topic_id_partition
        cache = self.metadata.cache(partition)
        if cache is None or not self.metadata.is_ready(partition):
            return ExpirationPlan()
        if self.log.highest_offset_in_remote_storage() < 0:
            found = highest_remote_offset(
                cache, self.log.leader_epoch_entries(), self.log.log_end_offset()
            )
            if found.offset >= 0:
                self.log.update_highest_offset_in_remote_storage(found.offset)
        return plan_expiration(
            cache,
            self.log.leader_epoch_entries(),
            log_start_offset=self.log.log_start_offset(),
            log_end_offset=self.log.log_end_offset(),
            local_only_bytes=self.log.local_only_size_bytes(),
            limits=RetentionLimits(self.log.retention_ms(), self.log.retention_bytes()),
            now_ms=self._now_ms(),
            being_copied=self._being_copied(),
        )

    async def run_once(self) -> int:
        """One run; returns how many remote segments were deleted.  Store
        errors propagate (the segment in hand stays DELETE_SEGMENT_STARTED)."""
        if self.cancelled:
            return 0
        plan = self.plan()
        deleted = 0
        for segment in plan.delete:
            if self.cancelled:
                break
            await self.delete_segment(segment)
            deleted += 1
        if self.cancelled:
            return deleted
        if plan.new_log_start is not None:
            await self.log.update_log_start_offset_from_remote(plan.new_log_start)
        if not self._any_finished() and self.log.local_log_start_offset() > (
            self.log.log_start_offset()
        ):
            await self.log.update_log_start_offset_from_remote(self.log.local_log_start_offset())
        return deleted

    def _any_finished(self) -> bool:
        cache = self.metadata.cache(self.log.topic_id_partition)
        if cache is None or not self.metadata.is_ready(self.log.topic_id_partition):
            return True  # not known: leave the log start alone
        finished = RemoteLogSegmentState.COPY_SEGMENT_FINISHED
        return any(s.state is finished for s in cache.list_all())

    async def delete_segment(self, segment: RemoteLogSegmentMetadata) -> None:
        """DELETE_SEGMENT_STARTED (unless it is already), the objects,
        DELETE_SEGMENT_FINISHED (Kafka's ``deleteRemoteLogSegment``)."""
        S = RemoteLogSegmentState
        if segment.state is not S.DELETE_SEGMENT_STARTED:
            await self.metadata.publish(self._update(segment, S.DELETE_SEGMENT_STARTED))
        await self.storage.delete_log_segment_data(segment)
        await self.metadata.publish(self._update(segment, S.DELETE_SEGMENT_FINISHED))
        logger.info(
            "[%s] deleted remote segment %s (offsets %d-%d)",
            self.log.topic_id_partition,
            segment.segment_id,
            segment.start_offset,
            segment.end_offset,
        )

    def _update(
        self, segment: RemoteLogSegmentMetadata, state: RemoteLogSegmentState
    ) -> RemoteLogSegmentMetadataUpdate:
        return RemoteLogSegmentMetadataUpdate(
            segment.segment_id, self._now_ms(), state, self.broker_id
        )
