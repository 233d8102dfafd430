"""Consumer groups with kafka-python against a real Samsa broker.

Membership scenarios run for every client in ``test_groups_membership``;
committed-offset durability is checked here with kafka-python's
own commit/committed calls across a clean broker restart and a broker SIGKILL.
"""

from __future__ import annotations

import time
from pathlib import Path

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from samsa.testing import BrokerProcess

from .test_groups_common import (
    create_topic,
    produce,
    wait_until,
)


def _consumer(bootstrap: str, group: str) -> KafkaConsumer:
    return KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        session_timeout_ms=6000,
        heartbeat_interval_ms=200,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int | None]:
    consumer = _consumer(bootstrap, group)
    try:
        return {p: consumer.committed(TopicPartition(topic, p)) for p in (0, 1)}
    finally:
        consumer.close()


def _first_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """Subscribe as a new member and note where consumption resumes per partition."""
    consumer = _consumer(bootstrap, group)
    consumer.subscribe([topic])
    consumer.partitions_for_topic(topic)  # see MEMBER_SCRIPT: metadata before the join
    first: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 20
        while len(first) < 2 and time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=100).items():
                first.setdefault(tp.partition, records[0].offset)
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
        consumer.partitions_for_topic(topic)
        seen: set[int] = set()

        def got_both() -> bool:
            seen.update(tp.partition for tp in consumer.poll(timeout_ms=50))
            return len(seen) == 2

        wait_until(got_both, 20, "records from both partitions")
        consumer.commit(
            {
                TopicPartition(topic, 0): OffsetAndMetadata(3, "", -1),
                TopicPartition(topic, 1): OffsetAndMetadata(5, "", -1),
            }
        )
        consumer.close()
        assert _committed(bootstrap, group, topic) == {0: 3, 1: 5}

        assert proc.stop() == 0
        proc.start()
        assert _committed(bootstrap, group, topic) == {0: 3, 1: 5}

        consumer = _consumer(bootstrap, group)
        consumer.subscribe([topic])
        consumer.partitions_for_topic(topic)
        wait_until(lambda: bool(consumer.poll(timeout_ms=50)) or bool(consumer.assignment()),
                   20, "assignment")  # fmt: skip
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(7, "", -1)})
        consumer.close()

        proc.kill()
        proc.start()
        assert _committed(bootstrap, group, topic) == {0: 7, 1: 5}
        assert _first_offsets(bootstrap, group, topic) == {0: 7, 1: 5}
    finally:
        proc.kill()
