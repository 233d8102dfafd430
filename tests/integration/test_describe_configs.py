"""DescribeConfigs as Kafka answers it, through confluent-kafka and kafka-python.

Every topic config is listed with its value, source and synonyms (the broker
settings behind its default); broker values are written as Kafka writes them.
kafka-python only alters configs that DescribeConfigs lists as dynamic.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource as KafkaPythonResource
from kafka.admin import ConfigResourceType
from tests.integration.test_bad_input import RawClient

from samsa.errors import ErrorCode
from samsa.storage.topic_config.log_config import DEPRECATED_KEYS, LOG_CONFIG_KEYS
from samsa.testing import BrokerProcess

STATIC = {
    "log.retention.hours": "1",
    "log.cleaner.min.compaction.lag.ms": "5000",
    "log.cleanup.policy": "compact, delete",
}


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker with a few topic defaults set in its static configuration."""
    proc = BrokerProcess(Path(tmp_path_factory.mktemp("configured")) / "data", STATIC)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def describe(admin: AdminClient, kind: ConfigResource.Type, name: str) -> dict:
    resource = ConfigResource(kind, name)
    return admin.describe_configs([resource])[resource].result(10)


def test_a_topic_lists_every_topic_config_with_source_and_synonyms(
    configured: BrokerProcess, topic_name: str
) -> None:
    admin = AdminClient({"bootstrap.servers": configured.bootstrap})
    config = {"max.compaction.lag.ms": "600000", "preallocate": "TRUE"}
    admin.create_topics([NewTopic(topic_name, 1, 1, config=config)])[topic_name].result(10)
    entries = describe(admin, ConfigResource.Type.TOPIC, topic_name)

    # Every key but those Kafka 4.x removed, which a topic lists only when it sets them.
    assert set(entries) == {key.name for key in LOG_CONFIG_KEYS} - DEPRECATED_KEYS
    override = entries["max.compaction.lag.ms"]
    assert (override.value, override.source) == ("600000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    assert list(override.synonyms) == ["max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms"]
    assert entries["preallocate"].value == "true"  # Kafka's format, whatever was given

    static = entries["min.compaction.lag.ms"]
    assert (static.value, static.source) == ("5000", ConfigSource.STATIC_BROKER_CONFIG.value)
    assert list(static.synonyms) == ["log.cleaner.min.compaction.lag.ms"]
    assert entries["cleanup.policy"].value == "compact,delete"
    # As in Kafka, a default given only in hours shows as DEFAULT_CONFIG.
    retention = entries["retention.ms"]
    assert (retention.value, retention.source) == ("3600000", ConfigSource.DEFAULT_CONFIG.value)
    default = entries["segment.jitter.ms"]
    assert (default.value, default.source) == ("0", ConfigSource.DEFAULT_CONFIG.value)
    assert not any(e.is_read_only for e in entries.values())

    # Every level a synonym is set at, in precedence order (librdkafka keeps one per name).
    kp = KafkaAdminClient(bootstrap_servers=configured.bootstrap)
    try:
        resource = KafkaPythonResource(ConfigResourceType.TOPIC, topic_name)
        rows = kp.describe_configs([resource], include_synonyms=True, config_filter="all")
    finally:
        kp.close()
    synonyms = rows["topic"][topic_name]["min.compaction.lag.ms"]["synonyms"]
    assert [(s["name"], s["value"], s["source"]) for s in synonyms] == [
        ("log.cleaner.min.compaction.lag.ms", "5000", "STATIC_BROKER_CONFIG"),
        ("log.cleaner.min.compaction.lag.ms", "0", "DEFAULT_CONFIG"),
    ]


def test_broker_values_are_written_as_kafka_writes_them(configured: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": configured.bootstrap})
    node = str(next(iter(admin.list_topics(timeout=10).brokers)))
    entries = describe(admin, ConfigResource.Type.BROKER, node)
    assert entries["auto.create.topics.enable"].value == "true"
    assert entries["auto.create.topics.enable"].source == ConfigSource.DEFAULT_CONFIG.value
    assert entries["log.retention.hours"].value == "1"
    assert entries["log.retention.hours"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert entries["log.retention.ms"].value is None  # no default in Kafka either
    assert entries["log.cleanup.policy"].value == "compact,delete"  # a list, as Kafka writes it
    assert entries["log.dirs"].is_read_only
    assert not entries["message.max.bytes"].is_read_only
    # The cluster-wide default (which neither client can name) lists only the
    # dynamic defaults that are set: none yet.  Another broker id is refused.
    assert describe_raw(configured, "")["configs"] == []
    other = describe_raw(configured, "99")
    assert other["error_code"] == ErrorCode.INVALID_REQUEST
    assert other["error_message"].endswith(f"expected {node} or empty string, but received 99")


def describe_raw(broker: BrokerProcess, name: str) -> dict:
    client = RawClient(broker.bootstrap)
    resource = {"resource_type": 4, "resource_name": name, "configuration_keys": None}
    body = {"resources": [resource], "include_synonyms": True, "include_documentation": False}
    try:
        return client.call(32, 4, body)["results"][0]
    finally:
        client.sock.close()


def test_kafka_python_alters_a_config_it_finds_described(
    broker: BrokerProcess, topic_name: str
) -> None:
    creator = AdminClient({"bootstrap.servers": broker.bootstrap})
    creator.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        resource = KafkaPythonResource(
            ConfigResourceType.TOPIC, topic_name, {"min.compaction.lag.ms": "1000"}
        )
        assert admin.alter_configs([resource])["topic"][topic_name] == "OK"
        described = admin.describe_configs(
            [KafkaPythonResource(ConfigResourceType.TOPIC, topic_name)]
        )
        assert described["topic"][topic_name]["min.compaction.lag.ms"]["value"] == "1000"
    finally:
        admin.close()


def test_configs_for_features_samsa_lacks_are_listed_and_checked(
    broker: BrokerProcess, topic_name: str
) -> None:
    """Reassignment tools throttle replicas through topic configs; tiered storage
    is refused with Kafka's message when the broker has none."""
    creator = AdminClient({"bootstrap.servers": broker.bootstrap})
    creator.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        throttled = {"leader.replication.throttled.replicas": "0:1"}
        resource = KafkaPythonResource(ConfigResourceType.TOPIC, topic_name, throttled)
        assert admin.alter_configs([resource])["topic"][topic_name] == "OK"
        tiered = {"remote.storage.enable": "true"}
        resource = KafkaPythonResource(ConfigResourceType.TOPIC, topic_name, tiered)
        answer = admin.alter_configs([resource])["topic"][topic_name]
        assert "InvalidConfigurationError" in answer
        assert "Tiered Storage functionality is disabled" in answer
    finally:
        admin.close()
    entries = describe(creator, ConfigResource.Type.TOPIC, topic_name)
    assert entries["leader.replication.throttled.replicas"].value == "0:1"
    assert entries["remote.storage.enable"].value == "false"
    assert entries["compression.zstd.level"].value == "3"


def test_secrets_are_described_as_sensitive_without_their_values(tmp_path: Path) -> None:
    """Kafka's PASSWORD settings come back null and sensitive: a JAAS line or a
    key password set in server.properties never leaves the broker."""
    secrets = {
        "sasl.jaas.config": (
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="s3cret";'
        ),
        "ssl.key.password": "s3cret",
    }
    proc = BrokerProcess(tmp_path / "data", secrets)
    proc.start()
    try:
        admin = AdminClient({"bootstrap.servers": proc.bootstrap})
        entries = describe(admin, ConfigResource.Type.BROKER, "1")
    finally:
        proc.stop()
    for name in secrets:
        entry = entries[name]
        assert entry.is_sensitive, name
        assert entry.value is None, name
        assert all(s.value is None for s in entry.synonyms.values()), name
    assert not entries["message.max.bytes"].is_sensitive
