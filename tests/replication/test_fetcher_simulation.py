"""A follower converging on its leader with no sockets: FetcherState driven by hand.

Every request and response goes through the Kafka wire codec (Fetch v12,
OffsetForLeaderEpoch v4), the leader answers through the same code its Fetch
handler calls, and the actions run against a real follower log -- the way a
deterministic simulator drives replication, with the clock in the test's hands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.replication.helpers import (
    TOPIC,
    ManualClock,
    batch_epochs,
    log_bytes,
    make_batch,
    make_partition,
    registration,
)

from samsa.errors import ErrorCode
from samsa.protocol.api import decode_message, encode_message
from samsa.replication.config import ReplicationConfig
from samsa.replication.fetcher.local_followers import LocalFollowers
from samsa.replication.fetcher.state import FetcherState
from samsa.replication.fetcher.types import (
    AppendRecords,
    FetcherAction,
    InitialFetchState,
    TruncateFullyAndStartAt,
    TruncateTo,
)
from samsa.replication.leader.fetch_responses import (
    epoch_end_offset_response,
    fetch_partition_response,
)
from samsa.replication.partition import Partition

KEY = (TOPIC, 0)


def wire(api_key: int, version: int, body: dict[str, Any], request: bool) -> dict[str, Any]:
    return decode_message(
        api_key, version, encode_message(api_key, version, body, request), request
    )


def answer_fetch(leader: Partition, body: dict[str, Any], now_ms: int) -> dict[str, Any]:
    request = wire(1, 12, body, True)
    topics = []
    for topic in request["topics"]:
        parts = [
            fetch_partition_response(
                leader,
                p,
                replica_id=request["replica_id"],
                max_bytes=p["partition_max_bytes"],
                min_one=True,
                now_ms=now_ms,
            )
            for p in topic["partitions"]
        ]
        topics.append({"topic": topic["topic"], "partitions": parts})
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": topics}
    return wire(1, 12, body, False)


def answer_epochs(leader: Partition, body: dict[str, Any]) -> dict[str, Any]:
    request = wire(23, 4, body, True)
    topics = [
        {
            "topic": t["topic"],
            "partitions": [
                epoch_end_offset_response(leader, p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                for p in t["partitions"]
            ],
        }
        for t in request["topics"]
    ]
    return wire(23, 4, {"throttle_time_ms": 0, "topics": topics}, False)


def execute(actions: list[FetcherAction], followers: LocalFollowers) -> list[str]:
    done = []
    for action in actions:
        if isinstance(action, AppendRecords):
            followers.append_fetched(
                action.tp,
                action.records,
                action.leader_high_watermark,
                action.leader_log_start_offset,
            )
            done.append("append" if len(action.records) else "idle")
        elif isinstance(action, TruncateTo):
            followers.truncate_to(action.tp, action.offset)
            done.append(f"truncate {action.offset}")
        elif isinstance(action, TruncateFullyAndStartAt):
            followers.truncate_fully_and_start_at(action.tp, action.offset)
            done.append(f"restart {action.offset}")
    return done


def converge(
    leader: Partition, follower: Partition, config: ReplicationConfig, clock: ManualClock
) -> list[str]:
    followers = LocalFollowers({KEY: follower})
    state = FetcherState(2, 1, config)
    state.add_partitions(
        {KEY: InitialFetchState(1, follower.leader_epoch, follower.high_watermark)}, followers
    )
    history: list[str] = []
    for _ in range(20):
        history += execute(state.truncate_without_epochs(followers), followers)
        epoch_plan = state.build_epoch_request(clock(), followers)
        if epoch_plan is not None:
            response = answer_epochs(leader, epoch_plan.body)
            history += execute(
                state.handle_epoch_response(epoch_plan, response, clock(), followers), followers
            )
        plan = state.build_fetch(clock(), followers)
        if plan is not None:
            response = answer_fetch(leader, plan.body, clock())
            history += execute(
                state.handle_fetch_response(plan, response, clock(), followers), followers
            )
        if (
            follower.log_end_offset == leader.log_end_offset == leader.high_watermark
            and follower.high_watermark == leader.high_watermark
        ):
            return history
        clock.advance(10)
    raise AssertionError(f"no convergence: {history}")


def diverged(tmp_path: Path, clock: ManualClock) -> tuple[Partition, Partition]:
    """Leader epochs 0, 2, 4; the follower wrote epochs 1 and 3 while it led."""
    one = make_partition(tmp_path, clock, name="one")
    two = make_partition(tmp_path, clock, node_id=2, name="two")
    pe = iter(range(100))

    def lead(p: Partition, node: int, epoch: int, batches: int) -> None:
        p.make_leader(
            registration(
                replicas=(1, 2), leader=node, leader_epoch=epoch, partition_epoch=next(pe)
            ),
            clock(),
        )
        for i in range(batches):
            p.append_from_client(memoryview(make_batch(2, tag=f"e{epoch}-{i}")))

    lead(one, 1, 0, 2)
    two.make_follower(
        registration(replicas=(1, 2), leader=1, leader_epoch=0, partition_epoch=0), clock()
    )
    data = log_bytes(one.log)
    two.append_as_follower(data)  # shared prefix: offsets 0-3, epoch 0
    lead(two, 2, 1, 2)  # offsets 4-7, epoch 1 (only on two)
    lead(two, 2, 3, 1)  # offsets 8-9, epoch 3 (only on two)
    lead(one, 1, 2, 1)  # offsets 4-5, epoch 2 (only on one)
    lead(one, 1, 4, 2)  # offsets 6-9, epoch 4
    two.make_follower(
        registration(replicas=(1, 2), leader=1, leader_epoch=4, partition_epoch=next(pe)), clock()
    )
    return one, two


def test_follower_walks_back_epoch_by_epoch_then_copies(tmp_path: Path) -> None:
    clock = ManualClock()
    leader, follower = diverged(tmp_path, clock)
    assert follower.log_end_offset == leader.log_end_offset == 10  # same length, different data
    history = converge(leader, follower, ReplicationConfig(), clock)
    # Epoch 3 is unknown to the leader -> back to the end of our epoch 1 (8), still
    # unknown -> the end of epoch 0 (4), where both agree; then copy.
    assert history[:2] == ["truncate 8", "truncate 4"]
    assert "append" in history
    assert log_bytes(follower.log) == log_bytes(leader.log)
    assert [e for _, e in batch_epochs(follower.log)] == [0, 0, 2, 4, 4]
    assert follower.log.leader_epoch_cache.entries() == leader.log.leader_epoch_cache.entries()


def test_same_convergence_through_offset_for_leader_epoch(tmp_path: Path) -> None:
    clock = ManualClock()
    leader, follower = diverged(tmp_path, clock)
    history = converge(leader, follower, ReplicationConfig(truncate_on_fetch=False), clock)
    assert history[:2] == ["truncate 8", "truncate 4"]
    assert log_bytes(follower.log) == log_bytes(leader.log)


def test_a_new_follower_copies_everything_in_order(tmp_path: Path) -> None:
    clock = ManualClock()
    leader = make_partition(tmp_path, clock, name="one", max_message_bytes=1 << 20)
    leader.make_leader(registration(replicas=(1, 2)), clock())
    for i in range(30):
        leader.append_from_client(memoryview(make_batch(1 + i % 4, tag=f"n{i}")))
    follower = make_partition(tmp_path, clock, node_id=2, name="two")
    follower.make_follower(registration(replicas=(1, 2)), clock())
    converge(leader, follower, ReplicationConfig(replica_fetch_max_bytes=300), clock)
    assert log_bytes(follower.log) == log_bytes(leader.log)
    assert follower.high_watermark == leader.high_watermark == leader.log_end_offset
