"""Fetch sessions (KIP-227) on a real broker: on the wire, and with clients that use them or not."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka import AIOKafkaConsumer
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaPythonPartition
from tests.integration.test_bad_input import RawClient
from tests.integration.test_client_contract import _create, _produce

from samsa.errors import ErrorCode
from samsa.testing import BrokerProcess

PARTITIONS = 3


def fetch_body(
    session_id: int,
    epoch: int,
    topic: str,
    offsets: dict[int, int],
    forget: list[int] | None = None,
) -> dict[str, Any]:
    """A consumer's Fetch naming ``offsets`` (partition -> fetch offset) of ``topic``."""
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": session_id,
        "session_epoch": epoch,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                    for p, offset in offsets.items()
                ],
            }
        ]
        if offsets
        else [],
        "forgotten_topics_data": [{"topic": topic, "partitions": forget}] if forget else [],
        "rack_id": "",
    }


def fetch(client: RawClient, session_id: int, epoch: int, topic: str, offsets: dict[int, int]):
    return client.call(1, 11, fetch_body(session_id, epoch, topic, offsets))


def answered(response: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {p["partition_index"]: p for t in response["responses"] for p in t["partitions"]}


def test_incremental_fetches_name_and_answer_only_what_changed(
    broker: BrokerProcess, topic_name: str
) -> None:
    client = RawClient(broker.bootstrap)
    _create(client, topic_name, PARTITIONS)
    full = fetch(client, 0, 0, topic_name, dict.fromkeys(range(PARTITIONS), 0))
    session_id = full["session_id"]
    assert full["error_code"] == 0 and session_id != 0
    assert set(answered(full)) == set(range(PARTITIONS))

    idle = fetch(client, session_id, 1, topic_name, {})
    assert idle["error_code"] == 0 and idle["session_id"] == session_id
    assert answered(idle) == {}

    assert _produce(client, topic_name, [b"a", b"b"], partition=1)["error_code"] == 0
    news = answered(fetch(client, session_id, 2, topic_name, {}))
    assert set(news) == {1} and news[1]["high_watermark"] == 2 and news[1]["records"]
    # The client moves partition 1's offset on and names only that partition:
    # a named partition is always answered, the others only with news.
    moved = answered(fetch(client, session_id, 3, topic_name, {1: 2}))
    assert set(moved) == {1} and not moved[1]["records"] and moved[1]["high_watermark"] == 2
    assert answered(fetch(client, session_id, 4, topic_name, {})) == {}

    stale = fetch(client, session_id, 4, topic_name, {})
    assert stale["error_code"] == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    unknown = fetch(client, session_id + 1, 1, topic_name, {})
    assert unknown["error_code"] == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    sessionless = fetch(client, session_id, -1, topic_name, {0: 0})
    assert sessionless["session_id"] == 0 and set(answered(sessionless)) == {0}
    closed = fetch(client, session_id, 6, topic_name, {})
    assert closed["error_code"] == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    client.close()


def produce(broker: BrokerProcess, topic: str, values: range) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in values:
        producer.produce(topic, b"v%d" % i, partition=i % PARTITIONS)
    assert producer.flush(20) == 0


def test_kafka_python_consumer_keeps_reading_through_its_session(
    broker: BrokerProcess, topic_name: str
) -> None:
    """kafka-python opens a session and fetches incrementally; records produced
    between its polls all arrive, each partition in order."""
    _create(RawClient(broker.bootstrap), topic_name, PARTITIONS)
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    )
    consumer.assign([KafkaPythonPartition(topic_name, p) for p in range(PARTITIONS)])
    got: list[bytes] = []
    for start in (0, 30, 60):
        produce(broker, topic_name, range(start, start + 30))
        deadline = time.monotonic() + 20
        while len(got) < start + 30 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                got.extend(r.value for r in records)
    handler = next(iter(consumer._fetcher._session_handlers.values()))
    consumer.close()
    assert sorted(got, key=lambda v: int(v[1:])) == [b"v%d" % i for i in range(90)]
    for p in range(PARTITIONS):
        mine = [int(v[1:]) for v in got if int(v[1:]) % PARTITIONS == p]
        assert mine == sorted(mine)
    metadata = handler.next_metadata
    assert metadata.session_id != 0 and metadata.epoch > 1  # sessions were used


def test_sessionless_clients_still_read_everything(broker: BrokerProcess, topic_name: str) -> None:
    _create(RawClient(broker.bootstrap), topic_name, PARTITIONS)
    produce(broker, topic_name, range(30))
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": topic_name,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic_name])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(values) < 30 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            values.append(message.value())
    consumer.close()
    assert sorted(values) == sorted(b"v%d" % i for i in range(30))

    async def with_aiokafka() -> int:
        aio = AIOKafkaConsumer(
            topic_name, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest"
        )
        await aio.start()
        try:
            count = 0
            end = time.monotonic() + 30
            while count < 30 and time.monotonic() < end:
                batches = await aio.getmany(timeout_ms=500)
                count += sum(len(records) for records in batches.values())
            return count
        finally:
            await aio.stop()

    assert asyncio.run(with_aiokafka()) == 30
