"""Offsets committed inside a transaction by members of a live group (issue 36, bugs 1 and 2).

- A KIP-848 member (``group.protocol=consumer``) hands its group metadata (member
  id and member epoch) to ``send_offsets_to_transaction``; the coordinator checks
  the epoch as OffsetCommit does and accepts (Samsa answered ILLEGAL_GENERATION,
  so a consume-transform-produce loop aborted forever).
- aiokafka's ``send_offsets_to_transaction`` sends TxnOffsetCommit v0 (no member
  id, generation -1) while its classic group has live members; Kafka checks only
  commits that name a member and accepts (Samsa answered UNKNOWN_MEMBER_ID).

Each test runs the loop end to end with the real client and checks what the group
and a read_committed reader see afterwards.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

from .conftest import KIP848_SETTINGS

pytestmark = pytest.mark.integration

RECORDS = 20


@pytest.fixture(scope="module")
def txn_group_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("txn-groups") / "data", KIP848_SETTINGS) as proc:
        yield proc


def new_topics(bootstrap: str, *names: str, partitions: int = 2) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, partitions, 1) for n in names]).values():
        future.result(20)


def seed(bootstrap: str, topic: str, count: int, partitions: int = 2) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        p.produce(topic, value=b"in%d" % i, partition=i % partitions)
    assert p.flush(10) == 0


def read_committed_values(
    bootstrap: str, topic: str, want: int, partitions: int = 2
) -> list[bytes]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    deadline = time.monotonic() + 20
    try:
        while len(values) < want and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
    finally:
        c.close()
    return values


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int = 2) -> list[int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return [tp.offset for tp in tps]
    finally:
        c.close()


def test_a_kip848_member_commits_offsets_in_transactions(txn_group_broker: BrokerProcess) -> None:
    """confluent-kafka with group.protocol=consumer: consume, produce and commit the
    consumer's offsets in one transaction per batch, until the input is used up."""
    bootstrap = txn_group_broker.bootstrap
    source, sink = f"src-{uuid.uuid4().hex[:8]}", f"out-{uuid.uuid4().hex[:8]}"
    group = f"eos-{source}"
    new_topics(bootstrap, source, sink)
    seed(bootstrap, source, RECORDS)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"tx-{sink}", "linger.ms": 5}
    )
    producer.init_transactions(30)
    consumed = 0
    try:
        consumer.subscribe([source])
        deadline = time.monotonic() + 60
        while consumed < RECORDS and time.monotonic() < deadline:
            batch = [m for m in consumer.consume(10, 0.5) if m.error() is None]
            if not batch:
                continue
            producer.begin_transaction()
            for msg in batch:
                producer.produce(sink, value=b"out-" + msg.value(), partition=msg.partition())
            positions = consumer.position(consumer.assignment())
            try:
                producer.send_offsets_to_transaction(
                    positions, consumer.consumer_group_metadata(), 20
                )
            except KafkaException as exc:
                producer.abort_transaction(20)
                pytest.fail(f"send_offsets_to_transaction refused: {exc}")
            producer.commit_transaction(20)
            consumed += len(batch)
    finally:
        consumer.close()
    assert consumed == RECORDS
    assert sum(committed_offsets(bootstrap, group, source)) == RECORDS
    outputs = read_committed_values(bootstrap, sink, RECORDS)
    assert sorted(outputs) == sorted(b"out-in%d" % i for i in range(RECORDS))


def test_aiokafka_commits_offsets_in_a_transaction_while_its_group_has_members(
    txn_group_broker: BrokerProcess,
) -> None:
    """aiokafka's classic consumer is a live member; its transactional producer
    sends TxnOffsetCommit without member id or generation, as Kafka allows."""
    aiokafka = pytest.importorskip("aiokafka")
    bootstrap = txn_group_broker.bootstrap
    source, sink = f"aio-src-{uuid.uuid4().hex[:8]}", f"aio-out-{uuid.uuid4().hex[:8]}"
    group = f"aio-{source}"
    new_topics(bootstrap, source, sink)
    seed(bootstrap, source, RECORDS)

    async def loop() -> int:
        consumer = aiokafka.AIOKafkaConsumer(
            source,
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            isolation_level="read_committed",
        )
        producer = aiokafka.AIOKafkaProducer(
            bootstrap_servers=bootstrap, transactional_id=f"aio-tx-{sink}"
        )
        await consumer.start()
        await producer.start()
        done = 0
        try:
            deadline = time.monotonic() + 60
            while done < RECORDS and time.monotonic() < deadline:
                batches: dict[Any, list[Any]] = await consumer.getmany(timeout_ms=500)
                if not batches:
                    continue
                async with producer.transaction():
                    offsets = {}
                    for tp, msgs in batches.items():
                        for msg in msgs:
                            await producer.send(sink, b"out-" + msg.value, partition=tp.partition)
                        offsets[tp] = msgs[-1].offset + 1
                        done += len(msgs)
                    await producer.send_offsets_to_transaction(offsets, group)
        finally:
            await producer.stop()
            await consumer.stop()
        return done

    consumed = asyncio.run(asyncio.wait_for(loop(), 90))
    assert consumed == RECORDS
    assert sum(committed_offsets(bootstrap, group, source)) == RECORDS
    outputs = read_committed_values(bootstrap, sink, RECORDS)
    assert sorted(outputs) == sorted(b"out-in%d" % i for i in range(RECORDS))
