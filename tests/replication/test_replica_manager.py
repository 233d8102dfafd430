"""ReplicaManager: metadata deltas, the leader-side request API, parked fetches, checkpoints."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests.replication.helpers import ManualClock, make_batch

from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode, KafkaError
from samsa.net import ChannelPool
from samsa.protocol.metadata_records import MetadataRecord, make_record
from samsa.replication import FetchWaiter, ReplicaManager, ReplicationConfig
from samsa.replication.hw_checkpoint import REPLICATION_OFFSET_CHECKPOINT
from samsa.replication.partition import PartitionRole
from samsa.storage.files import io_faults
from samsa.storage.log_manager import LogManager
from samsa.storage.topic_config.log_config import LogConfig

T = TypeVar("T")
TOPIC = "orders"
TOPIC_ID = uuid.uuid5(uuid.NAMESPACE_OID, TOPIC).bytes


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 10))


def broker(node_id: int, port: int = 9092, **fields: Any) -> MetadataRecord:
    return make_record(
        "RegisterBrokerRecord",
        broker_id=node_id,
        incarnation_id=uuid.UUID(int=node_id).bytes,
        broker_epoch=10 + node_id,
        end_points=[
            {"name": "REPLICATION", "host": f"h{node_id}", "port": port, "security_protocol": 0}
        ],
        fenced=fields.get("fenced", False),
    )


def partition_record(index: int, replicas: list[int], leader: int) -> MetadataRecord:
    return make_record(
        "PartitionRecord",
        topic_id=TOPIC_ID,
        partition_id=index,
        replicas=replicas,
        isr=replicas,
        leader=leader,
        leader_epoch=0,
        partition_epoch=0,
    )


class Harness:
    def __init__(self, tmp_path: Path, node_id: int = 1, channels: bool = True) -> None:
        self.clock = ManualClock()
        self.image = MetadataImage()
        self.log_manager = LogManager(tmp_path, LogConfig(), clock=self.clock)
        self.channels = ChannelPool() if channels else None
        self.manager = ReplicaManager(
            self.log_manager,
            self.clock,
            node_id=node_id,
            config=ReplicationConfig(),
            channels=self.channels,
            inter_broker_listener="REPLICATION",
        )

    def commit(self, *records: MetadataRecord) -> None:
        delta = MetadataDelta(self.image)
        for record in records:
            delta.replay(record)
        self.manager.apply_delta(delta, self.image, self.clock())

    async def close(self) -> None:
        await self.manager.stop()
        if self.channels is not None:
            await self.channels.close()
        self.log_manager.close()


def test_delta_makes_leaders_and_followers_and_starts_fetching(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path)
        try:
            h.commit(
                broker(1),
                broker(2, port=9200),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1, 2], leader=1),
                partition_record(1, [2, 1], leader=2),
                partition_record(2, [2, 3], leader=2),
            )
            led, followed = h.manager.get(TOPIC, 0), h.manager.get(TOPIC, 1)
            assert led is not None and led.role is PartitionRole.LEADER
            assert led.topic_id == TOPIC_ID
            assert followed is not None and followed.role is PartitionRole.FOLLOWER
            assert h.manager.get(TOPIC, 2) is None  # not a replica here
            assert h.channels is not None and h.channels.address(2) == ("h2", 9200)
            fetchers = h.manager.fetcher_manager
            assert fetchers is not None and fetchers.partitions() == [(TOPIC, 1)]
            # The follower becomes leader: its fetcher stops.
            h.commit(
                make_record("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=1, leader=1)
            )
            assert followed.role is PartitionRole.LEADER and followed.leader_epoch == 1
            assert fetchers.partitions() == []
            # Reassigned away: stopped and deleted.
            h.commit(
                make_record(
                    "PartitionChangeRecord",
                    topic_id=TOPIC_ID,
                    partition_id=0,
                    replicas=[2, 3],
                    isr=[2, 3],
                    leader=2,
                )
            )
            assert h.manager.get(TOPIC, 0) is None
            assert led.role is PartitionRole.STOPPED
            assert not (tmp_path / f"{TOPIC}-0").exists()
        finally:
            await h.close()

    run(scenario())


def test_topic_deletion_deletes_the_logs(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            h.commit(
                broker(1),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1], leader=1),
            )
            assert (tmp_path / f"{TOPIC}-0").exists()
            h.commit(make_record("RemoveTopicRecord", topic_id=TOPIC_ID))
            assert h.manager.get(TOPIC, 0) is None
            assert not (tmp_path / f"{TOPIC}-0").exists()
        finally:
            await h.close()

    run(scenario())


def test_fetch_and_epoch_answers_for_partitions_not_led_here(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path)
        try:
            h.commit(
                broker(1),
                broker(2),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1, 2], leader=1),
                partition_record(1, [2, 1], leader=2),
                partition_record(2, [2, 3], leader=2),
            )
            request = {"partition": 1, "fetch_offset": 0, "current_leader_epoch": 0}
            entry = h.manager.read_fetch_partition(
                TOPIC, request, replica_id=-1, max_bytes=100, min_one=True, now_ms=h.clock()
            )
            assert entry["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert entry["current_leader"] == {"leader_id": 2, "leader_epoch": 0}
            for index, code in (
                (2, ErrorCode.NOT_LEADER_OR_FOLLOWER),
                (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ):
                entry = h.manager.read_fetch_partition(
                    TOPIC,
                    {"partition": index, "fetch_offset": 0},
                    replica_id=-1,
                    max_bytes=100,
                    min_one=True,
                    now_ms=h.clock(),
                )
                assert entry["error_code"] == code and entry["records"] == b""
            leader = h.manager.get(TOPIC, 0)
            assert leader is not None
            leader.append_from_client(memoryview(make_batch(4)))
            entry = h.manager.read_fetch_partition(
                TOPIC,
                {"partition": 0, "fetch_offset": 9},
                replica_id=-1,
                max_bytes=100,
                min_one=True,
                now_ms=h.clock(),
            )
            assert entry["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE
            assert (entry["high_watermark"], entry["log_start_offset"]) == (0, 0)
            answer = h.manager.offset_for_leader_epoch(
                {
                    "replica_id": -2,
                    "topics": [
                        {
                            "topic": TOPIC,
                            "partitions": [
                                {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0},
                                {"partition": 0, "current_leader_epoch": 3, "leader_epoch": 0},
                                {"partition": 1, "current_leader_epoch": 0, "leader_epoch": 0},
                            ],
                        }
                    ],
                }
            )
            results = answer["topics"][0]["partitions"]
            assert (
                results[0]["error_code"],
                results[0]["leader_epoch"],
                results[0]["end_offset"],
            ) == (
                0,
                0,
                4,
            )
            assert results[1]["error_code"] == ErrorCode.UNKNOWN_LEADER_EPOCH
            assert results[2]["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
        finally:
            await h.close()

    run(scenario())


def test_consumers_wake_on_the_high_watermark_followers_on_appends(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            h.commit(
                broker(1),
                broker(2),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1, 2], leader=1),
            )
            partition = h.manager.get(TOPIC, 0)
            assert partition is not None
            consumer = FetchWaiter(1)
            follower = FetchWaiter(1, from_follower=True)
            keys = [(TOPIC, 0)]
            h.manager.park(keys, consumer)
            h.manager.park(keys, follower)
            assert h.manager.parked_fetches() == 2
            end = partition.append_from_client(memoryview(make_batch(3))).last_offset + 1
            assert follower.future.done() and not consumer.future.done()
            partition.read_for_follower(
                2,
                end,
                current_leader_epoch=0,
                last_fetched_epoch=0,
                follower_log_start_offset=0,
                max_bytes=100,
                min_one=True,
                now_ms=h.clock(),
            )
            assert partition.high_watermark == end and consumer.future.done()
            h.manager.unpark(keys, consumer)
            h.manager.unpark(keys, follower)
            assert h.manager.parked_fetches() == 0
        finally:
            await h.close()

    run(scenario())


def test_taking_over_a_partition_answers_its_followers_parked_fetches(tmp_path: Path) -> None:
    """A follower whose Fetch is parked here for other partitions must hear at
    once that it has a new one to fetch (fresh_leaderships); a broker that
    is not a replica of the new partition keeps waiting.  A Fetch that leaves
    the new partition out is answered without parking, until the follower
    names it or the Fetch's max wait has passed."""

    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            h.commit(
                broker(1),
                broker(2),
                broker(3),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1, 2, 3], leader=1),
            )
            old = [(TOPIC, 0)]
            follower, bystander = FetchWaiter(1, replica_id=2), FetchWaiter(1, replica_id=3)
            h.manager.park(old, follower)
            h.manager.park(old, bystander)
            h.commit(partition_record(1, [1, 2], leader=1))
            assert follower.future.done() and not bystander.future.done()
            h.manager.unpark(old, follower)
            h.manager.unpark(old, bystander)
            assert h.manager.parked_fetches() == 0

            assert h.manager.follower_must_refetch(2, old, 500)
            assert not h.manager.follower_must_refetch(3, old, 500)
            assert not h.manager.follower_must_refetch(2, [*old, (TOPIC, 1)], 500)
            assert not h.manager.follower_must_refetch(2, old, 500)  # it named it once

            h.commit(partition_record(2, [1, 2], leader=1))
            h.clock.advance(501)
            assert not h.manager.follower_must_refetch(2, old, 500)  # the window passed
        finally:
            await h.close()

    run(scenario())


