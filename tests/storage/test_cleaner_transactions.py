"""Compaction of a log with transactions: aborted records never shadow committed ones."""

from __future__ import annotations

from pathlib import Path

from samsa.protocol.record_builder import ControlType, RecordBatchBuilder, control_batch
from samsa.storage.cleaner_manager import LogCleaner
from samsa.storage.transaction_index import AbortedTxn

from .log_helpers import ManualClock
from .test_cleaner import KEY, open_log, read_all


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
