"""aiokafka against a real Samsa broker process."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from tests.integration.conftest import stored_batches

from samsa.protocol.batches.compression import Compression
from samsa.testing import BrokerProcess

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]


async def _roundtrip(bootstrap: str, topic: str, codec: str | None, idempotent: bool) -> list:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, 1, 1)])
    assert topic in await admin.list_topics()
    await admin.close()

    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, compression_type=codec, enable_idempotence=idempotent
    )
    await producer.start()
    sent = []
    try:
        for i in range(50):
            key = None if i % 4 == 0 else b"k%d" % i
            value = None if i % 10 == 3 else b"aio-%d" % i * 5
            headers = [("n", b"%d" % i)]
            await producer.send(topic, value=value, key=key, headers=headers)
            sent.append((key, value, headers))
        await producer.flush()
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    got = []
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + 20
        while len(got) < len(sent) and time.monotonic() < deadline:
            batch = await consumer.getmany(tp, timeout_ms=500)
            got.extend(batch.get(tp, []))
        assert await consumer.end_offsets([tp]) == {tp: len(sent)}
    finally:
        await consumer.stop()
    assert [(r.key, r.value, list(r.headers)) for r in got] == sent
    return got


@pytest.mark.parametrize("codec", CODECS)
def test_produce_consume(broker: BrokerProcess, topic_name: str, codec: str | None) -> None:
    asyncio.run(_roundtrip(broker.bootstrap, topic_name, codec, idempotent=False))
    expected = Compression.NONE if codec is None else Compression[codec.upper()]
    assert {h.compression for h in stored_batches(broker.data_dir, topic_name)} == {expected}


def test_idempotent_producer(broker: BrokerProcess, topic_name: str) -> None:
    asyncio.run(_roundtrip(broker.bootstrap, topic_name, "lz4", idempotent=True))
    assert all(h.producer_id >= 0 for h in stored_batches(broker.data_dir, topic_name))


def test_delete_topic(broker: BrokerProcess, topic_name: str) -> None:
    async def run() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic_name, 2, 1)])
            await admin.delete_topics([topic_name])
            assert topic_name not in await admin.list_topics()
        finally:
            await admin.close()

    asyncio.run(run())


def test_large_record_and_offset_lookups(broker: BrokerProcess, topic_name: str) -> None:
    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=2_000_000)
        await producer.start()
        base = int(time.time() * 1000) - 60_000
        value = bytes(range(256)) * 3600  # ~900 KB
        try:
            for i in range(4):
                await producer.send_and_wait(
                    topic_name, value=b"small-%d" % i, timestamp_ms=base + i * 1000
                )
            await producer.send_and_wait(topic_name, value=value, timestamp_ms=base + 10_000)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tp = TopicPartition(topic_name, 0)
            assert await consumer.beginning_offsets([tp]) == {tp: 0}
            assert await consumer.end_offsets([tp]) == {tp: 5}
            found = await consumer.offsets_for_times({tp: base + 1500})
            assert found[tp].offset == 2
            consumer.assign([tp])
            consumer.seek(tp, 4)
            record = await consumer.getone()
            assert record.offset == 4 and record.value == value
        finally:
            await consumer.stop()

    asyncio.run(run())
