"""The copy task on real segment files and real stores: what it copies, how a new leader resumes,
what a store outage leaves behind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.tiered.partition_log import TIP, Log, MetadataTopic

from samsa.testing.object_store import S3Server
from samsa.tiered import remote_fetch
from samsa.tiered.copy_task import RemoteLogCopyTask
from samsa.tiered.expiration_task import RemoteLogExpirationTask
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)
from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.remote_index import RemoteIndexCache
from samsa.tiered.segment_objects import RemoteStorageManager
from samsa.tiered.store import FileSystemRemoteStore, RemoteStore, RetriableRemoteStorageError
from samsa.tiered.store.s3 import S3RemoteStore, S3Settings

S = RemoteLogSegmentState


@pytest.fixture(params=["filesystem", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RemoteStore]:
    if request.param == "filesystem":
        made: RemoteStore = FileSystemRemoteStore(tmp_path / "remote")
    else:
        server: S3Server = request.getfixturevalue("s3_server")
        made = _s3(server, request.getfixturevalue("s3_bucket"))
    yield made
    asyncio.run(made.close())


def _s3(server: S3Server, bucket: str) -> S3RemoteStore:
    return S3RemoteStore(
        S3Settings(
            bucket,
            endpoint=server.endpoint,
            access_key_id=server.access_key,
            secret_access_key=server.secret_key,
            path_style=True,
            bulk_delete=False,
            request_timeout_ms=1_000,
            connect_timeout_ms=500,
            max_retries=1,
            retry_timeout_ms=2_000,
        )
    )


def _task(
    log: Log, metadata: RemoteLogMetadataManager, store: RemoteStore, broker_id: int = 1
) -> RemoteLogCopyTask:
    return RemoteLogCopyTask(
        log, metadata, RemoteStorageManager(store), broker_id=broker_id, wall_clock_ms=lambda: 42
    )


def test_a_leader_copies_rolled_segments_below_the_last_stable_offset(
    store: RemoteStore, tmp_path: Path
) -> None:
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    first, second, active = log.roll(30), log.roll(30), log.roll(5)
    log.lso = active.base_offset + 2  # the active segment is never copied
    topic = MetadataTopic()
    metadata = topic.manager()
    task = _task(log, metadata, store)
    assert asyncio.run(task.run_once()) == 2
    assert log.highest_remote == second.end_offset == task.copied_offset
    assert asyncio.run(task.run_once()) == 0  # nothing new
    events = topic.events()
    assert [type(e).__name__ for e in events] == [
        "RemoteLogSegmentMetadata",
        "RemoteLogSegmentMetadataUpdate",
    ] * 2
    started = [e for e in events if isinstance(e, RemoteLogSegmentMetadata)]
    assert [(e.start_offset, e.end_offset, e.segment_leader_epochs) for e in started] == [
        (0, first.end_offset, (EpochEntry(0, 0),)),
        (second.base_offset, second.end_offset, (EpochEntry(0, second.base_offset),)),
    ]
    assert all(
        isinstance(e, RemoteLogSegmentMetadataUpdate) and e.state is S.COPY_SEGMENT_FINISHED
        for e in events[1::2]
    )

    cache = metadata.cache(TIP)
    assert cache is not None
    manager = RemoteStorageManager(store)

    async def read_back() -> bytes:
        indexes = RemoteIndexCache(manager, tmp_path / "idx")
        result = await remote_fetch.read(
            manager, indexes, cache, log.epochs, 155, 1 << 20, min_one_message=True
        )
        await indexes.close()
        assert result.records is not None
        return bytes(result.records.records)

    holder = next(p for p in first.positions if p[0] <= 155 <= p[1])
    assert asyncio.run(read_back()) == first.data[holder[2] :]


def test_a_new_leader_resumes_without_re_uploading(store: RemoteStore, tmp_path: Path) -> None:
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(20), log.roll(20), log.roll(3)
    topic = MetadataTopic()
    assert asyncio.run(_task(log, topic.manager(), store).run_once()) == 2
    uploaded = asyncio.run(store.list_objects(""))

    # Leadership moves (epoch 1; the new leader's replica of the log is the
    # same) and the segment that was active rolls.
    log.epochs.append(EpochEntry(1, log.log_end_offset()))
    log.roll(4)
    new_leader = _task(log, topic.manager(), store, broker_id=2)
    assert asyncio.run(new_leader.run_once()) == 1  # only the segment rolled since
    assert new_leader.copied_offset == log.segments[2].end_offset
    after = asyncio.run(store.list_objects(""))
    assert set(uploaded) <= set(after) and len(after) == len(uploaded) * 3 // 2


def test_a_new_leader_after_an_unclean_election_copies_its_own_history(
    store: RemoteStore, tmp_path: Path
) -> None:
    log = Log(tmp_path / "old", [EpochEntry(0, 0)])
    log.roll(20), log.roll(20), log.roll(3)
    topic = MetadataTopic()
    asyncio.run(_task(log, topic.manager(), store).run_once())  # epoch 0 copied to 399

    # The new leader had epoch 0 only up to 199, then wrote epoch 1 from 200.
    other = Log(tmp_path / "new", [EpochEntry(0, 0)])
    other.roll(20)
    other.epochs.append(EpochEntry(1, 200))
    other.roll(20), other.roll(3)
    task = _task(other, topic.manager(), store, broker_id=3)
    assert asyncio.run(task.run_once()) == 1  # the epoch-1 segment: 200-399 of its own history
    cache = topic.followers[-1].cache(TIP)
    assert cache is not None
    assert cache.segment_for(1, 250) is not None
    assert task.copied_offset == other.segments[1].end_offset


def test_an_unreachable_store_stops_the_run_and_the_next_one_catches_up(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    store = _s3(s3_server, s3_bucket)
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(20), log.roll(20), log.roll(2)
    topic = MetadataTopic()
    metadata = topic.manager()
    task = _task(log, metadata, store)
    with s3_server.paused(), pytest.raises(RetriableRemoteStorageError):
        asyncio.run(task.run_once())
    assert log.highest_remote == -1  # nothing may be deleted locally
    assert asyncio.run(task.run_once()) == 2
    assert log.highest_remote == log.segments[1].end_offset
    cache = metadata.cache(TIP)
    assert cache is not None
    states = sorted(s.state.name for s in cache.list_segments(0))
    # The attempt cut short stays COPY_SEGMENT_STARTED, for the expiration task to delete.
    assert states == ["COPY_SEGMENT_FINISHED", "COPY_SEGMENT_FINISHED", "COPY_SEGMENT_STARTED"]


def test_total_retention_deletes_remote_segments_and_moves_the_log_start(
    store: RemoteStore, tmp_path: Path
) -> None:
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    first, second, _, _ = log.roll(10), log.roll(10), log.roll(10), log.roll(2)
    topic = MetadataTopic()
    metadata = topic.manager()
    copier = _task(log, metadata, store)
    assert asyncio.run(copier.run_once()) == 3
    newest_of_second = max(t for _, t in second.records)
    log.retention = (1000, -1)
    expirer = RemoteLogExpirationTask(
        log,
        metadata,
        RemoteStorageManager(store),
        broker_id=1,
        wall_clock_ms=lambda: newest_of_second + 1001,
        being_copied=lambda: copier.being_copied,
    )
    assert asyncio.run(expirer.run_once()) == 2
    assert log.log_start == second.end_offset + 1
    cache = metadata.cache(TIP)
    assert cache is not None
    assert [s.start_offset for s in cache.list_segments(0)] == [second.end_offset + 1]
    keys = [o.key for o in asyncio.run(store.list_objects(""))]
    assert len(keys) == 5 and all(f"{first.base_offset:020d}-" not in k for k in keys)
    assert asyncio.run(expirer.run_once()) == 0
    states = [e.state for e in topic.events() if isinstance(e, RemoteLogSegmentMetadataUpdate)]
    assert states.count(S.DELETE_SEGMENT_STARTED) == states.count(S.DELETE_SEGMENT_FINISHED) == 2


def test_with_copying_disabled_the_log_start_follows_local_deletion_once_remote_data_expired(
    store: RemoteStore, tmp_path: Path
) -> None:
    """KIP-950: with ``remote.log.copy.disable`` local retention deletes
    segments no copy holds; once total retention removed the last remote
    segment, the log starts where the local log does."""
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    first, second, third, _ = log.roll(10), log.roll(10), log.roll(10), log.roll(2)
    topic = MetadataTopic()
    metadata = topic.manager()
    log.lso = third.base_offset  # two segments copied, then copying was disabled
    assert asyncio.run(_task(log, metadata, store).run_once()) == 2
    del log.segments[:3]  # local retention went on without copies
    log.retention = (1000, -1)
    newest = max(t for _, t in third.records)
    expirer = RemoteLogExpirationTask(
        log,
        metadata,
        RemoteStorageManager(store),
        broker_id=1,
        wall_clock_ms=lambda: newest + 1001,
    )
    assert asyncio.run(expirer.run_once()) == 2
    assert second.end_offset + 1 < log.local_log_start_offset() == third.end_offset + 1
    assert log.log_start == log.local_log_start_offset()
    del first
