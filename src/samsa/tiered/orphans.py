"""Copies nobody will finish and objects nobody names: what a leader cleans from the remote tier, and when.

Kafka's RemoteLogManager (4.x) cleans a copy at once only when it fails with
a non-retriable store error: the copy task deletes its own attempt
(``copy_task``).  A copy that failed retriably (the store paused, or
answering 5xx), or that a crash or a leadership change cut short, stays
COPY_SEGMENT_STARTED in ``__remote_log_metadata`` with whatever objects it
had written, and Kafka's expiration walk deletes it only once its offsets
fall below the log start or breach total retention (days later, by default;
until then a valid one also stops the walk).  Objects that no metadata names
at all (a deposed leader's upload that landed after its segment was
deleted) Kafka never cleans.  Samsa's leader of a partition cleans both
sooner, once that is safe:

* a *dangling copy*, a COPY_SEGMENT_STARTED segment that this broker's copy
  task is not uploading, once this leader has seen it so for
  ``remote.log.manager.orphan.grace.ms`` of one continuous leadership:
  DELETE_SEGMENT_STARTED, its objects deleted, DELETE_SEGMENT_FINISHED, as
  any deletion.  Readers only ever read finished segments, so this deletes
  nothing readable.  The grace lets a deposed leader that has not yet
  learnt of its demotion give up first; should its COPY_SEGMENT_FINISHED
  still come, it comes after DELETE_SEGMENT_STARTED, a transition every
  replica drops, and the copy task that wrote it sees that and keeps its
  local segment (``copy_task``).
* an *orphan object*, a segment object under the partition's prefix whose
  segment id the metadata does not know (never announced, or its segment
  finished deleting), once the store says it is older than the same grace:
  deleted (there is no metadata to write).  A copy publishes
  COPY_SEGMENT_STARTED and waits until it is applied before it uploads, so a
  live copy's objects are always named; the grace covers a replica whose
  replay lags.  Keys of another layout are never touched.  Listing costs a
  request per partition, so the sweep runs once per grace period.

``DanglingCopies`` and ``orphan_objects`` decide (sans-I/O); the
``OrphanCleaner`` of a leader's expiration task deletes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterable

from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.metadata.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentState,
    TopicIdPartition,
    uuid_str,
)
from samsa.tiered.segment_objects import RemoteStorageManager, parse_object_key
from samsa.tiered.store.base import ObjectInfo

__all__ = ["DEFAULT_GRACE_MS", "DanglingCopies", "OrphanCleaner", "orphan_objects"]

logger = logging.getLogger(__name__)

DEFAULT_GRACE_MS = 300_000
"""``remote.log.manager.orphan.grace.ms``: five minutes."""


class DanglingCopies:
    """Since when this leader has seen each COPY_SEGMENT_STARTED segment that
    its copy task is not uploading (one instance per leadership)."""

    def __init__(self) -> None:
        self._first_seen: dict[RemoteLogSegmentId, int] = {}

    def due(
        self,
        segments: Iterable[RemoteLogSegmentMetadata],
        being_copied: Collection[RemoteLogSegmentId],
        now_ms: int,
        grace_ms: int,
    ) -> list[RemoteLogSegmentMetadata]:
        """The dangling copies seen for at least ``grace_ms`` (``now_ms`` on a
        monotonic clock), oldest offsets first.  A segment that stops being
        dangling (it finished, or is being deleted) is forgotten."""
        dangling = {
            s.segment_id: s
            for s in segments
            if s.state is RemoteLogSegmentState.COPY_SEGMENT_STARTED
            and s.segment_id not in being_copied
        }
        for gone in self._first_seen.keys() - dangling.keys():
            del self._first_seen[gone]
        for segment_id in dangling:
            self._first_seen.setdefault(segment_id, now_ms)
        return sorted(
            (s for i, s in dangling.items() if now_ms - self._first_seen[i] >= grace_ms),
            key=lambda s: s.start_offset,
        )


def orphan_objects(
    objects: Iterable[ObjectInfo], known_segment_ids: Iterable[bytes], now_ms: int, grace_ms: int
) -> list[str]:
    """Keys of segment objects whose segment id is not known and that were
    last written at least ``grace_ms`` before ``now_ms`` (wall clock).  An
    object whose age the store does not tell is kept."""
    known = {uuid_str(i) for i in known_segment_ids}
    orphans = []
    for info in objects:
        parsed = parse_object_key(info.key)
        if parsed is None or parsed.segment_id in known:
            continue
        if info.last_modified_ms is not None and now_ms - info.last_modified_ms >= grace_ms:
            orphans.append(info.key)
    return orphans


class OrphanCleaner:
    """Deletes one led partition's dangling copies and orphan objects (see the module doc)."""

    def __init__(
        self,
        partition: TopicIdPartition,
        metadata: RemoteLogMetadataManager,
        storage: RemoteStorageManager,
        *,
        delete_segment: Callable[[RemoteLogSegmentMetadata], Awaitable[None]],
        being_copied: Callable[[], Collection[RemoteLogSegmentId]],
        grace_ms: Callable[[], int],
        monotonic_ms: Callable[[], int],
        wall_clock_ms: Callable[[], int],
    ) -> None:
        """``delete_segment``: the expiration task's deletion (STARTED, objects,
        FINISHED); ``being_copied``: the copy task's segments in flight."""
        self.partition = partition
        self.metadata = metadata
        self.storage = storage
        self._delete_segment = delete_segment
        self._being_copied = being_copied
        self._grace_ms = grace_ms
        self._monotonic_ms = monotonic_ms
        self._wall_clock_ms = wall_clock_ms
        self.dangling = DanglingCopies()
        self._next_sweep_ms: int | None = None
        self.cancelled = False
        self.dangling_deleted = 0
        self.orphans_deleted = 0

    def cancel(self) -> None:
        self.cancelled = True

    async def run_once(self) -> int:
        """One pass; returns how many dangling copies and orphan objects went.
        Store errors propagate (the next pass tries again)."""
        cache = self.metadata.cache(self.partition)
        if self.cancelled or cache is None or not self.metadata.is_ready(self.partition):
            return 0
        grace = self._grace_ms()
        now = self._monotonic_ms()
        cleaned = 0
        for segment in self.dangling.due(cache.list_all(), self._being_copied(), now, grace):
            if self.cancelled:
                return cleaned
            logger.info(
                "[%s] deleting dangling copy %s (offsets %d-%d, started by broker %d): "
                "no copy of it is in progress",
                self.partition,
                segment.segment_id,
                segment.start_offset,
                segment.end_offset,
                segment.broker_id,
            )
            await self._delete_segment(segment)
            self.dangling_deleted += 1
            cleaned += 1
        if self._next_sweep_ms is None or now >= self._next_sweep_ms:
            self._next_sweep_ms = now + grace
            cleaned += await self._sweep(grace)
        return cleaned

    async def _sweep(self, grace_ms: int) -> int:
        objects = await self.storage.list_partition_objects(self.partition)
        cache = self.metadata.cache(self.partition)
        if self.cancelled or cache is None:
            return 0
        known = [s.segment_id.id for s in cache.list_all()]  # listed first: see the module doc
        keys = orphan_objects(objects, known, self._wall_clock_ms(), grace_ms)
        if not keys:
            return 0
        logger.info(
            "[%s] deleting %d orphan objects no remote metadata names: %s",
            self.partition,
            len(keys),
            ", ".join(keys[:5]) + (" ..." if len(keys) > 5 else ""),
        )
        await self.storage.store.delete_many(keys)
        self.orphans_deleted += len(keys)
        return len(keys)
