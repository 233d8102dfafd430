"""A partition following: appends with the leader's offsets, truncation, producer state."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.replication.helpers import (
    ManualClock,
    batch_epochs,
    log_bytes,
    make_batch,
    make_partition,
    registration,
)

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.partition import Partition


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def pair(tmp_path: Path, clock: ManualClock) -> tuple[Partition, Partition]:
    leader = make_partition(tmp_path, clock, name="leader")
    leader.make_leader(registration(leader_epoch=2), clock())
    follower = make_partition(tmp_path, clock, node_id=2, name="follower")
    follower.make_follower(registration(leader_epoch=2), clock())
    return leader, follower


def copy(leader: Partition, follower: Partition) -> None:
    """What one fetch does: the leader's batches from the follower's end."""
    result = leader.read_for_follower(
        2,
        follower.log_end_offset,
        current_leader_epoch=leader.leader_epoch,
        last_fetched_epoch=follower.last_fetched_epoch(),
        follower_log_start_offset=follower.log_start_offset,
        max_bytes=1 << 20,
        min_one=True,
        now_ms=0,
    )
    assert result.diverging_epoch is None
    records = result.records if isinstance(result.records, bytes) else result.records.read_bytes()
    follower.append_as_follower(records)
    follower.update_follower_high_watermark(result.high_watermark)


def idempotent(seq: int, count: int = 2, producer_id: int = 7) -> memoryview:
    return memoryview(
        make_batch(count, producer_id=producer_id, producer_epoch=0, base_sequence=seq)
    )


def test_follower_copies_the_leaders_batches_byte_for_byte(
    tmp_path: Path, clock: ManualClock
) -> None:
    leader, follower = pair(tmp_path, clock)
    for count in (3, 1, 4):
        leader.append_from_client(memoryview(make_batch(count)))
    copy(leader, follower)
    assert log_bytes(follower.log) == log_bytes(leader.log)
    assert batch_epochs(follower.log) == [(0, 2), (3, 2), (4, 2)]
    assert follower.last_fetched_epoch() == 2
    assert follower.log.leader_epoch_cache.entries() == leader.log.leader_epoch_cache.entries()


def test_follower_high_watermark_is_the_leaders_capped_at_its_own_end(
    tmp_path: Path, clock: ManualClock
) -> None:
    _, follower = pair(tmp_path, clock)
    follower.append_as_follower(_stamped(0, 5, epoch=2))
    follower.update_follower_high_watermark(9)
    assert follower.high_watermark == 5
    follower.update_follower_high_watermark(3)
    assert follower.high_watermark == 5  # never back, except by truncation
    follower.truncate_to(2)
    assert follower.log_end_offset == 0  # the whole batch holding offset 2 went
    assert follower.high_watermark == 0


def test_appends_that_do_not_continue_the_log_are_refused(
    tmp_path: Path, clock: ManualClock
) -> None:
    _, follower = pair(tmp_path, clock)
    follower.append_as_follower(_stamped(0, 3, epoch=2))
    with pytest.raises(KafkaError) as info:
        follower.append_as_follower(_stamped(1, 3, epoch=2))
    assert info.value.code is ErrorCode.CORRUPT_MESSAGE
    corrupt = _stamped(3, 1, epoch=2)
    corrupt[-1] ^= 0xFF
    with pytest.raises(KafkaError) as info:
        follower.append_as_follower(corrupt)
    assert info.value.code is ErrorCode.CORRUPT_MESSAGE
    assert follower.log_end_offset == 3


def test_a_partial_batch_at_the_end_of_a_fetch_waits_for_the_next(
    tmp_path: Path, clock: ManualClock
) -> None:
    _, follower = pair(tmp_path, clock)
    data = _stamped(0, 2, epoch=2) + _stamped(2, 2, epoch=2)
    follower.append_as_follower(data[:-5])
    assert follower.log_end_offset == 2


def test_empty_follower_restarts_at_a_batch_holding_the_leaders_log_start(
    tmp_path: Path, clock: ManualClock
) -> None:
    _, follower = pair(tmp_path, clock)
    follower.truncate_fully_and_start_at(12)
    follower.append_as_follower(_stamped(10, 5, epoch=2))
    assert follower.log_start_offset == 10 and follower.log_end_offset == 15


def test_producer_state_follows_so_a_new_leader_spots_duplicates(
    tmp_path: Path, clock: ManualClock
) -> None:
    leader, follower = pair(tmp_path, clock)
    first = leader.append_from_client(idempotent(0))
    copy(leader, follower)
    follower.make_leader(registration(leader=2, leader_epoch=3, partition_epoch=1), clock())
    retry = follower.append_from_client(idempotent(0))
    assert retry.duplicate and retry.base_offset == first.base_offset
    with pytest.raises(KafkaError) as info:
        follower.append_from_client(idempotent(5))
    assert info.value.code is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert follower.append_from_client(idempotent(2)).base_offset == 2


def test_truncation_forgets_the_producer_state_of_the_removed_batches(
    tmp_path: Path, clock: ManualClock
) -> None:
    leader, follower = pair(tmp_path, clock)
    leader.append_from_client(idempotent(0))
    leader.append_from_client(idempotent(2))
    copy(leader, follower)
    assert follower.producer_state.last_entry(7).last_seq == 3
    follower.truncate_to(2)
    assert follower.producer_state.last_entry(7).last_seq == 1
    follower.make_leader(registration(leader=2, leader_epoch=3, partition_epoch=1), clock())
    assert not follower.append_from_client(idempotent(2)).duplicate


def test_last_fetched_epoch_is_the_epoch_of_the_last_batch(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition = make_partition(tmp_path, clock)
    assert partition.last_fetched_epoch() == -1
    partition.make_leader(registration(leader_epoch=1), clock())
    partition.append_from_client(memoryview(make_batch(2)))
    # A later epoch that wrote nothing (this broker led briefly) is not what it has.
    partition.make_leader(registration(leader_epoch=4, partition_epoch=1), clock())
    assert partition.log.latest_epoch() == 4
    assert partition.last_fetched_epoch() == 1


def test_follower_takes_the_leaders_log_start_up_to_its_high_watermark(
    tmp_path: Path, clock: ManualClock
) -> None:
    _, follower = pair(tmp_path, clock)
    follower.append_as_follower(_stamped(0, 3, epoch=2) + _stamped(3, 3, epoch=2))
    follower.maybe_increment_log_start_offset(3)
    assert follower.log_start_offset == 0  # above its high watermark: not yet
    follower.update_follower_high_watermark(6)
    follower.maybe_increment_log_start_offset(3)
    assert follower.log_start_offset == 3


def test_only_followers_take_fetched_data(tmp_path: Path, clock: ManualClock) -> None:
    leader, _ = pair(tmp_path, clock)
    with pytest.raises(KafkaError) as info:
        leader.append_as_follower(_stamped(0, 1, epoch=2))
    assert info.value.code is ErrorCode.NOT_LEADER_OR_FOLLOWER


def _stamped(base_offset: int, count: int, *, epoch: int) -> bytearray:
    from samsa.protocol.batches.record_batch import stamp_batch

    batch = make_batch(count)
    stamp_batch(batch, 0, base_offset, epoch)
    return batch
