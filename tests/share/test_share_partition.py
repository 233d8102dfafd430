"""The share partition state machine, driven without a broker (the clock is passed in)."""

from __future__ import annotations

from samsa.errors import ErrorCode
from samsa.share.share_partition import (
    AcknowledgeType,
    AcquiredRange,
    RecordState,
    ShareLimits,
    SharePartition,
    StateBatch,
)

ACCEPT, RELEASE, REJECT, GAP = (
    AcknowledgeType.ACCEPT,
    AcknowledgeType.RELEASE,
    AcknowledgeType.REJECT,
    AcknowledgeType.GAP,
)


def partition(**limits: int) -> SharePartition:
    return SharePartition(0, ShareLimits(**{"lock_duration_ms": 1000, **limits}))


def test_two_members_never_acquire_the_same_record() -> None:
    sp = partition()
    first = sp.acquire("a", [(0, 4), (5, 9)], max_records=5, now_ms=0)
    assert first == [AcquiredRange(0, 4, 1)]
    second = sp.acquire("b", [(0, 4), (5, 9)], max_records=5, now_ms=0)
    assert second == [AcquiredRange(5, 9, 1)]
    assert sp.acquire("c", [(0, 9)], max_records=5, now_ms=0) == []


def test_new_records_are_acquired_whole_batches_at_a_time() -> None:
    sp = partition()
    assert sp.acquire("a", [(0, 9), (10, 19)], max_records=3, now_ms=0) == [AcquiredRange(0, 9, 1)]


def test_accepted_records_move_the_start_offset_and_are_never_redelivered() -> None:
    sp = partition()
    sp.acquire("a", [(0, 9)], max_records=10, now_ms=0)
    assert sp.acknowledge("a", [(0, 9, [ACCEPT])]) == (ErrorCode.NONE, None)
    assert sp.start_offset == 10 and not sp.runs
    assert sp.fetch_offset(now_ms=10_000) == 10
    assert sp.acquire("b", [(0, 9)], max_records=10, now_ms=10_000) == []


def test_released_records_are_redelivered_with_a_higher_delivery_count() -> None:
    sp = partition()
    sp.acquire("a", [(0, 3)], max_records=10, now_ms=0)
    types = [ACCEPT, RELEASE, ACCEPT, RELEASE]
    assert sp.acknowledge("a", [(0, 3, types)])[0] is ErrorCode.NONE
    assert sp.start_offset == 1
    assert sp.fetch_offset(now_ms=0) == 1
    assert sp.acquire("b", [(0, 3)], max_records=10, now_ms=0) == [
        AcquiredRange(1, 1, 2),
        AcquiredRange(3, 3, 2),
    ]


def test_an_acknowledgement_of_records_not_acquired_by_the_member_changes_nothing() -> None:
    sp = partition()
    sp.acquire("a", [(0, 4)], max_records=10, now_ms=0)
    code, message = sp.acknowledge("b", [(0, 4, [ACCEPT])])
    assert code is ErrorCode.INVALID_RECORD_STATE and "record 0" in (message or "")
    code, _ = sp.acknowledge("a", [(0, 2, [ACCEPT]), (3, 7, [ACCEPT])])
    assert code is ErrorCode.INVALID_RECORD_STATE
    assert sp.counts()[RecordState.ACQUIRED] == 5 and sp.start_offset == 0
    assert sp.acknowledge("a", [(0, 4, [ACCEPT, ACCEPT])])[0] is ErrorCode.INVALID_REQUEST


def test_an_expired_lock_offers_the_records_to_another_member() -> None:
    sp = partition()
    sp.acquire("a", [(0, 4)], max_records=10, now_ms=0)
    assert sp.next_deadline == 1000
    assert sp.acquire("b", [(0, 4)], max_records=10, now_ms=999) == []
    assert sp.fetch_offset(now_ms=1000) == 0
    assert sp.acquire("b", [(0, 4)], max_records=10, now_ms=1000) == [AcquiredRange(0, 4, 2)]
    assert sp.acknowledge("a", [(0, 4, [ACCEPT])])[0] is ErrorCode.INVALID_RECORD_STATE