def test_standalone_partitions_keep_todays_behaviour(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            partition = h.manager.create(TOPIC, 0, {})
            assert partition.role is PartitionRole.STANDALONE
            waiter = FetchWaiter(1)
            h.manager.park([(TOPIC, 0)], waiter)
            result = partition.append_from_client(memoryview(make_batch(2)), required_acks=-1)
            assert waiter.future.done()
            assert partition.high_watermark == 2 and result.base_offset == 0
            assert await partition.wait_for_acks(2, 0) is ErrorCode.NONE
            assert partition.read_for_consumer(0, 1000, current_leader_epoch=7).records
        finally:
            await h.close()

    run(scenario())


def test_high_watermarks_survive_a_restart(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        h.commit(
            broker(1),
            broker(2),
            make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
            partition_record(0, [1, 2], leader=1),
        )
        partition = h.manager.get(TOPIC, 0)
        assert partition is not None
        partition.append_from_client(memoryview(make_batch(3)))
        partition.read_for_follower(
            2,
            2,
            current_leader_epoch=0,
            last_fetched_epoch=-1,
            follower_log_start_offset=0,
            max_bytes=100,
            min_one=True,
            now_ms=h.clock(),
        )
        assert partition.high_watermark == 2
        await h.close()
        assert (tmp_path / REPLICATION_OFFSET_CHECKPOINT).read_text().splitlines() == [
            "0",
            "1",
            f"{TOPIC} 0 2",
        ]
        again = Harness(tmp_path, channels=False)
        try:
            again.manager.load_existing()
            again.commit(
                broker(1),
                broker(2),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1, 2], leader=1),
            )
            restarted = again.manager.get(TOPIC, 0)
            assert restarted is not None and restarted.role is PartitionRole.LEADER
            assert restarted.log_end_offset == 3
            assert restarted.high_watermark == 2  # not 3: offset 2 was never committed
        finally:
            await again.close()

    run(scenario())


