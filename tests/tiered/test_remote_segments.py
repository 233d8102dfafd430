"""Remote segments end to end on each store: copy, key layout, index cache, remote fetch, delete."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.tiered.segment_files import BuiltSegment, build_segment

from samsa.storage.files.leader_epoch_checkpoint import format_leader_epoch_checkpoint
from samsa.storage.segments.transaction_index import AbortedTxn
from samsa.tiered import remote_fetch
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogMetadataCache,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    TopicIdPartition,
    uuid_str,
)
from samsa.tiered.remote_index import RemoteIndexCache
from samsa.tiered.segment_objects import (
    LogSegmentData,
    RemoteStorageManager,
    SegmentFile,
    object_key,
    orphan_keys,
    parse_object_key,
    partition_prefix,
)
from samsa.tiered.store import FileSystemRemoteStore, RemoteObjectNotFoundError, RemoteStore

TIP = TopicIdPartition(bytes(range(16)), "orders.v2-eu_1", 4)


def _metadata(built: BuiltSegment, **kw: bool) -> RemoteLogSegmentMetadata:
    return RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(TIP),
        built.base_offset,
        built.end_offset,
        max(t for _, t in built.records),
        1,
        0,
        len(built.data),
        (EpochEntry(0, built.base_offset),),
        txn_index_empty=built.transaction_index is None,
        **kw,
    )


def _data(built: BuiltSegment) -> LogSegmentData:
    checkpoint = format_leader_epoch_checkpoint([EpochEntry(0, 0)])
    return LogSegmentData(
        built.log, built.offset_index, built.time_index, built.transaction_index, None, checkpoint
    )


def _finished(cache: RemoteLogMetadataCache, metadata: RemoteLogSegmentMetadata) -> None:
    cache.add_copy_in_progress(metadata)
    cache.update(
        RemoteLogSegmentMetadataUpdate(
            metadata.segment_id, 1, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1
        )
    )


def test_key_layout_names_topic_id_and_segment_id() -> None:
    segment_id = b"\xfb" * 16
    metadata = RemoteLogSegmentMetadata(
        RemoteLogSegmentId(TIP, segment_id), 123, 200, 0, 1, 0, 10, (EpochEntry(0, 123),)
    )
    key = object_key(metadata, SegmentFile.LEADER_EPOCH_CHECKPOINT)
    assert key == (
        f"orders.v2-eu_1-{uuid_str(TIP.topic_id)}/4/00000000000000000123-"
        f"{uuid_str(segment_id)}.leader-epoch-checkpoint"
    )
    parsed = parse_object_key(key)
    assert parsed is not None
    assert (parsed.topic, parsed.partition, parsed.start_offset) == ("orders.v2-eu_1", 4, 123)
    assert (
        parsed.segment_id == uuid_str(segment_id)
        and parsed.kind is SegmentFile.LEADER_EPOCH_CHECKPOINT
    )
    assert parse_object_key("orders/4/something.log") is None
    assert parse_object_key(key.replace(".leader-epoch-checkpoint", ".bak")) is None


def test_copy_fetch_and_delete(store: RemoteStore, tmp_path: Path) -> None:
    aborted = [AbortedTxn(7, 1010, 1020, 1000), AbortedTxn(9, 1100, 1150, 1030)]
    first = build_segment(tmp_path / "local", 1000, [5, 1, 20, 3, 40, 2, 7] * 5, aborted=aborted)
    second = build_segment(tmp_path / "local", first.end_offset + 1, [10] * 30)
    manager = RemoteStorageManager(store)
    cache = RemoteLogMetadataCache()
    cache.mark_initialized()
    meta1, meta2 = _metadata(first), _metadata(second)
    epochs = [EpochEntry(0, 1000)]

    async def scenario() -> None:
        await manager.copy_log_segment_data(meta1, _data(first))
        await manager.copy_log_segment_data(meta2, _data(second))
        _finished(cache, meta1)
        _finished(cache, meta2)
        keys = [o.key for o in await manager.list_partition_objects(TIP)]
        assert sorted(keys) == sorted(
            [object_key(meta1, k) for k in SegmentFile if k is not SegmentFile.PRODUCER_SNAPSHOT]
            + [
                object_key(meta2, k)
                for k in SegmentFile
                if k not in (SegmentFile.PRODUCER_SNAPSHOT, SegmentFile.TRANSACTION_INDEX)
            ]
        )
        assert await manager.fetch_index(meta2, SegmentFile.TRANSACTION_INDEX) == b""
        with pytest.raises(RemoteObjectNotFoundError):
            await manager.fetch_index(meta2, SegmentFile.PRODUCER_SNAPSHOT)

        indexes = RemoteIndexCache(manager, tmp_path / "index-cache")
        for offset in (1000, 1003, 1100, first.end_offset, first.end_offset + 1, second.end_offset):
            result = await remote_fetch.read(
                manager,
                indexes,
                cache,
                epochs,
                offset,
                3000,
                min_one_message=True,
                read_committed=True,
            )
            built = first if offset <= first.end_offset else second
            holder = next(p for p in built.positions if p[0] <= offset <= p[1])
            assert result.records is not None and result.segment is not None
            assert bytes(result.records.records) == built.data[holder[2] : holder[2] + 3000]
            assert result.records.base_offset == holder[0]
            expected = [t for t in aborted if t.last_offset >= offset] if built is first else []
            assert result.aborted == expected
        missing = await remote_fetch.read(
            manager, indexes, cache, epochs, second.end_offset + 1, 100, min_one_message=True
        )
        assert missing.records is None and missing.segment is None

        for _, timestamp in first.records[::23]:
            found = await remote_fetch.offset_for_timestamp(manager, indexes, meta1, timestamp, 0)
            first_at = next(o for o, t in first.records if t >= timestamp)
            assert found is not None and found.offset == first_at
        cached = sorted(p.name for p in (tmp_path / "index-cache").iterdir())
        assert f"{meta1.start_offset}_{uuid_str(meta1.segment_id.id)}.index" in cached
        assert len(cached) == 6  # three files for each of the two segments
        await indexes.remove([meta1.segment_id.id])
        assert len(list((tmp_path / "index-cache").iterdir())) == 3
        await indexes.close()

        await manager.delete_log_segment_data(meta1)
        await manager.delete_log_segment_data(meta1)  # a repeated delete succeeds
        keys = [o.key for o in await manager.list_partition_objects(TIP)]
        assert keys and all(uuid_str(meta2.segment_id.id) in k for k in keys)

    asyncio.run(scenario())


def test_orphans_are_the_objects_no_metadata_knows(store: RemoteStore, tmp_path: Path) -> None:
    built = build_segment(tmp_path / "local", 0, [3, 3])
    manager = RemoteStorageManager(store)
    kept, orphan = _metadata(built), _metadata(built)  # a copy abandoned by a deposed leader

    async def scenario() -> list[str]:
        await manager.copy_log_segment_data(kept, _data(built))
        await manager.copy_log_segment_data(orphan, _data(built))
        await store.put_bytes(partition_prefix(TIP) + "README", b"not a segment object")
        objects = await manager.list_partition_objects(TIP)
        return orphan_keys(objects, [kept.segment_id.id])

    keys = asyncio.run(scenario())
    assert sorted(keys) == sorted(
        object_key(orphan, k)
        for k in SegmentFile
        if k not in (SegmentFile.PRODUCER_SNAPSHOT, SegmentFile.TRANSACTION_INDEX)
    )


def test_the_index_cache_evicts_the_least_recently_used(tmp_path: Path) -> None:
    store = FileSystemRemoteStore(tmp_path / "remote")
    manager = RemoteStorageManager(store)
    segments = [
        build_segment(tmp_path / "local", 100 * i, [20] * 40, index_interval_bytes=256)
        for i in range(3)
    ]
    metas = [_metadata(s) for s in segments]

    async def scenario() -> None:
        for meta, built in zip(metas, segments, strict=True):
            await manager.copy_log_segment_data(meta, _data(built))
        one_entry = (await RemoteIndexCache(manager, tmp_path / "probe").get(metas[0])).size_bytes
        indexes = RemoteIndexCache(manager, tmp_path / "cache", max_bytes=2 * one_entry + 1)
        await indexes.get(metas[0])
        await indexes.get(metas[1])
        await indexes.get(metas[0])  # now metas[1] is the least recently used
        await indexes.get(metas[2])
        names = {p.name.split("_", 1)[1].rsplit(".", 1)[0] for p in (tmp_path / "cache").iterdir()}
        assert names == {uuid_str(metas[0].segment_id.id), uuid_str(metas[2].segment_id.id)}
        assert indexes.size_bytes <= 2 * one_entry + 1
        # Two readers of one segment at once share one fetch.
        a, b = await asyncio.gather(indexes.get(metas[1]), indexes.get(metas[1]))
        assert a is b
        await indexes.close()
        await store.close()

    asyncio.run(scenario())
