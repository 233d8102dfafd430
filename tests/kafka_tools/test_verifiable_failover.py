"""Kafka's verifiable producer and consumer (what Kafka's own system tests use
to prove no loss) through a SIGKILL of the partition leader of a three-node
Samsa cluster: every record the producer saw acknowledged (acks=all) is read
back by the consumer, and acknowledgements resume after the failover."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from tests.kafka_tools.conftest import STARTUP_TIMEOUT_S, TEST_TIMEOUT_S
from tests.kafka_tools.json_events import Event, JsonEventTool
from tests.kafka_tools.tool_classes import VERIFIABLE_CONSUMER, VERIFIABLE_PRODUCER

from samsa.testing.cluster import LocalCluster, node_metadata, wait_until
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

TOPIC = "verifiable"
RECORDS = 1500
ACKED_BEFORE_KILL = 300
ACKED_AFTER_KILL = 300


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster") as running:
        running.start(timeout=STARTUP_TIMEOUT_S)
        yield running


def leader_of(cluster: LocalCluster) -> int | None:
    (partition,) = node_metadata(cluster, 1, [TOPIC])["topics"][0]["partitions"]
    return partition["leader_id"] if partition["leader_id"] > 0 else None


def acked_values(events: list[Event]) -> set[str]:
    return {e["value"] for e in events if e["name"] == "producer_send_success"}


def consumed_values(events: list[Event]) -> set[str]:
    return {e["value"] for e in events if e["name"] == "record_data"}


def test_no_acknowledged_record_lost_through_leader_kill(
    kafka_reference: KafkaReference, cluster: LocalCluster
) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    created = admin.create_topics(
        [NewTopic(TOPIC, 1, 3, config={"min.insync.replicas": "2"})], operation_timeout=30
    )
    created[TOPIC].result(60)
    leader = wait_until(
        lambda: (
            node_metadata(cluster, 1, [TOPIC])["topics"][0]["partitions"][0]["leader_id"] > 0
            and node_metadata(cluster, 1, [TOPIC])["topics"][0]["partitions"][0]["leader_id"]
        ),
        30,
        "a leader for the topic",
    )
    consumer = JsonEventTool(
        kafka_reference, VERIFIABLE_CONSUMER, "--bootstrap-server", cluster.bootstrap,
        "--topic", TOPIC, "--group-id", "verifiers", "--reset-policy", "earliest", "--verbose",
    )  # fmt: skip
    producer = JsonEventTool(
        kafka_reference, VERIFIABLE_PRODUCER, "--bootstrap-server", cluster.bootstrap,
        "--topic", TOPIC, "--acks", "-1", "--max-messages", str(RECORDS), "--throughput", "150",
    )  # fmt: skip
    try:
        producer.wait_for(
            f"{ACKED_BEFORE_KILL} acknowledged records",
            lambda events: len(acked_values(events)) >= ACKED_BEFORE_KILL,
            240,
        )
        cluster.kill(leader)
        acked_at_kill = len(acked_values(producer.events))
        producer.wait_for(
            f"{ACKED_AFTER_KILL} more acknowledgements after killing leader {leader}",
            lambda events: len(acked_values(events)) >= acked_at_kill + ACKED_AFTER_KILL,
            240,
        )
        producer.wait_for(
            "the producer's summary", lambda ev: any(e["name"] == "tool_data" for e in ev), 240
        )
        acked = acked_values(producer.events)
        consumer.wait_for(
            "every acknowledged record consumed",
            lambda events: acked <= consumed_values(events),
            240,
        )
    finally:
        producer.stop()
        consumer.stop()
    missing = acked - consumed_values(consumer.events)
    assert not missing, (
        f"{len(missing)} acknowledged records never consumed: {sorted(missing)[:20]}"
    )
    (summary,) = producer.named("tool_data")
    assert summary["acked"] == len(acked) and summary["acked"] >= acked_at_kill + ACKED_AFTER_KILL
    assert any(e["success"] for e in consumer.named("offsets_committed"))