def test_fenced_brokers_may_not_join_the_isr(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            h.commit(
                broker(1),
                broker(2, fenced=True),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                make_record(
                    "PartitionRecord",
                    topic_id=TOPIC_ID,
                    partition_id=0,
                    replicas=[1, 2],
                    isr=[1],
                    leader=1,
                    leader_epoch=0,
                    partition_epoch=0,
                ),
            )
            partition = h.manager.get(TOPIC, 0)
            assert partition is not None
            partition.read_for_follower(
                2,
                0,
                current_leader_epoch=0,
                last_fetched_epoch=-1,
                follower_log_start_offset=0,
                max_bytes=100,
                min_one=True,
                now_ms=h.clock(),
            )
            leader_state = partition.leader_state
            assert leader_state is not None and not leader_state.isr_state.is_inflight
            h.commit(make_record("UnfenceBrokerRecord", id=2, epoch=12))
            partition.read_for_follower(
                2,
                0,
                current_leader_epoch=0,
                last_fetched_epoch=-1,
                follower_log_start_offset=0,
                max_bytes=100,
                min_one=True,
                now_ms=h.clock(),
            )
            assert leader_state.isr_state.is_inflight  # expansion proposed
        finally:
            await h.close()

    run(scenario())


def test_whole_image_stops_local_logs_it_does_not_place_here(tmp_path: Path) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            stray = h.manager.create("gone", 0, {})
            stray.append_from_client(memoryview(make_batch(1)))
            image = MetadataImage()
            for record in (
                broker(1),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                partition_record(0, [1], leader=1),
            ):
                image.replay(record)
            h.manager.apply_image(image, h.clock())
            led = h.manager.get(TOPIC, 0)
            assert led is not None and led.role is PartitionRole.LEADER
            assert stray.role is PartitionRole.STOPPED
            assert (tmp_path / "gone-0").exists()  # kept for the operator
        finally:
            await h.close()

    run(scenario())


def test_config_reads_kafkas_keys_and_keeps_defaults_for_the_rest() -> None:
    values = {"replica.lag.time.max.ms": "1234", "num.replica.fetchers": 3}

    def lookup(key: str) -> object:
        return values[key]

    config = ReplicationConfig.from_lookup(lookup)
    assert config.replica_lag_time_max_ms == 1234
    assert config.num_replica_fetchers == 3
    assert config.replica_fetch_wait_max_ms == ReplicationConfig().replica_fetch_wait_max_ms


def test_a_failed_log_dir_answers_storage_error_before_any_sequence_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kafka checks the dir first: an idempotent producer whose batch met the failure
    must hear KAFKA_STORAGE_ERROR for the next one too, not OUT_OF_ORDER_SEQUENCE_NUMBER
    (its sequence did not advance), which would make it bump its epoch or fail."""
    rules = tmp_path / "io-faults"
    monkeypatch.setattr(io_faults, "_rules_file", str(rules))

    async def scenario() -> None:
        h = Harness(tmp_path / "data", channels=False)
        try:
            partition = h.manager.create(TOPIC, 0, {})
            pid = {"producer_id": 7, "producer_epoch": 0}
            partition.append_from_client(memoryview(make_batch(2, base_sequence=0, **pid)))
            rules.write_text(f"write {tmp_path / 'data'}/\n")
            for sequence in (2, 3):
                batch = make_batch(1, base_sequence=sequence, **pid)
                with pytest.raises(KafkaError) as refused:
                    partition.append_from_client(memoryview(batch))
                assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
            with pytest.raises(KafkaError) as unread:
                partition.read_for_consumer(0, 1000, current_leader_epoch=0)
            assert unread.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        finally:
            rules.unlink()
            await h.close()

    run(scenario())
