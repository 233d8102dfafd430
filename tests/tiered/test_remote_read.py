"""Sans-I/O remote reads: what a range read of a segment answers, and lookups in fetched indexes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.tiered.segment_files import BuiltSegment, build_segment

from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.segments.index import OffsetIndex, TimeIndex
from samsa.tiered.remote_index import position_for_offset, position_for_timestamp
from samsa.tiered.remote_read import ReadMore, RemoteRecords, records_from, timestamp_from


@pytest.fixture(scope="module")
def segment(tmp_path_factory: pytest.TempPathFactory) -> BuiltSegment:
    return build_segment(tmp_path_factory.mktemp("seg"), 1000, [5, 1, 20, 3, 40, 2, 7] * 6)


def _batch_holding(segment: BuiltSegment, offset: int) -> tuple[int, int, int]:
    return next(p for p in segment.positions if p[0] <= offset <= p[1])


def test_records_start_at_the_batch_holding_the_offset(segment: BuiltSegment) -> None:
    size = len(segment.data)
    for offset in (1000, 1004, 1005, 1006, 1300, segment.end_offset):
        base, _, position = _batch_holding(segment, offset)
        answer = records_from(
            segment.data, 0, offset, 10_000, min_one_message=False, segment_size=size
        )
        assert isinstance(answer, RemoteRecords)
        assert (answer.position, answer.base_offset) == (position, base)
        assert bytes(answer.records) == segment.data[position : position + 10_000]


def test_reading_from_an_index_position_mid_segment(segment: BuiltSegment) -> None:
    _, _, position = segment.positions[10]
    offset = segment.positions[12][0] + 1
    answer = records_from(
        segment.data[position:],
        position,
        offset,
        5_000,
        min_one_message=False,
        segment_size=len(segment.data),
    )
    assert isinstance(answer, RemoteRecords)
    assert answer.position == segment.positions[12][2]


def test_max_bytes_smaller_than_the_first_batch(segment: BuiltSegment) -> None:
    base, _, position = segment.positions[4]  # the 40-record batch
    size = segment.positions[5][2] - position
    args = (segment.data, 0, base + 3, size - 1)
    empty = records_from(*args, min_one_message=False, segment_size=len(segment.data))
    assert isinstance(empty, RemoteRecords) and len(empty.records) == 0
    whole = records_from(*args, min_one_message=True, segment_size=len(segment.data))
    assert isinstance(whole, RemoteRecords)
    assert bytes(whole.records) == segment.data[position : position + size]


def test_a_cut_read_asks_for_more(segment: BuiltSegment) -> None:
    _, _, position = segment.positions[4]
    cut = segment.data[: position + 30]  # the batch holding the offset is cut
    more = records_from(
        cut,
        0,
        segment.positions[4][0],
        10_000,
        min_one_message=False,
        segment_size=len(segment.data),
    )
    assert more == ReadMore(position, 10_000)
    tiny = segment.data[: position + 5]  # not even its length field arrived
    assert records_from(
        tiny, 0, segment.positions[4][0], 100, min_one_message=True, segment_size=len(segment.data)
    ) == ReadMore(position, 100)
    # Batches that end before the offset are skipped even when the read ends there.
    head = segment.data[: segment.positions[3][2]]
    assert records_from(
        head, 0, segment.end_offset, 100, min_one_message=False, segment_size=len(segment.data)
    ) == ReadMore(segment.positions[3][2], 100)


def test_no_batch_at_or_after_the_offset(segment: BuiltSegment) -> None:
    size = len(segment.data)
    assert (
        records_from(
            segment.data, 0, segment.end_offset + 1, 100, min_one_message=True, segment_size=size
        )
        is None
    )
    assert (
        records_from(b"", size, segment.end_offset, 100, min_one_message=True, segment_size=size)
        is None
    )


def test_timestamps_found_in_the_bytes(segment: BuiltSegment) -> None:
    size = len(segment.data)
    for target, starting in (
        (0, 0),
        (segment.records[50][1], 0),
        (segment.records[60][1] + 3, 1100),
        (segment.records[-1][1], 0),
    ):
        expected = next((o, t) for o, t in segment.records if t >= target and o >= starting)
        found = timestamp_from(segment.data, 0, target, starting, segment_size=size)
        assert found is not None and not isinstance(found, ReadMore)
        assert (found.offset, found.timestamp, found.leader_epoch) == (*expected, 0)
    assert timestamp_from(segment.data, 0, 10**15, 0, segment_size=size) is None
    half = segment.data[: len(segment.data) // 2]
    late = timestamp_from(half, 0, segment.records[-1][1], 0, segment_size=size)
    assert isinstance(late, ReadMore)
    assert late.position == max(p + b.size for p, b in iter_batches(half))


def test_index_lookups_give_positions_at_or_before_the_target(
    segment: BuiltSegment, tmp_path: Path
) -> None:
    offsets = OffsetIndex(segment.offset_index, segment.base_offset, 1 << 30)
    times = TimeIndex(segment.time_index, segment.base_offset, 1 << 30)
    assert offsets.entries > 3  # the segment spans several index intervals
    for offset, timestamp in segment.records[::17]:
        position = position_for_offset(offsets, offset)
        assert position <= _batch_holding(segment, offset)[2]
        answer = records_from(
            segment.data[position:],
            position,
            offset,
            1000,
            min_one_message=True,
            segment_size=len(segment.data),
        )
        assert (
            isinstance(answer, RemoteRecords)
            and answer.position == _batch_holding(segment, offset)[2]
        )
        start = position_for_timestamp(offsets, times, timestamp, 0)
        found = timestamp_from(
            segment.data[start:], start, timestamp, 0, segment_size=len(segment.data)
        )
        expected = next(o for o, t in segment.records if t >= timestamp)
        assert found is not None and not isinstance(found, ReadMore) and found.offset == expected
