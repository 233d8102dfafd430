"""Fencing by leader epoch, and where a follower's log diverges from the leader's."""

from __future__ import annotations

import pytest

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.epochs import (
    OffsetTruncation,
    check_current_leader_epoch,
    diverging_epoch,
    offset_truncation,
)
from samsa.storage.leader_epoch_cache import EpochEndOffset

UNKNOWN = EpochEndOffset(-1, -1)


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (-1, ErrorCode.NONE),
        (5, ErrorCode.NONE),
        (4, ErrorCode.FENCED_LEADER_EPOCH),
        (6, ErrorCode.UNKNOWN_LEADER_EPOCH),
    ],
)
def test_current_leader_epoch(requested: int, expected: ErrorCode) -> None:
    assert check_current_leader_epoch(5, requested) is expected


def test_no_divergence_when_the_epoch_ends_at_or_after_the_fetch_offset() -> None:
    assert diverging_epoch(EpochEndOffset(3, 100), 3, 100, 0) is None
    assert diverging_epoch(EpochEndOffset(3, 120), 3, 100, 0) is None


def test_divergence_when_the_leaders_epoch_ended_before_the_fetch_offset() -> None:
    assert diverging_epoch(EpochEndOffset(3, 80), 3, 100, 0) == EpochEndOffset(3, 80)


def test_divergence_when_the_leader_never_had_the_followers_epoch() -> None:
    # Follower wrote in epoch 4 (a deposed leader); the leader went from 3 to 5.
    assert diverging_epoch(EpochEndOffset(3, 90), 4, 95, 0) == EpochEndOffset(3, 90)


def test_unknown_epoch_or_offset_below_log_start_is_out_of_range() -> None:
    with pytest.raises(KafkaError) as info:
        diverging_epoch(UNKNOWN, 7, 10, 0)
    assert info.value.code is ErrorCode.OFFSET_OUT_OF_RANGE
    with pytest.raises(KafkaError) as info:
        diverging_epoch(EpochEndOffset(3, 80), 3, 10, 50)
    assert info.value.code is ErrorCode.OFFSET_OUT_OF_RANGE


def test_truncate_to_the_smaller_end_of_the_shared_epoch() -> None:
    leader = EpochEndOffset(3, 80)
    assert offset_truncation(leader, EpochEndOffset(3, 95), 95, 95) == OffsetTruncation(80, True)
    assert offset_truncation(leader, EpochEndOffset(3, 70), 95, 95) == OffsetTruncation(70, True)


def test_unknown_leader_epoch_truncates_to_our_previous_epoch_and_asks_again() -> None:
    # Leader says epoch 4 ended at 90; we never had 4: our largest below is 2, ending at 60.
    result = offset_truncation(EpochEndOffset(4, 90), EpochEndOffset(2, 60), 100, 100)
    assert result == OffsetTruncation(60, False)


def test_follower_without_epochs_takes_the_leaders_end() -> None:
    assert offset_truncation(EpochEndOffset(4, 90), UNKNOWN, 100, 100) == (90, True)
    assert offset_truncation(EpochEndOffset(4, 90), UNKNOWN, 50, 50) == (50, True)


def test_leader_without_the_epoch_keeps_up_to_the_fetch_offset() -> None:
    assert offset_truncation(UNKNOWN, UNKNOWN, 100, 40) == (40, True)
