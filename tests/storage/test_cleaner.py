"""Log compaction: what a pass keeps, what it removes, and crash safety."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_batch import iter_batches, read_batch_header
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_records
from samsa.storage.cleaner.manager import CLEANER_CHECKPOINT, InjectedCrash, LogCleaner
from samsa.storage.cleaner.swap import CRASH_POINTS
from samsa.storage.files.checkpoint import read_checkpoint
from samsa.storage.log import Log
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock

KEY = ("t", 0)
RETENTION_MS = 10_000
Entry = tuple[bytes | None, bytes | None]


def compact_config(**overrides: str) -> LogConfig:
    props = {
        "cleanup.policy": "compact",
        "segment.bytes": "4096",
        "min.cleanable.dirty.ratio": "0",
        "delete.retention.ms": str(RETENTION_MS),
        "index.interval.bytes": "64",
    }
    props.update(overrides)
    return LogConfig.from_dict(props)


def batch(
    entries: list[Entry],
    *,
    timestamp: int = 1_000,
    compression: Compression = Compression.NONE,
    producer_id: int = -1,
    base_sequence: int = -1,
) -> bytearray:
    builder = RecordBatchBuilder(
        compression,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=base_sequence,
    )
    for i, (key, value) in enumerate(entries):
        builder.append(timestamp + i, key, value)
    return bytearray(builder.build())


def open_log(tmp_path: Path, clock: ManualClock, config: LogConfig | None = None) -> Log:
    return Log.open(tmp_path / "t-0", "t", 0, config or compact_config(), clock=clock)


def write(log: Log, entries: Sequence[Entry], per_segment: int = 3) -> None:
    """One record per batch, rolling every ``per_segment`` batches."""
    for i, entry in enumerate(entries):
        log.append(batch([entry]))
        if (i + 1) % per_segment == 0:
            log.roll()


def read_all(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record, read through Log.read as a fetch would."""
    out: list[tuple[int, bytes | None, bytes | None]] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = bytes(log.read(offset, 1 << 20).records)
        if not data:
            break
        for header, records in decode_records(data):
            out += [(r.offset, r.key, r.value) for r in records if r.offset >= offset]
            del header
        offset = max(h.next_offset for _, h in iter_batches(data))
    return out


def expected_after_clean(
    written: list[tuple[int, bytes | None, bytes | None]], clean_end: int, *, tombstones: bool
) -> list[tuple[int, bytes | None, bytes | None]]:
    """Latest record per key below ``clean_end``, plus everything after it."""
    latest = {key: off for off, key, _ in written if off < clean_end}
    return [
        (off, key, value)
        for off, key, value in written
        if off >= clean_end or (latest.get(key) == off and (value is not None or tombstones))
    ]


def check_indexes(log: Log) -> None:
    for segment in log.segments:
        # (LogSegment.sanity_check also rejects any small rolled segment whose
        # time index has its final entry but whose offset index has none.)
        segment.offset_index.sanity_check(segment.size)
        segment.time_index.sanity_check(segment.size)
    for offset, _, _ in read_all(log):
        first = read_batch_header(bytes(log.read(offset, 1).records))
        assert first.base_offset <= offset <= first.last_offset


def updates(n: int, keys: int = 3) -> list[Entry]:
    return [(b"k%d" % (i % keys), b"v%d" % i) for i in range(n)]


# -- what a pass keeps ---------------------------------------------------------


