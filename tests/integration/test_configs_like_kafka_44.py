"""Topic and broker configs, timestamps and min.insync.replicas as Kafka 4.4 has them
(issue 36, bugs 5 and 6), checked by running the same clients against a real
Kafka 4.4 node and a Samsa broker side by side.

- DescribeConfigs of a fresh topic lists the same names with the same values,
  sources, types, flags and synonyms (Samsa listed Kafka 3.x's
  message.downconversion.enable and message.format.version, missed four Kafka
  4.x keys, and defaulted message.timestamp.after.max.ms to Long.MAX);
- a broker's settings that both have: same defaults, types and synonyms;
- a record stamped two hours ahead is refused with INVALID_TIMESTAMP;
- acks=all to a one-replica topic with min.insync.replicas=2 succeeds (Kafka's
  effective min ISR is capped at the replication factor).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.integration.raw_client import RawClient

from samsa.testing import BrokerProcess
from samsa.testing.kafka import KafkaProcess
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]

DESCRIBE_CONFIGS = 32
TOPIC, BROKER = 2, 4
SOURCE_DEFAULT = 5

# Differences with a reason, each checked to still be the only one.
CONFLUENT_SERVER_KEYS = {
    # Samsa's broker-side schema validation, named and listed as Confluent Server
    # has them (docs/schema-registry.md): on top of Kafka's topic configs.
    "confluent.key.schema.validation",
    "confluent.key.subject.name.strategy",
    "confluent.value.schema.validation",
    "confluent.value.subject.name.strategy",
}
TOPIC_EXCEPTIONS = {
    # Kafka 4.4 enables eligible leader replicas (KIP-966), whose controller
    # writes a cluster-wide min.insync.replicas at start-up; Samsa has no ELR yet.
    "min.insync.replicas": {"source", "synonyms"},
}
BROKER_VALUE_EXCEPTIONS = {
    "log.dir": "Samsa's data dir default is log.dirs=./samsa-data, not /tmp/kafka-logs",
    "sasl.enabled.mechanisms": "Samsa has no GSSAPI (Kerberos); PLAIN and SCRAM are on",
    "sasl.mechanism.controller.protocol": "no GSSAPI: PLAIN",
    "sasl.mechanism.inter.broker.protocol": "no GSSAPI: PLAIN",
    "ssl.keystore.type": "Samsa reads PEM keystores only",
    "ssl.truststore.type": "Samsa reads PEM truststores only",
}


@pytest.fixture(scope="module")
def kafka_node(
    tmp_path_factory: pytest.TempPathFactory, kafka_reference: KafkaReference
) -> Iterator[KafkaProcess]:
    node = KafkaProcess(tmp_path_factory.mktemp("kafka44") / "data", reference=kafka_reference)
    node.start()
    try:
        yield node
    finally:
        node.kill()


@pytest.fixture(scope="module", params=["kafka", "samsa"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    """Each behaviour test runs against Kafka 4.4 and against Samsa."""
    node = request.getfixturevalue("kafka_node" if request.param == "kafka" else "broker")
    return str(node.bootstrap)


def create_topic(bootstrap: str, config: dict[str, str] | None = None) -> str:
    name = f"cfg-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=config or {})])[name].result(30)
    return name


def described(bootstrap: str, resource_type: int, name: str) -> dict[str, dict[str, Any]]:
    """DescribeConfigs v4 with synonyms, as Kafka 4.4's admin client sends it."""
    client = RawClient(bootstrap)
    try:
        deadline = time.monotonic() + 20
        while True:
            answer = client.call(
                DESCRIBE_CONFIGS,
                4,
                {
                    "resources": [
                        {
                            "resource_type": resource_type,
                            "resource_name": name,
                            "configuration_keys": None,
                        }
                    ],
                    "include_synonyms": True,
                    "include_documentation": False,
                },
            )
            result = answer["results"][0]
            if result["error_code"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)  # a topic created a moment ago may not be known everywhere yet
    finally:
        client.close()
    assert result["error_code"] == 0, result
    return {
        c["name"]: {
            "value": c["value"],
            "source": c["config_source"],
            "type": c["config_type"],
            "read_only": c["read_only"],
            "sensitive": c["is_sensitive"],
            "synonyms": [(s["name"], s["value"], s["source"]) for s in c["synonyms"]],
        }
        for c in result["configs"]
    }


