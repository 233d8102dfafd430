"""kafka-python 3 (idempotent producer by default) against a real Samsa broker."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from tests.integration.conftest import stored_batches

from samsa.protocol.batches.compression import Compression
from samsa.testing import BrokerProcess

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]


def admin(broker: BrokerProcess) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=broker.bootstrap)


def consume(broker: BrokerProcess, topic: str, count: int) -> list:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    out: list = []
    deadline = time.monotonic() + 20
    while len(out) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            out.extend(records)
    consumer.close()
    return out


def test_admin_topics(broker: BrokerProcess, topic_name: str) -> None:
    client = admin(broker)
    client.create_topics([NewTopic(topic_name, 2, 1)])
    assert topic_name in client.list_topics()
    [described] = client.describe_topics([topic_name])
    assert len(described["partitions"]) == 2
    client.delete_topics([topic_name])
    assert topic_name not in client.list_topics()
    client.close()


@pytest.mark.parametrize("codec", CODECS)
def test_produce_consume_default_idempotent(
    broker: BrokerProcess, topic_name: str, codec: str | None
) -> None:
    admin(broker).create_topics([NewTopic(topic_name, 1, 1)])
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=5
    )
    sent = []
    for i in range(100):
        key = None if i % 5 == 0 else b"k%d" % i
        value = None if i % 9 == 0 and key is not None else b"value-%d" % i * 10
        headers = [("h", b"%d" % i)] if i % 2 else []
        producer.send(topic_name, value=value, key=key, headers=headers)
        sent.append((key, value, headers))
    producer.flush(15)
    producer.close()
    got = consume(broker, topic_name, len(sent))
    assert [(r.key, r.value, list(r.headers)) for r in got] == sent
    batches = stored_batches(broker.data_dir, topic_name)
    expected = Compression.NONE if codec is None else Compression[codec.upper()]
    compressions = {h.compression for h in batches}
    # kafka-python sends a batch uncompressed when compressing would not shrink
    # it (a batch of one small record, which linger.ms makes on a loaded machine).
    assert expected in compressions and compressions <= {expected, Compression.NONE}
    assert all(h.producer_id >= 0 for h in batches), "kafka-python 3 should produce idempotently"


def test_offsets_for_times_and_end_offsets(broker: BrokerProcess, topic_name: str) -> None:
    admin(broker).create_topics([NewTopic(topic_name, 1, 1)])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=20)
    base = int(time.time() * 1000) - 50_000
    for i in range(6):
        producer.send(topic_name, value=b"x", timestamp_ms=base + i * 1000)
    producer.flush(10)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    tp = TopicPartition(topic_name, 0)
    assert consumer.beginning_offsets([tp]) == {tp: 0}
    assert consumer.end_offsets([tp]) == {tp: 6}
    found = consumer.offsets_for_times({tp: base + 2500})
    assert found[tp].offset == 3
    consumer.close()


def test_large_record(broker: BrokerProcess, topic_name: str) -> None:
    admin(broker).create_topics([NewTopic(topic_name, 1, 1)])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=2_000_000)
    value = bytes(range(256)) * 3600  # ~900 KB
    producer.send(topic_name, value=value, key=b"big").get(timeout=15)
    producer.close()
    [record] = consume(broker, topic_name, 1)
    assert record.value == value
