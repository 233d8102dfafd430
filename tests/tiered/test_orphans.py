"""Dangling copies and orphan objects: what a leader cleans, when, and what it never touches.

On real segment files and real stores (a directory, and the session's
S3Proxy), with the metadata topic as lists every manager replays
(``partition_log``).  Clocks are the test's: the grace passes when the test
says so, not after a sleep.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from tests.tiered.partition_log import TIP, Log, MetadataTopic

from samsa.tiered.copy_task import RemoteLogCopyTask, TieringError
from samsa.tiered.expiration_task import RemoteLogExpirationTask
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)
from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.orphans import DanglingCopies, OrphanCleaner, orphan_objects
from samsa.tiered.segment_objects import (
    RemoteStorageManager,
    SegmentFile,
    missing_objects,
    object_key,
    orphan_keys,
)
from samsa.tiered.store import (
    ObjectInfo,
    RemoteStore,
    RetriableRemoteStorageError,
)

S = RemoteLogSegmentState
GRACE = 10_000


def _segment(start: int, end: int, state: RemoteLogSegmentState) -> RemoteLogSegmentMetadata:
    metadata = RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(TIP), start, end, 0, 1, 0, 10, (EpochEntry(0, start),)
    )
    if state is S.COPY_SEGMENT_STARTED:
        return metadata
    return metadata.with_update(RemoteLogSegmentMetadataUpdate(metadata.segment_id, 0, state, 1))


def test_a_dangling_copy_is_due_after_the_grace_of_one_leadership() -> None:
    started, finished = (
        _segment(0, 9, S.COPY_SEGMENT_STARTED),
        _segment(0, 9, S.COPY_SEGMENT_FINISHED),
    )
    in_flight = _segment(10, 19, S.COPY_SEGMENT_STARTED)
    tracker = DanglingCopies()
    segments = [started, finished, in_flight]
    busy = {in_flight.segment_id}
    assert tracker.due(segments, busy, now_ms=1_000, grace_ms=GRACE) == []
    assert tracker.due(segments, busy, now_ms=1_000 + GRACE - 1, grace_ms=GRACE) == []
    assert tracker.due(segments, busy, now_ms=1_000 + GRACE, grace_ms=GRACE) == [started]
    # A copy of this leader that fails retriably leaves the busy set: its grace starts then.
    assert tracker.due(segments, set(), now_ms=1_000 + GRACE, grace_ms=GRACE) == [started]
    assert tracker.due(segments, set(), now_ms=1_000 + 2 * GRACE, grace_ms=GRACE) == [
        started,
        in_flight,
    ]
    # One that stopped dangling (it finished, or its deletion started) is forgotten.
    deleting = started.with_update(
        RemoteLogSegmentMetadataUpdate(started.segment_id, 0, S.DELETE_SEGMENT_STARTED, 1)
    )
    assert tracker.due([deleting, finished], set(), now_ms=10**9, grace_ms=GRACE) == []
    assert DanglingCopies().due(segments, busy, now_ms=5, grace_ms=0) == [started]


def test_orphan_objects_are_unknown_segment_objects_older_than_the_grace() -> None:
    known, unknown = _segment(0, 9, S.COPY_SEGMENT_FINISHED), _segment(0, 9, S.COPY_SEGMENT_STARTED)
    now = 1_000_000
    objects = [
        ObjectInfo(object_key(known, SegmentFile.LOG), 10, now - 2 * GRACE),
        ObjectInfo(object_key(unknown, SegmentFile.LOG), 10, now - GRACE),
        ObjectInfo(object_key(unknown, SegmentFile.OFFSET_INDEX), 10, now - GRACE + 1),
        ObjectInfo(object_key(unknown, SegmentFile.TIME_INDEX), 10, None),  # age unknown: kept
        ObjectInfo("payments-x/0/README.txt", 10, 0),  # another layout: never touched
    ]
    assert orphan_objects(objects, [known.segment_id.id], now, GRACE) == [
        object_key(unknown, SegmentFile.LOG)
    ]


def _copier(
    log: Log, metadata: RemoteLogMetadataManager, store: RemoteStore, broker: int
) -> RemoteLogCopyTask:
    return RemoteLogCopyTask(
        log, metadata, RemoteStorageManager(store), broker_id=broker, wall_clock_ms=lambda: 42
    )


class Clock:
    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> int:
        return self.ms


def _cleaner(
    metadata: RemoteLogMetadataManager,
    store: RemoteStore,
    log: Log,
    clock: Clock,
    being_copied: set[RemoteLogSegmentId] | None = None,
) -> OrphanCleaner:
    storage = RemoteStorageManager(store)
    expiration = RemoteLogExpirationTask(
        log, metadata, storage, broker_id=2, wall_clock_ms=lambda: 42
    )
    return OrphanCleaner(
        TIP,
        metadata,
        storage,
        delete_segment=expiration.delete_segment,
        being_copied=lambda: being_copied or set(),
        grace_ms=lambda: GRACE,
        monotonic_ms=clock,
        wall_clock_ms=lambda: int(time.time() * 1000) + clock.ms,
    )


def test_the_leader_deletes_a_copy_cut_short_and_what_no_metadata_names(
    store: RemoteStore, tmp_path: Path
) -> None:
    """A copy cut short (the store failed mid-upload: objects and a
    COPY_SEGMENT_STARTED left) and an object no metadata names are deleted
    once the grace passed; the finished copy of the same offsets and its
    objects stay, and afterwards the metadata and the store agree."""
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(20), log.roll(2)
    topic = MetadataTopic()
    metadata = topic.manager()
    # The deposed leader's attempt: announced, two objects written, then it died.
    cut_short = _segment(0, log.segments[0].end_offset, S.COPY_SEGMENT_STARTED)
    asyncio.run(metadata.publish(cut_short))
    for kind in (SegmentFile.OFFSET_INDEX, SegmentFile.TIME_INDEX):
        asyncio.run(store.put_bytes(object_key(cut_short, kind), b"partial"))
    # A put that landed after its segment was forgotten: no metadata names it.
    stray = _segment(0, 5, S.COPY_SEGMENT_STARTED)
    asyncio.run(store.put_bytes(object_key(stray, SegmentFile.LOG), b"late"))
    asyncio.run(store.put_bytes("payments-other/notes.txt", b"not ours"))
    # The new leader copies the same offsets again.
    assert asyncio.run(_copier(log, metadata, store, broker=2).run_once()) == 1

    clock = Clock()
    cleaner = _cleaner(metadata, store, log, clock)
    assert asyncio.run(cleaner.run_once()) == 0  # seen, not yet due; the strays are young
    clock.ms = GRACE
    assert asyncio.run(cleaner.run_once()) == 2  # the dangling copy, and the stray object

    cache = metadata.cache(TIP)
    assert cache is not None
    assert [s.state for s in cache.list_all()] == [S.COPY_SEGMENT_FINISHED]
    objects = asyncio.run(store.list_objects(""))
    assert "payments-other/notes.txt" in {o.key for o in objects}  # not a segment's: kept
    ours = asyncio.run(RemoteStorageManager(store).list_partition_objects(TIP))
    assert orphan_keys(ours, [s.segment_id.id for s in cache.list_all()]) == []
    assert missing_objects(cache.list_all(), ours) == {}
    assert len(ours) == 5  # the finished copy's log, indexes, snapshot and epochs
    updates = [e for e in topic.events() if isinstance(e, RemoteLogSegmentMetadataUpdate)]
    assert [u.state for u in updates if u.segment_id == cut_short.segment_id] == [
        S.DELETE_SEGMENT_STARTED,
        S.DELETE_SEGMENT_FINISHED,
    ]


def test_a_copy_being_uploaded_here_is_never_cleaned(store: RemoteStore, tmp_path: Path) -> None:
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(5), log.roll(1)
    topic = MetadataTopic()
    metadata = topic.manager()
    uploading = _segment(0, log.segments[0].end_offset, S.COPY_SEGMENT_STARTED)
    asyncio.run(metadata.publish(uploading))
    clock = Clock()
    cleaner = _cleaner(metadata, store, log, clock, being_copied={uploading.segment_id})
    clock.ms = 10 * GRACE
    assert asyncio.run(cleaner.run_once()) == 0
    cache = metadata.cache(TIP)
    assert cache is not None and cache.get(uploading.segment_id) is not None


def test_a_late_finish_of_a_cleaned_copy_keeps_the_local_segment(
    store: RemoteStore, tmp_path: Path
) -> None:
    """A deposed leader finishes a copy the new leader already cleaned as
    dangling: every replica drops its COPY_SEGMENT_FINISHED, and its copy
    task does not let local retention delete the segment."""
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(10), log.roll(1)
    topic = MetadataTopic()
    deposed_metadata = topic.manager()
    new_leader_metadata = topic.manager()

    class CleanedMeanwhile(RemoteStorageManager):
        """The upload is slow: the new leader's cleaner runs in the middle of it."""

        async def copy_log_segment_data(self, metadata, data):  # type: ignore[no-untyped-def]
            await super().copy_log_segment_data(metadata, data)
            cache = new_leader_metadata.cache(TIP)
            assert cache is not None
            clock = Clock()
            cleaner = _cleaner(new_leader_metadata, self.store, log, clock)
            await cleaner.run_once()
            clock.ms = GRACE
            assert await cleaner.run_once() >= 1

    deposed = RemoteLogCopyTask(
        log, deposed_metadata, CleanedMeanwhile(store), broker_id=1, wall_clock_ms=lambda: 42
    )
    with pytest.raises(TieringError, match="deleted before it finished"):
        asyncio.run(deposed.run_once())
    assert log.highest_remote == -1  # local retention may not delete the segment
    cache = new_leader_metadata.cache(TIP)
    assert cache is not None and len(cache) == 0


def test_publish_gives_up_when_its_event_is_never_replayed() -> None:
    async def scenario() -> None:
        async def produce(partition: int, value: bytes) -> int:
            return 0  # durable, but the replay never gets there

        manager = RemoteLogMetadataManager(produce, partitions=1, consume_wait_ms=50)
        manager.load_partition(TIP)
        manager.mark_initialized(TIP)
        with pytest.raises(RetriableRemoteStorageError, match="not replayed here within 50 ms"):
            await manager.publish(_segment(0, 9, S.COPY_SEGMENT_STARTED))

    asyncio.run(scenario())
