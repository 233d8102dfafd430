"""Copying a leader's rolled segments to the remote tier: Kafka's RLMCopyTask.

One task per partition this broker leads (for a topic with
``remote.storage.enable`` and without ``remote.log.copy.disable``), run every
``remote.log.manager.task.interval.ms``.  A run:

1. on its first run as leader, sets the log start from the remote metadata
   (the first remote segment's start) and finds the highest offset already
   copied on this replica's lineage (``lineage.highest_remote_offset``): a new
   leader continues there, re-uploading nothing and leaving no gap;
2. picks the rolled segments after it whose successors start at or below the
   last stable offset (``lineage.candidate_segments``), oldest first;
3. for each: publishes its metadata as COPY_SEGMENT_STARTED (a fresh segment
   id), uploads its files, publishes COPY_SEGMENT_FINISHED, and only then
   tells the log that local retention may delete up to the segment's end.

A retriable store error (the store unreachable, paused, throttling) ends the
run; the segment is tried again next run under a new id, and the abandoned
attempt stays COPY_SEGMENT_STARTED in the metadata, as in Kafka, until the
leader's orphan cleaner deletes it (``orphans``).  A fatal store error
deletes what the attempt uploaded and records the deletion, as Kafka does.
A copy whose COPY_SEGMENT_FINISHED was dropped on replay (a newer leader
cleaned it as dangling first) counts as failed: the highest copied offset
does not move, so local retention keeps the segment.  Nothing is ever
deleted locally by this task.

Runs on the event loop; every wait (publish, upload) is an await.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from samsa.storage.files.leader_epoch_checkpoint import format_leader_epoch_checkpoint
from samsa.tiered.lineage import (
    LocalSegment,
    OffsetAndEpoch,
    candidate_segments,
    epochs_in_range,
    highest_remote_offset,
    remote_log_start_offset,
)
from samsa.tiered.log_view import LocalSegmentFiles, TieredLog
from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.metadata.model import (
    EpochEntry,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)
from samsa.tiered.quota import RateQuota
from samsa.tiered.segment_objects import LogSegmentData, RemoteStorageManager
from samsa.tiered.store.base import RemoteStorageError, RetriableRemoteStorageError

__all__ = ["RemoteLogCopyTask", "TieringError"]

logger = logging.getLogger(__name__)


class TieringError(Exception):
    """The partition cannot be tiered as it is (no leader epoch for a segment)."""


class RemoteLogCopyTask:
    """Copies one partition's rolled segments (see the module doc)."""

    def __init__(
        self,
        log: TieredLog,
        metadata: RemoteLogMetadataManager,
        storage: RemoteStorageManager,
        *,
        broker_id: int,
        wall_clock_ms: Callable[[], int],
        quota: RateQuota | None = None,
    ) -> None:
        """``quota``: the broker's ``remote.log.manager.copy.max.bytes.per.second``,
        shared by every partition's task."""
        self.log = log
        self.metadata = metadata
        self.storage = storage
        self.broker_id = broker_id
        self._now_ms = wall_clock_ms
        self.quota = quota
        self._copied: OffsetAndEpoch | None = None
        self._log_start_set = False
        self.cancelled = False
        self.being_copied: set[RemoteLogSegmentId] = set()
        """Segments this task is uploading: the expiration task must not
        delete them (Kafka's ``segmentIdsBeingCopied``)."""

    @property
    def copied_offset(self) -> int | None:
        """The highest offset known copied, None before the first run found it."""
        return None if self._copied is None else self._copied.offset

    def cancel(self) -> None:
        """Stop after the current step (leadership moved, the partition stopped)."""
        self.cancelled = True

    async def run(self, interval_s: float) -> None:
        """Run until cancelled, one run every ``interval_s`` (Kafka's fixed delay)."""
        name = self.log.topic_id_partition
        while not self.cancelled:
            try:
                await self.run_once()
            except RetriableRemoteStorageError as exc:
                logger.debug("[%s] copy will be retried: %s", name, exc)
            except Exception:
                if not self.cancelled:
                    logger.warning("[%s] copy failed; it runs again", name, exc_info=True)
            await asyncio.sleep(interval_s)

    async def run_once(self) -> int:
        """One run; returns how many segments were copied."""
        partition = self.log.topic_id_partition
        cache = self.metadata.cache(partition)
        if self.cancelled or cache is None or not self.metadata.is_ready(partition):
            return 0
        epochs = self.log.leader_epoch_entries()
        if not self._log_start_set:
            local_start = self.log.local_log_start_offset()
            await self.log.update_log_start_offset_from_remote(
                remote_log_start_offset(cache, epochs, local_start)
            )
            self._log_start_set = True
        if self._copied is None:
            self._copied = highest_remote_offset(cache, epochs, self.log.log_end_offset())
            logger.info("[%s] highest offset already copied: %s", partition, self._copied)
            if self._copied.offset >= 0:
                self.log.update_highest_offset_in_remote_storage(self._copied.offset)
        last_stable = self.log.last_stable_offset()
        if last_stable <= 0 or self._copied.offset >= last_stable:
            return 0
        start = max(self._copied.offset + 1, self.log.log_start_offset())
        segments = self.log.segments_from(start)
        by_base = {s.base_offset: s for s in segments}
        chosen = candidate_segments(
            [LocalSegment(s.base_offset, s.size_bytes) for s in segments], last_stable
        )
        copied = 0
        for segment, next_base in chosen:
            if self.cancelled:
                break
            await self._wait_for_quota(segment.size_bytes)
            await self._copy(by_base[segment.base_offset], next_base)
            copied += 1
        return copied

    async def _wait_for_quota(self, size_bytes: int) -> None:
        """Wait while the broker's copies are over the quota, then count this one
        (Kafka waits in steps of at most a second, so a cancel is seen)."""
        if self.quota is None:
            return
        loop = asyncio.get_running_loop()
        while not self.cancelled:
            wait_ms = self.quota.throttle_time_ms(int(loop.time() * 1000))
            if wait_ms <= 0:
                break
            logger.debug(
                "[%s] copy quota exceeded; waiting %d ms", self.log.topic_id_partition, wait_ms
            )
            await asyncio.sleep(min(wait_ms, 1000) / 1000)
        self.quota.record(size_bytes, int(loop.time() * 1000))

    async def _copy(self, segment: LocalSegmentFiles, next_base: int) -> None:
        partition = self.log.topic_id_partition
        all_epochs = self.log.leader_epoch_entries()
        segment_epochs = epochs_in_range(all_epochs, segment.base_offset, next_base)
        if not segment_epochs:
            raise TieringError(
                f"[{partition}] segment {segment.base_offset} has no leader epoch; it can not be tiered"
            )
        metadata = RemoteLogSegmentMetadata(
            RemoteLogSegmentId.generate_new(partition),
            start_offset=segment.base_offset,
            end_offset=next_base - 1,
            max_timestamp_ms=segment.largest_timestamp_ms,
            broker_id=self.broker_id,
            event_timestamp_ms=self._now_ms(),
            segment_size_bytes=segment.size_bytes,
            segment_leader_epochs=tuple(segment_epochs),
            txn_index_empty=segment.transaction_index is None,
        )
        self.being_copied.add(metadata.segment_id)
        try:
            await self._upload(metadata, segment, next_base, all_epochs)
        finally:
            self.being_copied.discard(metadata.segment_id)
        self._copied = OffsetAndEpoch(metadata.end_offset, segment_epochs[-1].epoch)
        self.log.update_highest_offset_in_remote_storage(metadata.end_offset)
        logger.info(
            "[%s] copied segment %d as %s", partition, segment.base_offset, metadata.segment_id
        )

    async def _upload(
        self,
        metadata: RemoteLogSegmentMetadata,
        segment: LocalSegmentFiles,
        next_base: int,
        all_epochs: list[EpochEntry],
    ) -> None:
        """Publish STARTED, upload, publish FINISHED (see the module doc)."""
        partition = self.log.topic_id_partition
        snapshot = await self.log.producer_snapshot(next_base)
        await self.metadata.publish(metadata)
        data = LogSegmentData(
            log=segment.log,
            offset_index=segment.offset_index,
            time_index=segment.time_index,
            transaction_index=segment.transaction_index,
            producer_snapshot=snapshot,
            leader_epoch_checkpoint=format_leader_epoch_checkpoint(
                epochs_in_range(all_epochs, -1, next_base)
            ),
        )
        logger.info(
            "[%s] copying segment %d to %s",
            partition,
            segment.base_offset,
            self.storage.store.describe(),
        )
        try:
            await self.storage.copy_log_segment_data(metadata, data)
        except RetriableRemoteStorageError:
            raise
        except RemoteStorageError:
            await self._discard(metadata)
            raise
        await self.metadata.publish(
            self._update(metadata, RemoteLogSegmentState.COPY_SEGMENT_FINISHED)
        )
        cache = self.metadata.cache(partition)
        applied = None if cache is None else cache.get(metadata.segment_id)
        if applied is None or applied.state is not RemoteLogSegmentState.COPY_SEGMENT_FINISHED:
            # Another leader cleaned this copy as dangling before it finished
            # (see ``orphans``): its FINISHED was dropped, nothing is copied.
            raise TieringError(
                f"[{partition}] copy {metadata.segment_id} of segment {segment.base_offset} "
                "was deleted before it finished; the local segment stays"
            )

    async def _discard(self, metadata: RemoteLogSegmentMetadata) -> None:
        """Delete a failed attempt's objects and record it; failures here are
        left to the expiration task, which deletes unfinished segments."""
        try:
            await self.metadata.publish(
                self._update(metadata, RemoteLogSegmentState.DELETE_SEGMENT_STARTED)
            )
            await self.storage.delete_log_segment_data(metadata)
            await self.metadata.publish(
                self._update(metadata, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED)
            )
        except RemoteStorageError as exc:
            logger.info("[%s] cleaning a failed copy will be retried: %s", metadata.segment_id, exc)

    def _update(
        self, metadata: RemoteLogSegmentMetadata, state: RemoteLogSegmentState
    ) -> RemoteLogSegmentMetadataUpdate:
        return RemoteLogSegmentMetadataUpdate(
            metadata.segment_id, self._now_ms(), state, self.broker_id
        )
