"""confluent-kafka (librdkafka) against a real Samsa broker process."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from tests.integration.conftest import stored_batches

from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE
from samsa.testing import BrokerProcess

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def admin(broker: BrokerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def create_topic(broker: BrokerProcess, name: str, partitions: int = 1, **configs: str) -> None:
    client = admin(broker)
    client.create_topics([NewTopic(name, partitions, 1, config=configs)])[name].result(10)


def consume_all(
    broker: BrokerProcess, topic: str, count: int, partition: int = 0, offset: int = 0
) -> list:
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "unused", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, partition, offset)])
    messages = []
    deadline = time.monotonic() + 20
    while len(messages) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        messages.append(msg)
    consumer.close()
    return messages


def test_create_list_delete_topics(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name, 3)
    listed = admin(broker).list_topics(timeout=10)
    assert topic_name in listed.topics
    assert len(listed.topics[topic_name].partitions) == 3
    assert listed.controller_id == listed.orig_broker_id or listed.controller_id >= 0
    client = admin(broker)
    client.delete_topics([topic_name])[topic_name].result(10)
    assert topic_name not in admin(broker).list_topics(timeout=10).topics


def test_create_existing_topic_fails(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name)
    with pytest.raises(KafkaException) as info:
        client = admin(broker)
        client.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    assert "TOPIC_ALREADY_EXISTS" in str(info.value)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("idempotent", [False, True])
def test_produce_consume_every_codec(
    broker: BrokerProcess, topic_name: str, codec: str, idempotent: bool
) -> None:
    create_topic(broker, topic_name)
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "compression.type": codec,
            "enable.idempotence": idempotent,
            "linger.ms": 5,
        }
    )
    sent = []
    for i in range(200):
        key = None if i % 7 == 0 else f"key-{i}".encode()
        value = None if i % 11 == 0 else (f"value-{i}-" * 20).encode()
        headers = [("h", f"{i}".encode()), ("empty", None)] if i % 3 == 0 else None
        producer.produce(topic_name, value=value, key=key, headers=headers)
        sent.append((key, value, headers))
    assert producer.flush(15) == 0

    got = consume_all(broker, topic_name, len(sent))
    assert [(m.key(), m.value()) for m in got] == [(k, v) for k, v, _ in sent]
    assert [m.offset() for m in got] == list(range(len(sent)))
    for m, (_, _, headers) in zip(got, sent, strict=True):
        if headers:
            assert m.headers() == headers

    batches = stored_batches(broker.data_dir, topic_name)
    assert batches, "no batches on disk"
    expected = Compression[codec.upper()]
    # librdkafka sends a batch uncompressed when compressing would not shrink it
    # (a lone record with no key or value, say): the broker stores what it got.
    assert expected in {h.compression for h in batches}
    for h in batches:
        if h.compression is not expected:
            assert h.compression is Compression.NONE and h.size - BATCH_HEADER_SIZE < 128, h
    if idempotent:
        assert all(h.producer_id >= 0 for h in batches)


def test_large_record(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "message.max.bytes": 1_000_000})
    value = bytes(range(256)) * 3600  # ~900 KB
    producer.produce(topic_name, value=value, key=b"big")
    assert producer.flush(15) == 0
    [msg] = consume_all(broker, topic_name, 1)
    assert msg.value() == value


def test_record_over_topic_limit_is_refused(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name, **{"max.message.bytes": "1000"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": "none"})
    errors = []
    producer.produce(topic_name, value=b"x" * 5000, on_delivery=lambda err, msg: errors.append(err))
    producer.produce(topic_name, value=b"small", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(15)
    assert any(e is not None and "MSG_SIZE_TOO_LARGE" in e.name() for e in errors)


def test_list_offsets(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 50})
    base = int(time.time() * 1000) - 100_000
    for i in range(10):
        producer.produce(topic_name, value=b"v%d" % i, timestamp=base + i * 1000)
    producer.flush(10)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "lo"})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
    assert (low, high) == (0, 10)
    [found] = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 4500)], timeout=10)
    assert found.offset == 5
    [none] = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 10**8)], timeout=10)
    assert none.offset == -1
    consumer.close()


def test_metadata_auto_creates_topic(broker: BrokerProcess, topic_name: str) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(topic_name, value=b"auto")
    assert producer.flush(15) == 0
    assert topic_name in admin(broker).list_topics(timeout=10).topics


def test_offset_out_of_range_resets_to_earliest(broker: BrokerProcess, topic_name: str) -> None:
    # A fetch past the log end answers OFFSET_OUT_OF_RANGE with an empty (not
    # null) record set: librdkafka rejects a null one as a parse failure and
    # retries forever instead of applying auto.offset.reset.
    create_topic(broker, topic_name)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(3):
        producer.produce(topic_name, f"v{i}".encode())
    assert producer.flush(10) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic_name, 0, 1000)])
    values = []
    deadline = time.monotonic() + 20
    while len(values) < 3 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            continue
        values.append(msg.value())
    consumer.close()
    assert values == [b"v0", b"v1", b"v2"]
