"""The Apache Kafka helpers: a real Kafka node and a three-node Kafka cluster
start, and a librdkafka client round-trips records through them, so benches
and tests that put Kafka beside Samsa stand on a working peer."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing.kafka import KafkaCluster, KafkaProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(400)]


def _round_trip(bootstrap: str, replication: int) -> None:
    topic = f"peer-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, replication)])[topic].result(60)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    sent = {f"k{i}".encode(): f"v{i}".encode() for i in range(50)}
    for key, value in sent.items():
        producer.produce(topic, value, key)
    assert producer.flush(60) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    got: dict[bytes, bytes] = {}
    try:
        for _ in range(600):
            if len(got) == len(sent):
                break
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got[message.key()] = message.value()
    finally:
        consumer.close()
    assert got == sent


def test_kafka_node_starts_and_round_trips(kafka_broker: KafkaProcess) -> None:
    assert kafka_broker.running
    assert any("Kafka Server started" in line for line in kafka_broker.log_lines)
    _round_trip(kafka_broker.bootstrap, replication=1)
    assert kafka_broker.stop() in (0, 143)  # the JVM exits 143 after SIGTERM's hooks


def test_kafka_cluster_of_three_round_trips_with_rf3(kafka_cluster: KafkaCluster) -> None:
    assert kafka_cluster.running() == [1, 2, 3]
    _round_trip(kafka_cluster.bootstrap, replication=3)
