"""Log: offsets, reads, rolling, retention, log start offset, truncation, lookups."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.log import Log
from samsa.storage.segments.file_region import FileRegion
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch, make_batches


def open_log(tmp_path: Path, clock: ManualClock | None = None, **overrides: str) -> Log:
    config = LogConfig.from_dict(overrides)
    return Log.open(tmp_path / "orders-0", "orders", 0, config, clock=clock or ManualClock())


def offsets_of(data: FileRegion | bytes) -> list[tuple[int, int]]:
    raw = data.read_bytes() if isinstance(data, FileRegion) else data
    return [(h.base_offset, h.last_offset) for _, h in iter_batches(raw)]


def test_append_assigns_offsets_and_log_end_offset_counts_records(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    info = log.append(make_batch(5))
    assert (info.first_offset, info.last_offset) == (0, 4)
    assert log.log_end_offset == 5
    info = log.append(make_batches(make_batch(2), make_batch(3, timestamp=9000)))
    assert (info.first_offset, info.last_offset, info.num_batches) == (5, 9, 2)
    assert info.max_timestamp == 9002 and info.offset_of_max_timestamp == 9
    assert info.log_append_time == -1
    assert log.log_end_offset == 10


def test_append_stamps_leader_epoch_and_log_append_time(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"message.timestamp.type": "LogAppendTime"})
    info = log.append(make_batch(3), leader_epoch=7, now_ms=123_456)
    assert info.log_append_time == 123_456
    data = log.read(0, 10_000).records
    assert isinstance(data, FileRegion)
    [(_, header)] = list(iter_batches(data.read_bytes()))
    assert header.partition_leader_epoch == 7
    assert header.timestamp_type == 1 and header.max_timestamp == 123_456


def test_follower_append_keeps_offsets_and_refuses_going_back(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(3, base_offset=0), assign_offsets=False)
    log.append(make_batch(2, base_offset=10), assign_offsets=False)
    assert log.log_end_offset == 12
    with pytest.raises(KafkaError) as e:
        log.append(make_batch(1, base_offset=11), assign_offsets=False)
    assert e.value.code == ErrorCode.CORRUPT_MESSAGE


def test_trailing_garbage_is_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(KafkaError):
        log.append(make_batch(1) + b"\x00" * 20)
    assert log.log_end_offset == 0


def test_read_returns_whole_batch_holding_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for _ in range(4):
        log.append(make_batch(5))
    result = log.read(7, 1_000_000)
    assert result.fetch_offset == 7
    assert offsets_of(result.records) == [(5, 9), (10, 14), (15, 19)]


def test_read_max_bytes_min_one_and_max_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for _ in range(4):
        log.append(make_batch(5))
    one = len(make_batch(5))
    assert offsets_of(log.read(0, one * 2 + 1).records) == [(0, 4), (5, 9)]
    assert offsets_of(log.read(0, 1).records) == [(0, 4)]
    assert offsets_of(log.read(0, 1, min_one=False).records) == []
    assert offsets_of(log.read(0, 1_000_000, max_offset=10).records) == [(0, 4), (5, 9)]
    assert offsets_of(log.read(10, 1_000_000, max_offset=10).records) == []


def test_read_at_log_end_is_empty_and_beyond_is_out_of_range(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(5))
    assert log.read(5, 1000).records == b""
    with pytest.raises(KafkaError) as e:
        log.read(6, 1000)
    assert e.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_reads_span_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "400"})
    for _ in range(10):
        log.append(make_batch(2))
    assert len(log.segments) > 3
    for offset in range(20):
        data = log.read(offset, 1_000_000).records
        first = offsets_of(data)[0]
        assert first[0] <= offset <= first[1]


def test_roll_on_segment_bytes(tmp_path: Path) -> None:
    one = len(make_batch(2))
    log = open_log(tmp_path, **{"segment.bytes": str(one * 3)})
    for _ in range(7):
        log.append(make_batch(2))
    assert [s.base_offset for s in log.segments] == [0, 6, 12]
    assert [s.size for s in log.segments] == [one * 3, one * 3, one]


def test_roll_on_segment_ms_uses_batch_timestamps(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.ms": "1000"})
    log.append(make_batch(1, timestamp=10_000))
    log.append(make_batch(1, timestamp=10_900))
    assert len(log.segments) == 1
    log.append(make_batch(1, timestamp=11_001))
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_on_segment_ms_falls_back_to_clock(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock, **{"segment.ms": "1000"})
    log.append(make_batch(1, timestamp=-1))
    clock.advance(1001)
    log.append(make_batch(1, timestamp=-1))
    assert len(log.segments) == 2


def test_roll_when_index_is_full(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.index.bytes": "16", "index.interval.bytes": "0"})
    for _ in range(6):
        log.append(make_batch(1))
    assert len(log.segments) > 1
    assert all(s.offset_index.entries <= 2 for s in log.segments)


def test_retention_by_time_never_deletes_active_segment(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "100", "retention.ms": "1000"})
    for i in range(5):
        log.append(make_batch(1, timestamp=10_000 + i * 1000))
    assert len(log.segments) == 5
    # segments' max timestamps: 10000, 11000, ... 14000
    assert log.run_retention(now_ms=12_500) == 2
    assert log.log_start_offset == 2
    assert log.run_retention(now_ms=100_000) == 2
    assert [s.base_offset for s in log.segments] == [4]
    with pytest.raises(KafkaError):
        log.read(0, 100)


def test_retention_by_size(tmp_path: Path) -> None:
    one = len(make_batch(1))
    log = open_log(
        tmp_path,
        **{"segment.bytes": str(one), "retention.bytes": str(one * 2), "retention.ms": "-1"},
    )
    for _ in range(5):
        log.append(make_batch(1))
    assert log.run_retention(now_ms=0) == 3
    assert [s.base_offset for s in log.segments] == [3, 4]
    log2 = open_log(tmp_path / "b", **{"segment.bytes": str(one), "retention.bytes": "0"})
    log2.append(make_batch(1))
    assert log2.run_retention(now_ms=0) == 0  # the active segment stays


def test_no_retention_for_compact_only_topics(tmp_path: Path) -> None:
    log = open_log(
        tmp_path, **{"segment.bytes": "100", "retention.ms": "1", "cleanup.policy": "compact"}
    )
    for _ in range(3):
        log.append(make_batch(1))
    assert log.run_retention(now_ms=10**12) == 0
    assert len(log.segments) == 3


def test_delete_records_moves_log_start_and_drops_whole_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "250"})
    for _ in range(4):
        log.append(make_batch(3))
    assert [s.base_offset for s in log.segments] == [0, 3, 6, 9]
    assert log.delete_records(7) == 7
    assert [s.base_offset for s in log.segments] == [6, 9]
    assert offsets_of(log.read(7, 10_000).records)[0] == (6, 8)
    with pytest.raises(KafkaError):
        log.read(5, 100)
    assert log.delete_records(3) == 7  # never moves back
    with pytest.raises(KafkaError):
        log.delete_records(13)
    assert log.delete_records(12) == 12  # the active segment stays even when all is deleted
    assert log.read(12, 100).records == b""


def test_truncate_to_removes_suffix_across_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "250"})
    for _ in range(4):
        log.append(make_batch(3))
    assert log.truncate_to(6)
    assert log.log_end_offset == 6
    # the segment starting at the target stays, empty, as the active one (Kafka's rule)
    assert [(s.base_offset, s.size > 0) for s in log.segments] == [(0, True), (3, True), (6, False)]
    assert not log.truncate_to(6)
    info = log.append(make_batch(1))
    assert info.first_offset == 6
    assert offsets_of(log.read(3, 10_000).records) == [(3, 5)]  # one segment per read
    assert offsets_of(log.read(6, 10_000).records) == [(6, 6)]


def test_truncate_below_first_segment_starts_over(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(3))
    log.delete_records(2)
    log.truncate_fully_and_start_at(50)
    assert (log.log_start_offset, log.log_end_offset) == (50, 50)
    assert log.append(make_batch(1)).first_offset == 50


def test_offset_for_timestamp_with_multi_record_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "300", "index.interval.bytes": "1"})
    log.append(make_batch(3, timestamps=[100, 110, 120]))  # 0..2
    log.append(make_batch(3, timestamps=[130, 125, 140]))  # 3..5
    log.append(make_batch(2, timestamps=[150, 160]))  # 6..7
    assert len(log.segments) > 1
    assert log.offset_for_timestamp(0) == (0, 100)
    assert log.offset_for_timestamp(105) == (1, 110)
    assert log.offset_for_timestamp(121) == (3, 130)
    assert log.offset_for_timestamp(135) == (5, 140)
    assert log.offset_for_timestamp(155) == (7, 160)
    assert log.offset_for_timestamp(161) is None
    assert log.max_timestamp_and_offset() == (7, 160)


def test_iter_batch_headers_from_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "250"})
    for _ in range(4):
        log.append(make_batch(3))
    assert [h.base_offset for h in log.iter_batch_headers()] == [0, 3, 6, 9]
    assert [h.base_offset for h in log.iter_batch_headers(7)] == [6, 9]


def test_flush_messages_advances_recovery_point(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"flush.messages": "5"})
    log.append(make_batch(3))
    assert log.recovery_point == 0
    log.append(make_batch(3))
    assert log.recovery_point == 6


def test_flush_ms_and_rolled_segments_are_flushed_by_flush_if_due(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock, **{"flush.ms": "1000", "segment.bytes": "100"})
    log.append(make_batch(1))
    log.append(make_batch(1))  # rolls
    log.flush_if_due(clock())
    assert log.recovery_point == 1  # the rolled segment
    clock.advance(1000)
    log.flush_if_due(clock())
    assert log.recovery_point == 2


def test_reopen_after_clean_close_keeps_everything(tmp_path: Path) -> None:
    log = open_log(tmp_path, **{"segment.bytes": "250", "index.interval.bytes": "1"})
    for i in range(6):
        log.append(make_batch(3, timestamp=1000 * i))
    before = log.read(0, 1_000_000).records
    assert isinstance(before, FileRegion)
    before_bytes = before.read_bytes()
    log.close()
    config = LogConfig.from_dict({"segment.bytes": "250", "index.interval.bytes": "1"})
    again = Log.open(
        tmp_path / "orders-0", "orders", 0, config, recovery_point=18, had_clean_shutdown=True
    )
    assert again.log_end_offset == 18
    assert len(again.segments) == 6
    assert offsets_of(again.read(0, 1_000_000).records) == offsets_of(before_bytes)
    assert again.offset_for_timestamp(3500) == (12, 4000)
    assert again.max_timestamp_and_offset() == (17, 5002)
    assert again.append(make_batch(1)).first_offset == 18


def test_retention_never_passes_the_high_watermark(tmp_path: Path) -> None:
    """Kafka's deletableSegments: a segment holding an offset at or above the
    high watermark stays, however old, so the log start never passes what the
    followers (and read_committed consumers) have."""
    log = open_log(tmp_path, **{"segment.bytes": "100", "retention.ms": "1000"})
    for i in range(5):
        log.append(make_batch(1, timestamp=10_000 + i * 1000))
    assert log.run_retention(now_ms=100_000, high_watermark=2) == 2
    assert log.log_start_offset == 2
    assert log.run_retention(now_ms=100_000, high_watermark=2) == 0
    assert log.run_retention(now_ms=100_000, high_watermark=3) == 1
