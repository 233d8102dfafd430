"""Kafka's ``kafka-configs`` turning on broker-side schema id validation for a topic.

``confluent.value.schema.validation`` is a topic config like any other: set with
``--alter --add-config``, shown by ``--describe``.  The node runs no registry and
the cluster has none (no ``_schemas``), so every framed or unframed value of the
topic is refused, saying so, while other topics take anything.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, KafkaTools
from tests.kafka_tools.tool_classes import CONFIGS

from samsa.testing import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(TEST_TIMEOUT_S)]


def produce(bootstrap: str, topic: str, value: bytes) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0})
    producer.produce(topic, value, on_delivery=lambda err, _msg: outcome.append(err))
    assert producer.flush(30) == 0
    return outcome[0]


def test_kafka_configs_turns_validation_on(
    node_tools: KafkaTools, samsa_node: BrokerProcess
) -> None:
    admin = AdminClient({"bootstrap.servers": node_tools.bootstrap})
    admin.create_topics([NewTopic("validated-by-tool", 1, 1)])["validated-by-tool"].result(30)
    assert produce(node_tools.bootstrap, "validated-by-tool", b"before") is None
    topic = ["--entity-type", "topics", "--entity-name", "validated-by-tool"]
    altered = node_tools.admin(
        CONFIGS, *topic, "--alter", "--add-config", "confluent.value.schema.validation=true"
    )
    assert "Completed updating config for topic validated-by-tool." in altered
    described = node_tools.admin(CONFIGS, *topic, "--describe")
    assert "confluent.value.schema.validation=true" in described
    deadline = time.monotonic() + 30  # the config reaches the broker's image a moment later
    while (
        refused := produce(node_tools.bootstrap, "validated-by-tool", b"\x00\x00\x00\x00\x01abc")
    ) is None:
        assert time.monotonic() < deadline, "validation never started"
    assert refused.code() == KafkaError.INVALID_RECORD
    assert "this cluster has no schema registry" in samsa_node.log_text()