def test_keeps_latest_value_per_key_in_offset_order_with_offsets_unchanged(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    write(log, updates(30))
    log.append(batch([(b"k0", b"active")]))  # in the active segment: never cleaned
    written = read_all(log)
    cleaner = LogCleaner(tmp_path)

    result = cleaner.clean_log(KEY, log, clock())

    assert result is not None and result.end_offset == 30
    assert read_all(log) == [
        (27, b"k0", b"v27"),
        (28, b"k1", b"v28"),
        (29, b"k2", b"v29"),
        (30, b"k0", b"active"),
    ]
    assert read_all(log) == expected_after_clean(written, 30, tombstones=True)
    assert log.log_end_offset == 31
    check_indexes(log)
    assert read_checkpoint(tmp_path / CLEANER_CHECKPOINT) == {KEY: 30}


def test_partially_retained_batch_keeps_base_offset_and_last_offset_delta(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    log.append(batch([(b"a", b"1"), (b"b", b"2"), (b"a", b"3"), (b"c", b"4")]))
    log.append(batch([(b"c", b"5")]))
    log.roll()
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    headers = list(log.iter_batch_headers())
    assert [(h.base_offset, h.last_offset_delta, h.records_count) for h in headers] == [
        (0, 3, 2),
        (4, 0, 1),
    ]
    assert read_all(log) == [(1, b"b", b"2"), (2, b"a", b"3"), (4, b"c", b"5")]


def test_keyless_records_are_dropped(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    log.append(batch([(None, b"no key"), (b"a", b"1")]))
    log.roll()
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    assert read_all(log) == [(1, b"a", b"1")]


def test_active_segment_is_never_touched(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    write(log, updates(6), per_segment=6)
    for i in range(4):
        log.append(batch([(b"k0", b"dup%d" % i)]))
    active = log.active_segment
    before = active.log.read(0, active.size)
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    assert log.active_segment is active
    assert active.log.read(0, active.size) == before
    assert [v for _, k, v in read_all(log) if k == b"k0" and v and v.startswith(b"dup")] == [
        b"dup0",
        b"dup1",
        b"dup2",
        b"dup3",
    ]


def test_nothing_to_do_without_dirty_bytes_or_for_delete_topics(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    write(log, updates(6))
    cleaner = LogCleaner(tmp_path)
    assert cleaner.clean_log(KEY, log, clock()) is not None
    assert cleaner.clean_log(KEY, log, clock()) is None  # checkpoint at the active base
    delete_log = Log.open(tmp_path / "d-0", "d", 0, LogConfig(), clock=clock)
    write(delete_log, updates(6))
    assert cleaner.clean_log(("d", 0), delete_log, clock()) is None


def test_dirty_ratio_and_min_compaction_lag_hold_cleaning_back(tmp_path: Path) -> None:
    clock = ManualClock(now_ms=10_000)
    log = open_log(tmp_path, clock, compact_config(**{"min.cleanable.dirty.ratio": "0.5"}))
    write(log, updates(6))
    cleaner = LogCleaner(tmp_path)
    assert cleaner.clean_log(KEY, log, clock()) is not None  # all dirty: ratio 1
    write(log, updates(3))  # one dirty segment out of several: ratio < 0.5
    assert cleaner.clean_log(KEY, log, clock()) is None

    lagged = Log.open(
        tmp_path / "l-0",
        "l",
        0,
        compact_config(**{"min.compaction.lag.ms": "5000"}),
        clock=clock,
    )
    write(lagged, updates(6))  # record timestamps ~1000
    assert cleaner.plan(("l", 0), lagged, 5_500) is None  # newest record too young
    assert cleaner.plan(("l", 0), lagged, 7_000) is not None


def test_tombstone_kept_until_delete_horizon_then_removed(tmp_path: Path) -> None:
    clock = ManualClock(now_ms=100_000)
    log = open_log(tmp_path, clock)
    write(log, [(b"a", b"1"), (b"b", b"2"), (b"a", None)])
    cleaner = LogCleaner(tmp_path)

    first = cleaner.clean_log(KEY, log, clock())
    assert first is not None and first.retained_tombstones == 1
    assert read_all(log) == [(1, b"b", b"2"), (2, b"a", None)]
    tombstone = next(h for h in log.iter_batch_headers() if h.base_offset == 2)
    assert tombstone.has_delete_horizon
    assert tombstone.base_timestamp == 100_000 + RETENTION_MS
    # the record keeps its own timestamp although the batch base is the horizon
    data = bytes(log.read(2, 1 << 20).records)
    assert next(decode_records(data))[1][0].timestamp == 1_000

    write(log, [(b"c", b"3")], per_segment=1)  # dirty again, before the horizon
    clock.now_ms = 100_000 + RETENTION_MS - 1
    assert cleaner.clean_log(KEY, log, clock()) is not None
    assert (2, b"a", None) in read_all(log)
    assert cleaner.clean_log(KEY, log, clock()) is None  # nothing dirty, horizon ahead

    clock.now_ms = 100_000 + RETENTION_MS
    last = cleaner.clean_log(KEY, log, clock())  # the horizon alone triggers this pass
    assert last is not None and last.retained_tombstones == 0
    assert read_all(log) == [(1, b"b", b"2"), (3, b"c", b"3")]


def test_producer_last_batch_survives_as_empty_batch(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    log.append(batch([(b"a", b"1"), (b"a", b"2")], producer_id=7, base_sequence=0))
    log.append(batch([(b"a", b"3"), (b"a", b"4")], producer_id=7, base_sequence=2))
    log.append(batch([(b"a", b"5")]))  # another writer supersedes both
    log.roll()
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    headers = list(log.iter_batch_headers())
    assert [(h.base_offset, h.producer_id, h.records_count) for h in headers] == [
        (2, 7, 0),
        (4, -1, 1),
    ]
    empty = headers[0]
    assert (empty.base_sequence, empty.last_offset_delta, empty.last_sequence) == (2, 1, 3)
    assert read_all(log) == [(4, b"a", b"5")]
    check_indexes(log)


@pytest.mark.parametrize(
    "codec", [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
)
def test_compressed_batches_are_filtered_and_recompressed(
    tmp_path: Path, codec: Compression
) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    entries: list[Entry] = [(b"a", b"1"), (b"b", b"2"), (b"a", b"3"), (b"c", b"4")]
    log.append(batch(entries, compression=codec))
    log.append(batch([(b"a", b"5")], compression=codec))
    log.roll()
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    headers = list(log.iter_batch_headers())
    assert [h.compression for h in headers] == [codec, codec]
    assert read_all(log) == [(1, b"b", b"2"), (3, b"c", b"4"), (4, b"a", b"5")]


def test_full_offset_map_cleans_in_parts(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    entries = [(b"k%d" % (i % 6), b"v%d" % i) for i in range(24)]
    write(log, entries)
    written = read_all(log)
    cleaner = LogCleaner(tmp_path, max_map_entries=4)
    ends = []
    while (result := cleaner.clean_log(KEY, log, clock())) is not None:
        ends.append(result.end_offset)
    assert ends[-1] == 24 and len(ends) > 1 and ends == sorted(ends)
    assert read_all(log) == expected_after_clean(written, 24, tombstones=True)


def test_segments_are_merged_into_groups_bounded_by_segment_bytes(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock, compact_config(**{"segment.bytes": "1000"}))
    write(log, updates(60, keys=20))
    before = len(log.segments)
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    assert 2 < len(log.segments) < before
    assert all(s.size <= 1000 for s in log.segments)


def test_loader_and_log_survive_restart_after_clean(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    write(log, updates(30))
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    expected = read_all(log)
    log.close()
    reopened = Log.open(tmp_path / "t-0", "t", 0, compact_config(), had_clean_shutdown=True)
    assert read_all(reopened) == expected
    check_indexes(reopened)


# -- crash safety ----------------------------------------------------------------


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_at_each_point_loses_nothing(tmp_path: Path, point: str) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    write(log, [*updates(40, keys=4), (b"k1", None)], per_segment=4)
    log.append(batch([(b"k0", b"active")]))
    written = read_all(log)
    log.flush()
    end = log.active_segment.base_offset

    with pytest.raises(InjectedCrash):
        LogCleaner(tmp_path, crash_at=point).clean_log(KEY, log, clock())
    # The process "died": reopen from disk without a clean shutdown.
    reopened = Log.open(tmp_path / "t-0", "t", 0, compact_config(), recovery_point=0)
    leftovers = [p.name for p in (tmp_path / "t-0").iterdir() if p.suffix in (".cleaned", ".swap")]
    assert leftovers == []
    records = read_all(reopened)
    by_offset = {off: (key, value) for off, key, value in written}
    assert all(by_offset[off] == (key, value) for off, key, value in records)
    assert set(expected_after_clean(written, end, tombstones=True)) <= set(records)
    assert [off for off, _, _ in records] == sorted({off for off, _, _ in records})
    assert reopened.log_end_offset == log.log_end_offset
    check_indexes(reopened)

    LogCleaner(tmp_path).clean_log(KEY, reopened, clock())
    assert read_all(reopened) == expected_after_clean(written, end, tombstones=True)
    check_indexes(reopened)


def test_stopped_cleaner_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    write(log, updates(12))
    written = read_all(log)
    cleaner = LogCleaner(tmp_path)
    cleaner.stop()
    assert cleaner.clean_log(KEY, log, clock()) is None
    assert read_all(log) == written
    assert not list((tmp_path / "t-0").glob("*.cleaned"))
