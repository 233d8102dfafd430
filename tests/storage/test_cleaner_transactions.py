"""Compaction of a log with transactions: aborted records never shadow committed ones."""

from __future__ import annotations

from pathlib import Path

from samsa.protocol.batches.record_builder import ControlType, RecordBatchBuilder, control_batch
from samsa.storage.cleaner.manager import LogCleaner
from samsa.storage.log import Log
from samsa.storage.segments.transaction_index import AbortedTxn

from .log_helpers import ManualClock
from .test_cleaner import KEY, RETENTION_MS, open_log, read_all


def txn_batch(key: bytes, value: bytes, sequence: int) -> bytearray:
    builder = RecordBatchBuilder(
        producer_id=7, producer_epoch=0, base_sequence=sequence, is_transactional=True
    )
    builder.append(1_000, key, value)
    return bytearray(builder.build())


def marker(control: ControlType) -> bytearray:
    return bytearray(control_batch(control, producer_id=7, producer_epoch=0, timestamp_ms=1_000))


def test_an_aborted_value_is_removed_and_the_committed_one_kept(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    log.append(txn_batch(b"k", b"committed", 0))  # offset 0
    log.append(marker(ControlType.COMMIT))  # 1
    log.append(txn_batch(b"k", b"aborted", 1))  # 2
    log.append(marker(ControlType.ABORT))  # 3
    log.append_aborted_txn(AbortedTxn(7, 2, 3, 4))
    log.roll()
    builder = RecordBatchBuilder()
    builder.append(1_000, b"other", b"x")
    log.append(bytearray(builder.build()))
    log.roll()
    LogCleaner(tmp_path).clean_log(KEY, log, clock())
    values = [(key, value) for _, key, value in read_all(log)]
    assert (b"k", b"committed") in values
    assert (b"k", b"aborted") not in values


def test_cleaning_stops_at_the_segment_of_an_open_transaction(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    builder = RecordBatchBuilder()
    builder.append(1_000, b"k", b"committed")
    log.append(bytearray(builder.build()))  # offset 0
    log.roll()
    log.append(txn_batch(b"k", b"undecided", 0))  # offset 1, no marker yet
    log.roll()
    log.append(txn_batch(b"other", b"x", 1))
    log.roll()
    cleaner = LogCleaner(tmp_path, first_unstable_offset=lambda key: 1)
    cleaner.clean_log(KEY, log, clock())
    values = [(key, value) for _, key, value in read_all(log)]
    assert (b"k", b"committed") in values, "the open transaction may still abort"


def filler(log: Log, value: bytes) -> None:
    """A non-transactional batch in a segment of its own: new dirty data, so a pass runs."""
    builder = RecordBatchBuilder()
    builder.append(1_000, b"filler", value)
    log.append(bytearray(builder.build()))
    log.roll()


def control_offsets(log: Log) -> list[int]:
    return [
        h.base_offset for segment in log.segments for _, h in segment.iter_headers() if h.is_control
    ]


def test_a_marker_goes_once_its_transaction_is_empty_and_its_horizon_passed(
    tmp_path: Path,
) -> None:
    """Kafka's cleaner: a marker stays while a batch of its transaction remains,
    is then stamped with now + delete.retention.ms, and goes after that."""
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    log.append(txn_batch(b"k", b"old", 0))  # 0: superseded by offset 2
    log.append(marker(ControlType.COMMIT))  # 1
    log.append(txn_batch(b"k", b"new", 1))  # 2: the producer's last batch, kept
    log.append(marker(ControlType.COMMIT))  # 3
    log.roll()
    filler(log, b"a")
    cleaner = LogCleaner(tmp_path)

    cleaner.clean_log(KEY, log, clock())  # removes offset 0; saw it, so keeps marker 1
    assert control_offsets(log) == [1, 3]
    filler(log, b"b")
    cleaner.clean_log(KEY, log, clock())  # marker 1 has no batch left: stamped
    assert control_offsets(log) == [1, 3]
    clock.advance(RETENTION_MS - 1)
    filler(log, b"c")
    cleaner.clean_log(KEY, log, clock())
    assert control_offsets(log) == [1, 3], "kept until its delete horizon"
    clock.advance(2)
    cleaner.clean_log(KEY, log, clock())  # the horizon passed: this pass runs for it
    assert control_offsets(log) == [3], "marker 3 ends a transaction with a batch left"
    values = [(o, v) for o, k, v in read_all(log) if k == b"k"]
    assert values == [(2, b"new")]


def test_an_abort_marker_stays_while_aborted_batches_remain(tmp_path: Path) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock)
    log.append(txn_batch(b"k", b"aborted", 0))  # 0
    log.append(marker(ControlType.ABORT))  # 1
    log.append_aborted_txn(AbortedTxn(7, 0, 1, 0))
    log.append(txn_batch(b"k2", b"committed", 1))  # 2
    log.append(marker(ControlType.COMMIT))  # 3
    log.roll()
    filler(log, b"a")
    cleaner = LogCleaner(tmp_path)
    cleaner.clean_log(KEY, log, clock())
    assert control_offsets(log) == [1, 3], "the pass saw the aborted batch it removed"
    for value in (b"b", b"c"):
        filler(log, value)
        cleaner.clean_log(KEY, log, clock())
        clock.advance(RETENTION_MS + 1)
    assert control_offsets(log) == [3]
    assert [(k, v) for _, k, v in read_all(log) if k in (b"k", b"k2")] == [(b"k2", b"committed")]
