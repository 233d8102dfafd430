"""Consumer groups with confluent-kafka (librdkafka) against a real Samsa broker.

Membership scenarios run for every client in ``test_groups_membership``;
committed-offset durability is checked here with librdkafka's own
commit/committed calls across a clean broker restart and a broker SIGKILL.
"""

from __future__ import annotations

import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, TopicPartition

from samsa.testing import BrokerProcess

from .test_groups_common import (
    create_topic,
    produce,
    wait_until,
)


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 200,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    consumer = _consumer(bootstrap, group)
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in (0, 1)], timeout=15)
        return {tp.partition: tp.offset for tp in tps}
    finally:
        consumer.close()


def _first_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """Subscribe as a new member and note where consumption resumes per partition."""
    consumer = _consumer(bootstrap, group)
    consumer.subscribe([topic])
    first: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 20
        while len(first) < 2 and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            first.setdefault(msg.partition(), msg.offset())
        return first
    finally:
        consumer.close()


def test_committed_offsets_survive_restart_and_crash(tmp_path: Path) -> None:
    proc = BrokerProcess(tmp_path / "data")
    bootstrap = proc.start()
    try:
        topic, group = "durable", "durable-g"
        create_topic(bootstrap, topic, 2)
        produce(bootstrap, topic, per_partition=10, partitions=2)

        consumer = _consumer(bootstrap, group)
        consumer.subscribe([topic])
        seen: set[int] = set()
        wait_until(
            lambda: bool((m := consumer.poll(0.05)) and seen.add(m.partition())) or len(seen) == 2,
            20,
            "records from both partitions",
        )
        consumer.commit(
            offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 5)], asynchronous=False
        )
        consumer.close()
        assert _committed(bootstrap, group, topic) == {0: 3, 1: 5}

        assert proc.stop() == 0
        proc.start()
        assert _committed(bootstrap, group, topic) == {0: 3, 1: 5}

        consumer = _consumer(bootstrap, group)
        consumer.assign([TopicPartition(topic, 0)])
        consumer.commit(offsets=[TopicPartition(topic, 0, 7)], asynchronous=False)
        consumer.close()

        proc.kill()
        proc.start()
        assert _committed(bootstrap, group, topic) == {0: 7, 1: 5}
        assert _first_offsets(bootstrap, group, topic) == {0: 7, 1: 5}
    finally:
        proc.kill()
