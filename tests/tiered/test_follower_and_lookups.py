"""After a leader tiered its log: a follower rebuilds from the remote tier, timestamps are
found there, and the metadata agrees with the objects in the bucket."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.tiered.partition_log import TIP, Log, MetadataTopic

from samsa.storage.leader_epoch_cache import EpochEndOffset
from samsa.tiered import remote_fetch
from samsa.tiered.copy_task import RemoteLogCopyTask
from samsa.tiered.follower_state import fetch_aux_state, target_epoch
from samsa.tiered.metadata import EpochEntry, RemoteLogMetadataCache
from samsa.tiered.remote_index import RemoteIndexCache
from samsa.tiered.remote_read import TimestampAndOffset
from samsa.tiered.segment_objects import (
    RemoteStorageManager,
    SegmentFile,
    missing_objects,
    object_key,
    orphan_keys,
)
from samsa.tiered.store import FileSystemRemoteStore, RemoteStorageError


@pytest.fixture
def tiered(tmp_path: Path) -> tuple[Log, RemoteLogMetadataCache, RemoteStorageManager]:
    """A log of epochs 0 and 2 (1 wrote nothing), four segments copied."""
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(10), log.roll(10)
    log.epochs.append(EpochEntry(1, 200))
    log.epochs.append(EpochEntry(2, 200))
    log.roll(10), log.roll(10), log.roll(1)
    storage = RemoteStorageManager(FileSystemRemoteStore(tmp_path / "remote"))
    metadata = MetadataTopic().manager()
    task = RemoteLogCopyTask(log, metadata, storage, broker_id=1, wall_clock_ms=lambda: 1)
    assert asyncio.run(task.run_once()) == 4
    cache = metadata.cache(TIP)
    assert cache is not None
    return log, cache, storage


def test_the_epoch_before_the_leaders_local_start() -> None:
    # Local start 300 in epoch 2; epoch 1 wrote nothing, so the leader answers
    # "epoch 0 ended at 200" for epoch 1: 299 is epoch 2's.
    assert target_epoch(2, EpochEndOffset(0, 200), 300) == 2
    # Local start 200 (the first offset of epoch 2): 199 is epoch 0's, across the gap.
    assert target_epoch(2, EpochEndOffset(0, 200), 200) == 0
    assert target_epoch(0, None, 50) == 0


def test_a_follower_rebuilds_its_state_from_the_remote_tier(
    tiered: tuple[Log, RemoteLogMetadataCache, RemoteStorageManager],
) -> None:
    _, cache, storage = tiered
    # The leader's local log now starts at 300 (local retention removed the rest).
    state = asyncio.run(
        fetch_aux_state(cache, storage, target_epoch(2, EpochEndOffset(0, 200), 300), 300)
    )
    assert state.next_offset == 300 and state.segment.start_offset == 200
    # Epoch 1 wrote nothing: a leader epoch cache drops it when epoch 2 starts at the same offset.
    assert state.leader_epochs == [EpochEntry(0, 0), EpochEntry(2, 200)]
    assert state.producer_snapshot == b"snapshot-bytes"
    state = asyncio.run(fetch_aux_state(cache, storage, 0, 200))
    assert state.next_offset == 200 and state.leader_epochs == [EpochEntry(0, 0)]
    with pytest.raises(RemoteStorageError, match="no remote segment"):
        asyncio.run(fetch_aux_state(cache, storage, 2, 500))  # not tiered yet


def test_timestamps_are_found_in_the_remote_tier_or_left_to_the_local_log(
    tiered: tuple[Log, RemoteLogMetadataCache, RemoteStorageManager], tmp_path: Path
) -> None:
    log, cache, storage = tiered
    records = [r for s in log.segments for r in s.records]

    async def find(timestamp: int, starting: int, local_start: int) -> TimestampAndOffset | None:
        indexes = RemoteIndexCache(storage, tmp_path / "idx")
        try:
            return await remote_fetch.find_offset_by_timestamp(
                storage,
                indexes,
                cache,
                log.epochs,
                log_end_offset=log.log_end_offset(),
                local_log_start=local_start,
                timestamp=timestamp,
                starting_offset=starting,
            )
        finally:
            await indexes.close()

    for offset, timestamp in records[5:380:37]:
        found = asyncio.run(find(timestamp, 0, local_start=400))
        expected = next(o for o, t in records if t >= timestamp)
        assert found is not None and found.offset == expected, offset
        assert found.leader_epoch == (0 if expected < 200 else 2)
    # From a starting offset on: the first record at or after both.
    found = asyncio.run(find(records[10][1], 250, local_start=400))
    assert found is not None and found.offset == 250
    # Still local, or past everything tiered: the local log answers.
    assert asyncio.run(find(records[350][1], 0, local_start=300)) is None
    assert asyncio.run(find(records[-1][1] + 1, 0, local_start=400)) is None


def test_the_metadata_and_the_bucket_agree(
    tiered: tuple[Log, RemoteLogMetadataCache, RemoteStorageManager],
) -> None:
    _, cache, storage = tiered
    segments = list(cache.list_all())
    objects = asyncio.run(storage.list_partition_objects(TIP))
    assert missing_objects(segments, objects) == {}
    assert orphan_keys(objects, [s.segment_id.id for s in segments]) == []
    victim = segments[0]
    asyncio.run(storage.store.delete_many([object_key(victim, SegmentFile.TIME_INDEX)]))
    objects = asyncio.run(storage.list_partition_objects(TIP))
    assert list(missing_objects(segments, objects).values()) == [[SegmentFile.TIME_INDEX]]
    assert len(orphan_keys(objects, [s.segment_id.id for s in segments[1:]])) == 4
