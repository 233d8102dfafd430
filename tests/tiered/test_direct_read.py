"""Reading remote segments without a broker (``tiered.direct_read``): the byte bounds an
offset range needs, windows that hand out whole batches, transaction indexes.

The segments are real (Samsa's record builder and index classes, as a log
segment writes them) and are read through the directory store, a real store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.segments.transaction_index import AbortedTxn
from samsa.tiered.direct_read import aborted_transactions, read_bounds, scan_segment
from samsa.tiered.metadata.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    TopicIdPartition,
    new_uuid,
)
from samsa.tiered.segment_objects import RemoteStorageManager, SegmentFile, object_key
from samsa.tiered.store import FileSystemRemoteStore

from .segment_files import BuiltSegment, build_segment

BASE = 1000
BATCHES = [5, 1, 20, 3, 40, 2, 7] * 6


@pytest.fixture(scope="module")
def segment(tmp_path_factory: pytest.TempPathFactory) -> BuiltSegment:
    return build_segment(tmp_path_factory.mktemp("seg"), BASE, BATCHES, index_interval_bytes=1024)


def batch_of(segment: BuiltSegment, offset: int) -> tuple[int, int, int]:
    return next(p for p in segment.positions if p[0] <= offset <= p[1])


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_bounds_hold_every_batch_of_the_range_and_start_and_end_on_batches(
    segment: BuiltSegment, data: st.DataObject
) -> None:
    size = len(segment.data)
    start = data.draw(st.integers(BASE, segment.end_offset))
    end = data.draw(st.integers(start + 1, segment.end_offset + 1))
    first, last = read_bounds(segment.offset_index.read_bytes(), BASE, start, end, size)
    starts = {p[2] for p in segment.positions} | {size}
    assert first in starts and last in starts
    assert first <= batch_of(segment, start)[2]
    _base, _last, position = batch_of(segment, end - 1)
    next_batch = min(s for s in starts if s > position)
    assert last >= next_batch  # the batch holding end - 1 is whole


def test_bounds_without_an_index_are_the_whole_segment(segment: BuiltSegment) -> None:
    size = len(segment.data)
    assert read_bounds(b"", BASE, BASE + 50, BASE + 60, size) == (0, size)
    # a Kafka index before its roll: zeroed entries after the real ones are ignored
    index = segment.offset_index.read_bytes()
    assert read_bounds(index + bytes(80), BASE, BASE + 50, BASE + 60, size) == read_bounds(
        index, BASE, BASE + 50, BASE + 60, size
    )


async def scanned(store: FileSystemRemoteStore, first: int, last: int, window: int) -> list:
    return [chunk async for chunk in scan_segment(store, "seg.log", first, last, window)]


@pytest.mark.parametrize("window", [1, 100, 4096, 1 << 20])
def test_windows_hand_out_whole_batches_in_order(
    segment: BuiltSegment, tmp_path: Path, window: int
) -> None:
    """Even windows smaller than one batch (the read grows to hold it)."""
    store = FileSystemRemoteStore(tmp_path)
    (tmp_path / "seg.log").write_bytes(segment.data)
    first = segment.positions[3][2]
    last = segment.positions[-4][2]
    chunks = asyncio.run(scanned(store, first, last, window))
    assert b"".join(bytes(c.data) for c in chunks) == segment.data[first:last]
    for chunk in chunks:
        batches = [h for _pos, h in iter_batches(chunk.data)]
        assert sum(h.size for h in batches) == len(chunk.data)
        assert chunk.first_offset == batches[0].base_offset
        assert chunk.last_offset == batches[-1].base_offset + batches[-1].last_offset_delta
    if window == 1 << 20:
        assert len(chunks) == 1


def test_a_torn_tail_is_left_out(segment: BuiltSegment, tmp_path: Path) -> None:
    store = FileSystemRemoteStore(tmp_path)
    cut = segment.positions[-1][2] + 30  # inside the last batch
    (tmp_path / "seg.log").write_bytes(segment.data[:cut])
    chunks = asyncio.run(scanned(store, 0, len(segment.data), 4096))
    assert chunks[-1].last_offset == segment.positions[-2][1]
    assert sum(len(c.data) for c in chunks) == segment.positions[-1][2]


def test_aborted_transactions_come_from_the_transaction_index_object(tmp_path: Path) -> None:
    aborted = [AbortedTxn(7, 1000, 1010, 990), AbortedTxn(9, 1003, 1030, 1000)]
    built = build_segment(tmp_path / "files", 1000, [10, 10, 10, 10], aborted=aborted)
    partition = TopicIdPartition(new_uuid(), "t", 0)

    def metadata(txn_index_empty: bool) -> RemoteLogSegmentMetadata:
        return RemoteLogSegmentMetadata(
            RemoteLogSegmentId(partition, new_uuid()),
            1000,
            built.end_offset,
            0,
            1,
            0,
            len(built.data),
            ((0, 1000),),
            txn_index_empty=txn_index_empty,
        )

    segment = metadata(False)
    store = FileSystemRemoteStore(tmp_path / "store")
    key = object_key(segment, SegmentFile.TRANSACTION_INDEX)
    assert built.transaction_index is not None
    asyncio.run(store.put_file(key, built.transaction_index))
    manager = RemoteStorageManager(store)
    assert asyncio.run(aborted_transactions(manager, segment)) == aborted
    assert asyncio.run(aborted_transactions(manager, metadata(True))) == []
