"""A standalone partition with transactions: the LSO, markers, the aborted index, recovery."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.replication.helpers import ManualClock, make_partition

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.replication.partition import Partition
from samsa.storage.log import Log
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.transaction_replay import replay_log
from samsa.storage.segments.transaction_index import AbortedTxn, TransactionIndex


def txn_batch(producer_id: int, sequence: int, count: int = 2, epoch: int = 0) -> memoryview:
    builder = RecordBatchBuilder(
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        is_transactional=True,
    )
    for i in range(count):
        builder.append(1_000 + i, b"k", b"v%d" % i)
    return memoryview(bytearray(builder.build()))


@pytest.fixture
def partition(tmp_path: Path) -> Partition:
    return make_partition(tmp_path, ManualClock())


def test_open_transactions_hold_back_the_last_stable_offset(partition: Partition) -> None:
    partition.append_from_client(txn_batch(7, 0))  # offsets 0-1
    partition.append_from_client(txn_batch(8, 0))  # offsets 2-3
    assert partition.high_watermark == 4 and partition.last_stable_offset == 0
    assert partition.append_marker(7, 0, 0, commit=True) == 4
    assert partition.last_stable_offset == 2
    assert partition.append_marker(8, 0, 0, commit=False) == 5
    assert partition.last_stable_offset == 6
    result = partition.read_for_consumer(0, 1 << 20, read_committed=True)
    assert result.aborted == [AbortedTxn(8, 2, 5, 6)]
    assert partition.read_for_consumer(0, 1 << 20, read_committed=True).last_stable_offset == 6


def test_read_committed_stops_at_the_first_open_transaction(partition: Partition) -> None:
    partition.append_from_client(txn_batch(7, 0))
    committed = partition.read_for_consumer(0, 1 << 20, read_committed=True)
    assert committed.records == b"" and committed.last_stable_offset == 0
    uncommitted = partition.read_for_consumer(0, 1 << 20)
    assert len(uncommitted.records) > 0


def test_markers_from_fenced_producers_and_coordinators_are_refused(partition: Partition) -> None:
    partition.append_from_client(txn_batch(7, 0, epoch=3))
    with pytest.raises(KafkaError) as fenced:
        partition.append_marker(7, 2, 0, commit=True)
    assert fenced.value.code is ErrorCode.INVALID_PRODUCER_EPOCH
    partition.append_marker(7, 3, 5, commit=True)
    with pytest.raises(KafkaError) as zombie:
        partition.append_marker(7, 3, 4, commit=False)
    assert zombie.value.code is ErrorCode.TRANSACTION_COORDINATOR_FENCED


def test_a_non_transactional_batch_inside_a_transaction_is_refused(partition: Partition) -> None:
    partition.append_from_client(txn_batch(7, 0))
    builder = RecordBatchBuilder(producer_id=7, producer_epoch=0, base_sequence=2)
    builder.append(1_000, b"k", b"v")
    with pytest.raises(KafkaError) as refused:
        partition.append_from_client(memoryview(bytearray(builder.build())))
    assert refused.value.code is ErrorCode.INVALID_TXN_STATE


def test_the_txnindex_is_kafkas_format_and_rebuilt_on_recovery(partition: Partition) -> None:
    partition.append_from_client(txn_batch(7, 0))
    partition.append_marker(7, 0, 0, commit=False)
    path = partition.log.active_segment.txn_index.path
    assert path is not None and path.name == "00000000000000000000.txnindex"
    # version 0, producer 7, first 0, last 2, last stable 3: 34 bytes, big-endian
    assert path.read_bytes() == b"\x00\x00" + b"".join(n.to_bytes(8, "big") for n in (7, 0, 2, 3))
    partition.append_from_client(txn_batch(9, 0))  # left open
    path.unlink()  # lost in a crash: recovery replays the log
    log_: Log = partition.log
    state = ProducerStateManager(log_.directory)
    replay_log(log_, state, state.load(log_.log_start_offset, log_.log_end_offset))
    assert TransactionIndex(path).entries == [AbortedTxn(7, 0, 2, 3)]
    assert state.first_unstable_offset(log_.log_end_offset) == 3


def test_ended_transactions_are_forgotten_once_replicated() -> None:
    from samsa.storage.producers.open_transactions import OpenTransactions

    txns = OpenTransactions()
    txns.begin(7, 10)
    txns.begin(8, 12)
    assert txns.end(7, 20, aborted=True) == AbortedTxn(7, 10, 20, 12)
    assert txns.first_unstable_offset(15) == 10, "the marker at 20 is not replicated yet"
    txns.end(8, 21, aborted=False)
    txns.forget_replicated(21)
    assert txns.first_unstable_offset(21) == 12, "8's marker at 21 is not below 21"
    txns.forget_replicated(22)
    assert txns.first_unstable_offset(22) is None and txns.first_open_offset() is None


def test_the_last_stable_offset_never_falls_below_the_log_start(partition: Partition) -> None:
    """DeleteRecords may remove the start of an open transaction (Kafka bounds it
    by the high watermark only); the LSO then stays at the log start, as Kafka's
    does, so read_committed consumers and ListOffsets see a valid offset."""
    plain = RecordBatchBuilder()
    plain.append(1_000, b"k", b"plain")
    partition.append_from_client(memoryview(bytearray(plain.build())))  # offset 0
    partition.append_from_client(txn_batch(7, 0))  # offsets 1-2, left open
    assert partition.last_stable_offset == 1
    partition.log.delete_records(2)
    assert partition.log_start_offset == 2
    assert partition.last_stable_offset == 2
    assert partition.read_for_consumer(2, 1 << 20, read_committed=True).records == b""