def test_a_poison_record_is_archived_after_the_delivery_limit() -> None:
    sp = partition(delivery_count_limit=3)
    for delivery in range(1, 4):
        assert sp.acquire("a", [(0, 0)], max_records=1, now_ms=0) == [AcquiredRange(0, 0, delivery)]
        assert sp.acknowledge("a", [(0, 0, [RELEASE])])[0] is ErrorCode.NONE
    assert sp.start_offset == 1
    assert sp.acquire("a", [(0, 0)], max_records=1, now_ms=0) == []


def test_a_lock_expiring_at_the_delivery_limit_archives_too() -> None:
    sp = partition(delivery_count_limit=1)
    sp.acquire("a", [(0, 1)], max_records=10, now_ms=0)
    sp.expire(now_ms=1000)
    assert sp.start_offset == 2


def test_reject_and_gap_archive() -> None:
    sp = partition()
    sp.acquire("a", [(0, 2)], max_records=10, now_ms=0)
    assert sp.acknowledge("a", [(0, 2, [REJECT, GAP, ACCEPT])])[0] is ErrorCode.NONE
    assert sp.start_offset == 3


def test_the_in_flight_window_is_bounded() -> None:
    sp = partition(max_in_flight=4)
    assert sp.acquire("a", [(0, 9)], max_records=100, now_ms=0) == [AcquiredRange(0, 3, 1)]
    assert sp.acquire("b", [(0, 9)], max_records=100, now_ms=0) == []
    sp.acknowledge("a", [(0, 1, [ACCEPT])])
    assert sp.acquire("b", [(4, 9)], max_records=100, now_ms=0) == [AcquiredRange(4, 5, 1)]


def test_release_member_gives_back_only_its_records() -> None:
    sp = partition()
    sp.acquire("a", [(0, 4)], max_records=5, now_ms=0)
    sp.acquire("b", [(5, 9)], max_records=5, now_ms=0)
    assert sp.release_member("a") == 5
    counts = sp.counts()
    assert counts[RecordState.AVAILABLE] == 5 and counts[RecordState.ACQUIRED] == 5


def test_state_batches_restore_without_acknowledged_records() -> None:
    sp = partition()
    sp.acquire("a", [(0, 5)], max_records=10, now_ms=0)
    sp.acknowledge("a", [(0, 5, [RELEASE, ACCEPT, ACCEPT, REJECT, ACCEPT, ACCEPT])])
    sp.acquire("b", [(0, 5), (6, 7)], max_records=10, now_ms=0)
    batches = sp.state_batches()
    assert batches[0] == StateBatch(0, 0, RecordState.AVAILABLE, 2)
    restored = partition()
    restored.restore(sp.start_offset, batches)
    assert restored.end_offset == 8
    got = restored.acquire("c", [(0, 7)], max_records=10, now_ms=0)
    assert got == [AcquiredRange(0, 0, 3), AcquiredRange(6, 7, 2)]


def test_record_limit_mode_cuts_a_batch_at_max_records() -> None:
    """KIP-1206's record-limit acquisition: never past max_records; the rest of
    the batch is acquired by the next fetch, by any member."""
    sp = partition()
    first = sp.acquire("a", [(0, 9)], max_records=3, now_ms=0, record_limit=True)
    assert first == [AcquiredRange(0, 2, 1)]
    assert sp.fetch_offset(now_ms=0) == 3
    assert sp.acquire("b", [(0, 9)], max_records=4, now_ms=0, record_limit=True) == [
        AcquiredRange(3, 6, 1)
    ]


def test_renew_keeps_records_acquired_for_another_lock_duration() -> None:
    """KIP-1222's Renew (4): only where the request allows it (v2 and
    is_renew_ack); the records stay with the member past their first lock."""
    sp = partition()
    sp.acquire("a", [(0, 4)], max_records=10, now_ms=0)
    renew = [(0, 4, [AcknowledgeType.RENEW])]
    code, _ = sp.acknowledge("a", renew)
    assert code is ErrorCode.INVALID_REQUEST
    assert sp.acknowledge("a", renew, renew_at_ms=900) == (ErrorCode.NONE, None)
    assert sp.next_deadline == 1000  # the earliest lock is still the first one's
    assert sp.expire(now_ms=1500) == 0  # renewed until 1900
    assert sp.acquire("b", [(0, 4)], max_records=10, now_ms=1500) == []
    assert sp.acknowledge("a", [(0, 4, [ACCEPT])])[0] is ErrorCode.NONE
    assert sp.start_offset == 5