def test_a_new_topic_is_described_as_kafka_44_describes_it(
    kafka_node: KafkaProcess, broker: BrokerProcess
) -> None:
    kafka = described(kafka_node.bootstrap, TOPIC, create_topic(kafka_node.bootstrap))
    samsa = described(broker.bootstrap, TOPIC, create_topic(broker.bootstrap))
    assert set(samsa) >= CONFLUENT_SERVER_KEYS
    assert sorted(set(samsa) - CONFLUENT_SERVER_KEYS) == sorted(kafka)
    differences = {
        name: {field for field in kafka[name] if kafka[name][field] != samsa[name][field]}
        for name in kafka
    }
    assert {name: fields for name, fields in differences.items() if fields} == TOPIC_EXCEPTIONS
    assert kafka["message.timestamp.after.max.ms"]["value"] == "3600000"


def test_broker_settings_both_have_share_kafka_44s_defaults_and_types(
    kafka_node: KafkaProcess, broker: BrokerProcess
) -> None:
    kafka = described(kafka_node.bootstrap, BROKER, "1")
    samsa = described(broker.bootstrap, BROKER, "1")
    shared = sorted(set(kafka) & set(samsa))
    assert len(shared) > 140
    wrong_types = {
        name: (kafka[name]["type"], samsa[name]["type"])
        for name in shared
        if kafka[name]["type"] != samsa[name]["type"]
    }
    assert wrong_types == {}
    both_default = [
        name
        for name in shared
        if kafka[name]["source"] == SOURCE_DEFAULT and samsa[name]["source"] == SOURCE_DEFAULT
    ]
    wrong_defaults = {
        name: (kafka[name]["value"], samsa[name]["value"])
        for name in both_default
        if (kafka[name]["value"], kafka[name]["synonyms"], kafka[name]["sensitive"])
        != (samsa[name]["value"], samsa[name]["synonyms"], samsa[name]["sensitive"])
    }
    assert set(wrong_defaults) == set(BROKER_VALUE_EXCEPTIONS), wrong_defaults
    # Settings Kafka 4.x removed are not listed while unset, there or here.
    for removed in ("log.message.format.version", "inter.broker.protocol.version"):
        assert removed not in kafka and removed not in samsa


def _deliver(producer: Producer, topic: str, **produce: Any) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer.produce(topic, b"x", on_delivery=lambda err, _msg: outcome.append(err), **produce)
    producer.flush(30)
    assert len(outcome) == 1
    return outcome[0]


def test_a_record_stamped_two_hours_ahead_is_refused(bootstrap: str) -> None:
    topic = create_topic(bootstrap)
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 20000})
    now = int(time.time() * 1000)
    refused = _deliver(producer, topic, timestamp=now + 2 * 3600_000)
    assert refused is not None and refused.code() == KafkaError.INVALID_TIMESTAMP, refused
    assert _deliver(producer, topic, timestamp=now + 30 * 60_000) is None
    assert _deliver(producer, topic, timestamp=now - 30 * 24 * 3600_000) is None  # no past bound
    later = create_topic(bootstrap, {"message.timestamp.after.max.ms": str(3 * 3600_000)})
    assert _deliver(producer, later, timestamp=now + 2 * 3600_000) is None


def test_acks_all_to_one_replica_with_min_insync_two_is_accepted(bootstrap: str) -> None:
    topic = create_topic(bootstrap, {"min.insync.replicas": "2"})
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 20000}
    )
    assert _deliver(producer, topic) is None


def test_kafka_4_refuses_the_removed_topic_configs_samsa_still_accepts_them(
    kafka_node: KafkaProcess, broker: BrokerProcess, tmp_path: Path
) -> None:
    """A deliberate difference: older client test suites (librdkafka's 0092) create
    topics with message.format.version; Samsa keeps accepting it and lists it only
    on the topic that sets it."""
    del tmp_path
    config = {"message.format.version": "2.8"}
    with pytest.raises(Exception, match="Unknown topic config name"):
        create_topic(kafka_node.bootstrap, config)
    topic = create_topic(broker.bootstrap, config)
    assert described(broker.bootstrap, TOPIC, topic)["message.format.version"]["value"] == "2.8"
