"""Three ReplicaManagers replicating over loopback sockets (see cluster.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from tests.replication.cluster import (
    FakeController,
    Node,
    eventually,
    leader_change,
    start_cluster,
    topic_records,
)
from tests.replication.helpers import batch_epochs, log_bytes, make_batch

from samsa.errors import ErrorCode
from samsa.replication import ReplicationConfig
from samsa.replication.partition import Partition, PartitionRole

T = TypeVar("T")

CONFIG = ReplicationConfig(
    replica_lag_time_max_ms=400,
    replica_fetch_wait_max_ms=100,
    replica_fetch_backoff_ms=50,
    replica_high_watermark_checkpoint_interval_ms=60_000,
)


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def produce(partition: Partition, count: int, *, acks: int = -1, tag: str = "v") -> ErrorCode:
    result = partition.append_from_client(
        memoryview(make_batch(count, tag=tag)), required_acks=acks
    )
    if acks != -1:
        return ErrorCode.NONE
    return await partition.wait_for_acks(result.last_offset + 1, 10_000)


async def stop_all(controller: FakeController) -> None:
    for node in controller.nodes.values():
        await node.stop()


def test_followers_converge_isr_shrinks_and_expands(tmp_path: Path) -> None:
    async def scenario() -> None:
        controller = await start_cluster(tmp_path, 3, CONFIG)
        nodes = controller.nodes
        try:
            controller.commit(*topic_records([1, 2, 3], leader=1))
            leader = nodes[1].partition()
            assert leader.role is PartitionRole.LEADER
            assert nodes[2].partition().role is PartitionRole.FOLLOWER

            for i in range(5):
                assert await produce(leader, 3 + i, tag=f"a{i}") is ErrorCode.NONE
            end = leader.log_end_offset
            assert leader.high_watermark == end
            expected = log_bytes(leader.log)
            for node_id in (2, 3):
                assert log_bytes(nodes[node_id].partition().log) == expected
            # Followers learn the watermark on their next fetch.
            await eventually(
                lambda: all(nodes[n].partition().high_watermark == end for n in (2, 3))
            )

            # Follower 3 dies: after replica.lag.time.max.ms the leader drops it,
            # and an acks=all produce waiting on it completes once that commits.
            stopped_hw = nodes[3].partition().high_watermark
            await nodes[3].stop()
            del controller.nodes[3]
            waiting = asyncio.ensure_future(produce(leader, 2, tag="b"))
            await asyncio.wait_for(controller.isr_changed.wait(), 5)
            assert await waiting is ErrorCode.NONE
            assert controller.alter_requests[-1]["topics"][0]["partitions"][0]["new_isr"] == [1, 2]
            assert list(controller.registration().isr) == [1, 2]
            assert leader.in_sync_replicas == {1, 2}
            assert await produce(leader, 4, tag="c") is ErrorCode.NONE
            assert log_bytes(nodes[2].partition().log) == log_bytes(leader.log)

            # It comes back (same data dir): catches up and rejoins the ISR.
            controller.isr_changed.clear()
            node3 = Node(3, tmp_path / "node-3", CONFIG, controller)
            await node3.server.start()
            controller.nodes[3] = node3
            controller.apply(node3, tuple(controller.records))
            assert node3.partition().role is PartitionRole.FOLLOWER
            assert node3.partition().high_watermark == stopped_hw  # from the checkpoint
            await asyncio.wait_for(controller.isr_changed.wait(), 5)
            assert list(controller.registration().isr) == [1, 2, 3]
            assert log_bytes(node3.partition().log) == log_bytes(leader.log)
        finally:
            await stop_all(controller)

    run(scenario())


def test_acks_all_waits_for_every_isr_member(tmp_path: Path) -> None:
    async def scenario() -> None:
        slow = ReplicationConfig(
            replica_lag_time_max_ms=60_000,
            replica_fetch_wait_max_ms=100,
            replica_fetch_backoff_ms=50,
        )
        controller = await start_cluster(tmp_path, 2, slow)
        try:
            controller.commit(*topic_records([1, 2], leader=1))
            leader = controller.nodes[1].partition()
            assert await produce(leader, 1) is ErrorCode.NONE
            await controller.nodes[2].replicas.stop()  # the follower stops fetching
            result = leader.append_from_client(memoryview(make_batch(2)), required_acks=-1)
            outcome = await leader.wait_for_acks(result.last_offset + 1, 300)
            assert outcome is ErrorCode.REQUEST_TIMED_OUT
            assert leader.high_watermark == result.base_offset
        finally:
            await stop_all(controller)

    run(scenario())


def test_follower_truncates_a_diverging_suffix(tmp_path: Path) -> None:
    """Node 3 leads epoch 1 alone (its peers cannot reach it) and writes what
    nobody copies; node 1 leads epoch 2 from the shared prefix; node 3, now a
    follower, must cut its epoch-1 batches before copying epoch 2."""

    async def scenario() -> None:
        steady = ReplicationConfig(
            replica_lag_time_max_ms=60_000,
            replica_fetch_wait_max_ms=100,
            replica_fetch_backoff_ms=50,
        )
        controller = await start_cluster(tmp_path, 3, steady)
        nodes = controller.nodes
        try:
            controller.commit(*topic_records([1, 2, 3], leader=1))
            assert await produce(nodes[1].partition(), 3, tag="shared") is ErrorCode.NONE
            shared_end = nodes[1].partition().log_end_offset

            nodes[3].server.paused = True
            controller.commit(leader_change(3))  # epoch 1
            deposed = nodes[3].partition()
            assert deposed.role is PartitionRole.LEADER and deposed.leader_epoch == 1
            await produce(deposed, 2, acks=1, tag="lost")
            await produce(deposed, 2, acks=1, tag="lost")
            assert deposed.log_end_offset == shared_end + 4

            controller.commit(leader_change(1))  # epoch 2
            nodes[3].server.paused = False
            leader = nodes[1].partition()
            assert leader.leader_epoch == 2 and deposed.role is PartitionRole.FOLLOWER
            assert await produce(leader, 5, tag="new") is ErrorCode.NONE

            expected = log_bytes(leader.log)
            for node_id in (2, 3):
                assert log_bytes(nodes[node_id].partition().log) == expected
            assert [e for _, e in batch_epochs(deposed.log)] == [0, 2]
            assert (
                deposed.log.leader_epoch_cache.entries() == leader.log.leader_epoch_cache.entries()
            )
        finally:
            await stop_all(controller)

    run(scenario())
