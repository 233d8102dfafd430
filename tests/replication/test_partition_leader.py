"""A partition leading: epochs, the high watermark, acks=all, reads, fencing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests.replication.helpers import (
    ManualClock,
    batch_epochs,
    make_batch,
    make_partition,
    registration,
)

from samsa.errors import ErrorCode, InvalidRecordError, KafkaError
from samsa.replication.leader.isr_state import PendingIsrChange
from samsa.replication.partition import Partition, PartitionRole
from samsa.replication.partition_base import PartitionBase
from samsa.storage.leader_epoch_cache import EpochEndOffset, EpochEntry

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 10))


def produce(partition: Partition, count: int = 1, acks: int = 1) -> int:
    """Append one batch; returns its last offset + 1."""
    result = partition.append_from_client(memoryview(make_batch(count)), required_acks=acks)
    return result.last_offset + 1


def follower_fetch(
    partition: Partition, broker: int, offset: int, clock: ManualClock, epoch: int = -1
) -> None:
    partition.read_for_follower(
        broker,
        offset,
        current_leader_epoch=partition.leader_epoch,
        last_fetched_epoch=epoch,
        follower_log_start_offset=0,
        max_bytes=1 << 20,
        min_one=True,
        now_ms=clock(),
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def leader(
    tmp_path: Path, clock: ManualClock, **reg: Any
) -> tuple[Partition, list[PendingIsrChange]]:
    partition = make_partition(tmp_path, clock, min_insync_replicas=2)
    sent: list[PendingIsrChange] = []

    def sink(_: PartitionBase, change: PendingIsrChange) -> None:
        sent.append(change)

    partition.alter_partition_sink = sink
    assert partition.make_leader(registration(**reg), clock())
    return partition, sent


def test_new_leader_records_its_epoch_at_the_log_end_and_stamps_batches(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition = make_partition(tmp_path, clock)
    partition.append_from_client(memoryview(make_batch(3)))  # standalone: epoch -1
    assert partition.make_leader(registration(leader_epoch=4), clock())
    assert partition.role is PartitionRole.LEADER
    assert partition.log.leader_epoch_cache.entries() == [EpochEntry(4, 3)]
    produce(partition, 2)
    assert batch_epochs(partition.log) == [(0, -1), (3, 4)]


def test_stale_registration_is_ignored(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock, leader_epoch=5, partition_epoch=9)
    assert not partition.make_leader(registration(leader_epoch=4, partition_epoch=10), clock())
    assert not partition.make_follower(
        registration(leader=2, leader_epoch=5, partition_epoch=8), clock()
    )
    assert partition.role is PartitionRole.LEADER and partition.leader_epoch == 5
    # Same epochs again (a replayed batch): accepted, nothing new.
    assert not partition.make_leader(registration(leader_epoch=5, partition_epoch=9), clock())


def test_high_watermark_moves_with_the_slowest_isr_member_and_never_back(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, _ = leader(tmp_path, clock)
    end = produce(partition, 5)
    assert partition.high_watermark == 0
    follower_fetch(partition, 2, 5, clock)
    assert partition.high_watermark == 0  # 3 has not fetched
    follower_fetch(partition, 3, 3, clock)
    assert partition.high_watermark == 3
    follower_fetch(partition, 3, end, clock)
    assert partition.high_watermark == end
    # A follower fetching from further back (it truncated) does not move it back.
    follower_fetch(partition, 3, 2, clock)
    assert partition.high_watermark == end


def test_isr_of_the_leader_alone_commits_on_append(tmp_path: Path, clock: ManualClock) -> None:
    partition = make_partition(tmp_path, clock)
    partition.make_leader(registration(replicas=(1,)), clock())
    end = produce(partition, 4)
    assert partition.high_watermark == end


def test_consumers_read_below_the_high_watermark_followers_to_the_end(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, _ = leader(tmp_path, clock)
    produce(partition, 2)
    produce(partition, 3)
    follower_fetch(partition, 2, 2, clock)
    follower_fetch(partition, 3, 2, clock)
    assert partition.high_watermark == 2
    consumer = partition.read_for_consumer(0, 1 << 20)
    assert len(consumer.records) and consumer.high_watermark == 2
    assert partition.read_for_consumer(2, 1 << 20).records == b""  # at the watermark
    assert partition.read_for_consumer(4, 1 << 20).records == b""  # above it, below the end
    follower = partition.read_for_follower(
        2,
        2,
        current_leader_epoch=0,
        last_fetched_epoch=-1,
        follower_log_start_offset=0,
        max_bytes=1 << 20,
        min_one=True,
        now_ms=clock(),
    )
    assert len(follower.records) > 0 and follower.log_end_offset == 5
    with pytest.raises(KafkaError) as info:
        partition.read_for_consumer(6, 1 << 20)
    assert info.value.code is ErrorCode.OFFSET_OUT_OF_RANGE


def test_requests_are_fenced_by_leader_epoch(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock, leader_epoch=3)
    for epoch, code in ((2, ErrorCode.FENCED_LEADER_EPOCH), (4, ErrorCode.UNKNOWN_LEADER_EPOCH)):
        with pytest.raises(KafkaError) as info:
            partition.read_for_consumer(0, 100, current_leader_epoch=epoch)
        assert info.value.code is code
    partition.read_for_consumer(0, 100, current_leader_epoch=3)
    partition.read_for_consumer(0, 100)  # no epoch given: not checked


def test_follower_refuses_clients(tmp_path: Path, clock: ManualClock) -> None:
    partition = make_partition(tmp_path, clock)
    partition.make_follower(registration(leader=2, leader_epoch=1), clock())
    with pytest.raises(KafkaError) as info:
        produce(partition)
    assert info.value.code is ErrorCode.NOT_LEADER_OR_FOLLOWER
    with pytest.raises(KafkaError) as info:
        partition.read_for_consumer(0, 100, current_leader_epoch=1)
    assert info.value.code is ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_unknown_replica_fetch(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock)
    with pytest.raises(KafkaError) as info:
        follower_fetch(partition, 9, 0, clock)
    assert info.value.code is ErrorCode.UNKNOWN_LEADER_EPOCH


def test_acks_all_refused_before_append_when_isr_is_too_small(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, _ = leader(tmp_path, clock, isr=(1,))
    with pytest.raises(KafkaError) as info:
        produce(partition, acks=-1)
    assert info.value.code is ErrorCode.NOT_ENOUGH_REPLICAS
    assert partition.log_end_offset == 0
    produce(partition, acks=1)  # acks=1 does not care
    assert partition.log_end_offset == 1


def test_acks_all_completes_when_the_high_watermark_passes(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, _ = leader(tmp_path, clock)

    async def scenario() -> ErrorCode:
        end = produce(partition, 3, acks=-1)
        waiting = asyncio.ensure_future(partition.wait_for_acks(end, 5_000))
        await asyncio.sleep(0)
        follower_fetch(partition, 2, end, clock)
        await asyncio.sleep(0)
        assert not waiting.done()
        follower_fetch(partition, 3, end, clock)
        return await waiting

    assert run(scenario()) is ErrorCode.NONE


def test_acks_all_times_out(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock)

    async def scenario() -> ErrorCode:
        end = produce(partition, acks=-1)
        return await partition.wait_for_acks(end, 10)

    assert run(scenario()) is ErrorCode.REQUEST_TIMED_OUT
    assert len(partition._delayed) == 0


def test_acks_all_fails_after_append_when_the_isr_shrank_below_min(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, sent = leader(tmp_path, clock, replicas=(1, 2), isr=(1, 2))

    async def scenario() -> ErrorCode:
        end = produce(partition, acks=-1)
        waiting = asyncio.ensure_future(partition.wait_for_acks(end, 5_000))
        clock.advance(20_000)  # follower 2 never fetches
        change = partition.maybe_shrink_isr(clock())
        assert change is not None and change.sent.isr == (1,)
        await asyncio.sleep(0)
        assert not waiting.done()  # a pending shrink still waits for 2
        partition.handle_alter_partition_result(change, change.sent, clock())
        return await waiting

    assert run(scenario()) is ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert partition.in_sync_replicas == {1}
    assert len(sent) == 1


def test_losing_leadership_fails_waiting_produces(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock)

    async def scenario() -> ErrorCode:
        end = produce(partition, acks=-1)
        waiting = asyncio.ensure_future(partition.wait_for_acks(end, 5_000))
        await asyncio.sleep(0)
        partition.make_follower(registration(leader=2, leader_epoch=1, partition_epoch=1), clock())
        return await waiting

    assert run(scenario()) is ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_isr_expands_when_a_follower_reaches_the_high_watermark(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, sent = leader(tmp_path, clock, isr=(1, 2))
    end = produce(partition, 4)
    follower_fetch(partition, 2, end, clock)
    assert partition.high_watermark == end
    follower_fetch(partition, 3, 2, clock)
    assert sent == []
    follower_fetch(partition, 3, end, clock)
    assert len(sent) == 1 and sent[0].sent.isr == (1, 2, 3)
    assert partition.in_sync_replicas == {1, 2}  # not committed yet
    assert not partition.handle_alter_partition_result(
        sent[0], type(sent[0].sent)(1, 0, (1, 2, 3), 1), clock()
    )
    assert partition.in_sync_replicas == {1, 2, 3}
    assert partition.partition_epoch == 1


def test_isr_shrinks_after_the_lag(tmp_path: Path, clock: ManualClock) -> None:
    partition, sent = leader(tmp_path, clock)
    end = produce(partition, 2)
    follower_fetch(partition, 2, end, clock)
    follower_fetch(partition, 3, 0, clock)
    clock.advance(10_000)
    assert partition.maybe_shrink_isr(clock()) is None  # exactly the lag: still in sync
    clock.advance(1)
    change = partition.maybe_shrink_isr(clock())
    assert change is not None and change.sent.isr == (1, 2)
    assert sent == [change]
    assert partition.maybe_shrink_isr(clock()) is None  # one change in flight


def test_refusals_roll_back_or_wait_for_metadata(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock)
    follower_fetch(partition, 2, 0, clock)
    clock.advance(20_000)
    change = partition.maybe_shrink_isr(clock())
    assert change is not None
    assert not partition.handle_alter_partition_result(
        change, ErrorCode.INVALID_UPDATE_VERSION, clock()
    )
    assert partition.maybe_shrink_isr(clock()) is None  # still pending: wait for metadata
    # New metadata resolves it.
    partition.make_leader(registration(isr=(1, 2), partition_epoch=1), clock())
    assert partition.in_sync_replicas == {1, 2}
    produce(partition)
    follower_fetch(partition, 2, 0, clock)  # behind the leader's end
    clock.advance(20_000)
    change = partition.maybe_shrink_isr(clock())
    assert change is not None and change.sent.isr == (1,)
    assert not partition.handle_alter_partition_result(
        change, ErrorCode.INELIGIBLE_REPLICA, clock()
    )
    assert partition.maybe_shrink_isr(clock()) is not None  # rolled back: may try again
    assert partition.handle_alter_partition_result(
        partition.leader_state.isr_state,
        ErrorCode.NOT_CONTROLLER,
        clock(),
    )


def test_answer_to_an_old_change_is_ignored(tmp_path: Path, clock: ManualClock) -> None:
    partition, _ = leader(tmp_path, clock)
    clock.advance(20_000)
    change = partition.maybe_shrink_isr(clock())
    assert change is not None
    partition.make_leader(registration(leader_epoch=1, partition_epoch=1), clock())
    assert not partition.handle_alter_partition_result(change, change.sent, clock())
    assert partition.in_sync_replicas == {1, 2, 3}


def test_follower_with_a_diverging_suffix_is_told_where_to_truncate(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition = make_partition(tmp_path, clock)
    partition.make_leader(registration(leader_epoch=1), clock())
    produce(partition, 5)  # epoch 1: offsets 0-4
    partition.make_leader(registration(leader_epoch=3, partition_epoch=1), clock())
    produce(partition, 2)  # epoch 3: offsets 5-6
    # The follower wrote offsets 5-7 in epoch 2 as a short-lived leader.
    result = partition.read_for_follower(
        2,
        8,
        current_leader_epoch=3,
        last_fetched_epoch=2,
        follower_log_start_offset=0,
        max_bytes=1 << 20,
        min_one=True,
        now_ms=clock(),
    )
    assert result.diverging_epoch == EpochEndOffset(1, 5)
    assert result.records == b""
    assert partition.leader_state.remote[2].log_end_offset == -1
    assert partition.last_offset_for_leader_epoch(3, 2) == EpochEndOffset(1, 5)


def test_a_caught_up_replica_that_dies_stops_holding_the_watermark(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition, sent = leader(tmp_path, clock, isr=(1,))
    follower_fetch(partition, 2, 0, clock)  # level with the leader: caught up
    assert len(sent) == 1  # proposed for the ISR ...
    partition.handle_alter_partition_result(sent[0], ErrorCode.INELIGIBLE_REPLICA, clock())
    end = produce(partition, 2)  # ... refused, yet still caught up and waited for
    assert partition.high_watermark == 0
    clock.advance(10_001)  # 2 never fetches again
    assert partition.maybe_shrink_isr(clock()) is None  # not in the ISR
    assert partition.high_watermark == end


def test_min_insync_replicas_above_the_replica_count_counts_every_replica(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Kafka's effective min ISR: min(min.insync.replicas, replicas), so a two-replica
    partition with min.insync.replicas=3 takes acks=all while both are in sync."""
    partition = make_partition(tmp_path, clock, min_insync_replicas=3)
    assert partition.make_leader(registration(replicas=(1, 2)), clock())
    assert partition.effective_min_insync_replicas == 2
    produce(partition, acks=-1)
    assert partition.log_end_offset == 1
    shrunk = make_partition(tmp_path, clock, name="q", min_insync_replicas=3)
    assert shrunk.make_leader(registration(replicas=(1, 2), isr=(1,)), clock())
    with pytest.raises(KafkaError) as info:
        produce(shrunk, acks=-1)
    assert info.value.code is ErrorCode.NOT_ENOUGH_REPLICAS


def test_create_time_stamps_too_far_ahead_or_behind_are_refused(
    tmp_path: Path, clock: ManualClock
) -> None:
    partition = make_partition(
        tmp_path, clock, message_timestamp_before_max_ms=60_000
    )  # after.max: Kafka 4's one-hour default
    now = clock()
    for refused in (now + 3_600_001, now - 60_001):
        with pytest.raises(InvalidRecordError) as info:
            partition.append_from_client(memoryview(make_batch(timestamp=refused)))
        assert info.value.code is ErrorCode.INVALID_TIMESTAMP
        assert str(refused) in info.value.reason
    for accepted in (now + 3_600_000, now - 60_000):
        partition.append_from_client(memoryview(make_batch(timestamp=accepted)))
    assert partition.log_end_offset == 2
    stamped_by_broker = make_partition(
        tmp_path, clock, name="q", message_timestamp_type="LogAppendTime"
    )
    stamped_by_broker.append_from_client(memoryview(make_batch(timestamp=now + 7_200_000)))
    assert stamped_by_broker.log_end_offset == 1
