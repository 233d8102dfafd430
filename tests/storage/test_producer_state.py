"""ProducerStateManager: the idempotent-produce checks a broker makes before appending."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.producers.entry import (
    INT32_MAX,
    NUM_BATCHES_TO_RETAIN,
    increment_sequence,
)
from samsa.storage.producers.producer_state import (
    CHECK_OK,
    CheckOutcome,
    ProducerStateManager,
)

PID = 1000


class FakeLog:
    """Assigns offsets like a partition log and remembers batches for replay."""

    def __init__(self, psm: ProducerStateManager, next_offset: int = 0) -> None:
        self.psm = psm
        self.next_offset = next_offset
        self.batches: list[tuple[int, int, int, int, int, int]] = []

    def produce(
        self, first_seq: int, count: int, *, pid: int = PID, epoch: int = 0, ts: int = 1_000
    ) -> tuple[int, int]:
        last_seq = increment_sequence(first_seq, count - 1)
        result = self.psm.check(pid, epoch, first_seq, last_seq)
        if result.is_duplicate:
            return result.first_offset, result.last_offset
        first, last = self.next_offset, self.next_offset + count - 1
        self.batches.append((pid, epoch, first_seq, count - 1, first, ts))
        self.psm.update(pid, epoch, first_seq, last_seq, first, last, ts)
        self.next_offset = last + 1
        return first, last

    def replay_into(self, psm: ProducerStateManager, from_offset: int) -> None:
        for pid, epoch, base_seq, delta, base, ts in self.batches:
            if base >= from_offset:
                psm.replay_batch(pid, epoch, base_seq, delta, base, base + delta, ts, False, False)


@pytest.fixture
def psm(tmp_path: Path) -> ProducerStateManager:
    return ProducerStateManager(tmp_path)


def error_of(call: object) -> ErrorCode:
    assert callable(call)
    with pytest.raises(KafkaError) as info:
        call()
    return info.value.code


def test_in_order_sequences_are_accepted(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    assert log.produce(0, 3) == (0, 2)
    assert log.produce(3, 2) == (3, 4)
    assert log.produce(5, 1) == (5, 5)
    entry = psm.last_entry(PID)
    assert entry is not None
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (0, 0, 5)
    assert psm.map_end_offset == 6


def test_unknown_producer_is_accepted_at_any_sequence(psm: ProducerStateManager) -> None:
    # KIP-360 (Kafka 2.5+): state may have been removed by retention; do not strand it.
    assert psm.check(PID, 3, 42, 45) == CHECK_OK


def test_duplicate_of_each_of_the_last_five_batches_returns_original_offsets(
    psm: ProducerStateManager,
) -> None:
    log = FakeLog(psm)
    originals = [(seq * 2, log.produce(seq * 2, 2, ts=100 + seq)) for seq in range(7)]
    retained = originals[-NUM_BATCHES_TO_RETAIN:]
    for index, (first_seq, (first, last)) in enumerate(retained):
        result = psm.check(PID, 0, first_seq, first_seq + 1)
        assert result.outcome is CheckOutcome.DUPLICATE
        assert (result.first_offset, result.last_offset) == (first, last)
        assert result.timestamp == 100 + 2 + index
    # Older than the retained window: no longer recognisable, so out of order.
    assert error_of(lambda: psm.check(PID, 0, 0, 1)) is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    # A retry does not append: the log did not grow.
    assert log.produce(12, 2) == originals[-1][1]
    assert log.next_offset == 14


def test_overlapping_but_different_range_is_not_a_duplicate(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(0, 4)
    assert error_of(lambda: psm.check(PID, 0, 0, 2)) is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_gap_in_sequence_is_out_of_order(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(0, 3)
    assert error_of(lambda: psm.check(PID, 0, 4, 4)) is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert error_of(lambda: psm.check(PID, 0, 1, 1)) is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_older_epoch_is_invalid_producer_epoch(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(0, 1, epoch=5)
    assert error_of(lambda: psm.check(PID, 4, 1, 1)) is ErrorCode.INVALID_PRODUCER_EPOCH
    # Even a retry of a batch the old epoch really wrote is fenced once the epoch moved.
    log.produce(0, 1, epoch=6)
    assert error_of(lambda: psm.check(PID, 5, 0, 0)) is ErrorCode.INVALID_PRODUCER_EPOCH


def test_epoch_bump_must_restart_at_zero(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(0, 10, epoch=0)
    assert error_of(lambda: psm.check(PID, 1, 10, 10)) is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.produce(0, 2, epoch=1) == (10, 11)
    entry = psm.last_entry(PID)
    assert entry is not None
    assert entry.producer_epoch == 1
    assert len(entry.batches) == 1  # batches of the old epoch are forgotten
    assert psm.check(PID, 1, 2, 2) == CHECK_OK


def test_sequence_wraps_after_int32_max(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(INT32_MAX - 2, 2)  # MAX-2 .. MAX-1
    # A batch crossing the boundary: MAX, 0, 1.
    assert psm.check(PID, 0, INT32_MAX, 1) == CHECK_OK
    first, last = log.produce(INT32_MAX, 3)
    entry = psm.last_entry(PID)
    assert entry is not None
    assert (entry.batches[-1].first_seq, entry.last_seq) == (INT32_MAX, 1)
    assert psm.check(PID, 0, 2, 2) == CHECK_OK
    dup = psm.check(PID, 0, INT32_MAX, 1)
    assert dup.is_duplicate and (dup.first_offset, dup.last_offset) == (first, last)


def test_sequence_zero_follows_int32_max(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(INT32_MAX, 1)
    assert psm.check(PID, 0, 0, 4) == CHECK_OK
    assert error_of(lambda: psm.check(PID, 0, 1, 1)) is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_producers_are_independent(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(0, 2, pid=1)
    log.produce(0, 2, pid=2)
    assert psm.check(1, 0, 2, 2) == CHECK_OK
    assert psm.check(2, 0, 2, 2) == CHECK_OK
    assert set(psm.active_producers()) == {1, 2}


def test_update_rejects_inconsistent_ranges(psm: ProducerStateManager) -> None:
    with pytest.raises(ValueError):
        psm.update(PID, 0, 0, 5, 10, 12, 0)  # 6 sequences but 3 offsets


def test_non_transactional_batch_inside_open_transaction(psm: ProducerStateManager) -> None:
    psm.update(PID, 0, 0, 0, 0, 0, 1, is_transactional=True)
    entry = psm.last_entry(PID)
    assert entry is not None and entry.current_txn_first_offset == 0
    assert error_of(lambda: psm.check(PID, 0, 1, 1)) is ErrorCode.INVALID_TXN_STATE
    assert psm.check(PID, 0, 1, 1, is_transactional=True) == CHECK_OK
    psm.replay_batch(PID, 0, -1, 0, 1, 1, 2, True, True, coordinator_epoch=3)
    assert entry.current_txn_first_offset is None and entry.coordinator_epoch == 3
    assert psm.check(PID, 0, 1, 1) == CHECK_OK


def test_remove_expired(psm: ProducerStateManager) -> None:
    log = FakeLog(psm)
    log.produce(0, 1, pid=1, ts=1_000)
    log.produce(0, 1, pid=2, ts=5_000)
    assert psm.remove_expired(now_ms=11_000, producer_id_expiration_ms=10_000) == [1]
    assert set(psm.active_producers()) == {2}
    # An expired producer is unknown again, so any sequence is accepted.
    assert psm.check(1, 0, 7, 7) == CHECK_OK
