"""Dynamic broker configs (KIP-226) through confluent-kafka's AdminClient.

A broker setting changed with IncrementalAlterConfigs, per broker or as the
cluster-wide default, is stored in the metadata log, described with its
dynamic source, inherited by topics without an override, and applied without a
restart: a smaller ``message.max.bytes`` makes the broker refuse what it
accepted a moment before.  Settings only a restart can change are refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)
from tests.integration.test_bad_input import RawClient

from samsa.testing import BrokerProcess

BROKER = ConfigResource.Type.BROKER
TOPIC = ConfigResource.Type.TOPIC
SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE
RESOURCE_BROKER = 4
INCREMENTAL_ALTER_CONFIGS = 44
API_VERSIONS = 18


def alter_raw(bootstrap: str, name: str, key: str, value: str | None) -> dict:
    """IncrementalAlterConfigs on a broker resource; the only way to name the
    cluster default (""), which librdkafka's AdminClient refuses to send."""
    op = SET if value is not None else DELETE
    config = {"name": key, "config_operation": op.value, "value": value}
    resource = {"resource_type": RESOURCE_BROKER, "resource_name": name, "configs": [config]}
    client = RawClient(bootstrap)
    try:
        body = {"resources": [resource], "validate_only": False}
        return client.call(INCREMENTAL_ALTER_CONFIGS, 1, body)["responses"][0]
    finally:
        client.sock.close()


def alter(admin: AdminClient, kind: ConfigResource.Type, name: str, key: str, value: str) -> None:
    entry = ConfigEntry(key, value, incremental_operation=SET)
    resource = ConfigResource(kind, name, incremental_configs=[entry])
    admin.incremental_alter_configs([resource])[resource].result(10)


def described(admin: AdminClient, kind: ConfigResource.Type, name: str, key: str) -> ConfigEntry:
    resource = ConfigResource(kind, name)
    return admin.describe_configs([resource])[resource].result(10)[key]


def wait_until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def produce(bootstrap: str, topic: str, size: int) -> KafkaError | None:
    """Send one record of ``size`` bytes; the broker's error, or None."""
    outcome: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0, "linger.ms": 0})
    producer.produce(topic, value=b"x" * size, on_delivery=lambda err, _: outcome.append(err))
    assert producer.flush(20) == 0
    return outcome[0]


def test_dynamic_message_max_bytes_changes_what_the_broker_accepts(
    broker: BrokerProcess, topic_name: str
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    node = str(next(iter(admin.list_topics(timeout=10).brokers)))
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    assert produce(broker.bootstrap, topic_name, 3000) is None

    assert alter_raw(broker.bootstrap, "", "message.max.bytes", "2000")["error_code"] == 0
    try:
        wait_until(
            lambda: described(admin, TOPIC, topic_name, "max.message.bytes").value == "2000",
            "the topic to inherit the cluster default",
        )
        inherited = described(admin, TOPIC, topic_name, "max.message.bytes")
        assert inherited.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
        error = produce(broker.bootstrap, topic_name, 3000)
        assert error is not None and error.code() == KafkaError.MSG_SIZE_TOO_LARGE

        # This broker's own value wins over the cluster default.
        alter(admin, BROKER, node, "message.max.bytes", "5000")
        wait_until(
            lambda: described(admin, BROKER, node, "message.max.bytes").value == "5000",
            "the per-broker value",
        )
        entry = described(admin, BROKER, node, "message.max.bytes")
        assert entry.source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
        assert not entry.is_read_only
        assert produce(broker.bootstrap, topic_name, 3000) is None
    finally:
        alter_raw(broker.bootstrap, node, "message.max.bytes", None)
        alter_raw(broker.bootstrap, "", "message.max.bytes", None)
    wait_until(
        lambda: (
            described(admin, BROKER, node, "message.max.bytes").source
            == ConfigSource.DEFAULT_CONFIG.value
        ),
        "the default again",
    )


def test_dynamic_log_defaults_reach_topics_without_an_override(
    broker: BrokerProcess, topic_name: str
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    node = str(next(iter(admin.list_topics(timeout=10).brokers)))
    admin.create_topics([NewTopic(topic_name, 1, 1, config={"retention.ms": "1000"})])[
        topic_name
    ].result(10)
    other = f"{topic_name}-plain"
    admin.create_topics([NewTopic(other, 1, 1)])[other].result(10)
    alter(admin, BROKER, node, "log.retention.ms", "123456")
    try:
        wait_until(
            lambda: described(admin, TOPIC, other, "retention.ms").value == "123456",
            "the dynamic default on the topic",
        )
        assert described(admin, TOPIC, other, "retention.ms").source == (
            ConfigSource.DYNAMIC_BROKER_CONFIG.value
        )
        own = described(admin, TOPIC, topic_name, "retention.ms")
        assert (own.value, own.source) == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    finally:
        alter_raw(broker.bootstrap, node, "log.retention.ms", None)


@pytest.mark.parametrize("key", ["log.dirs", "log.retention.hours", "node.id"])
def test_settings_only_a_restart_changes_are_refused(broker: BrokerProcess, key: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    node = str(next(iter(admin.list_topics(timeout=10).brokers)))
    assert described(admin, BROKER, node, key).is_read_only
    with pytest.raises(KafkaException) as info:
        alter(admin, BROKER, node, key, "1")
    error = info.value.args[0]
    assert error.code() == KafkaError.INVALID_REQUEST
    assert "Cannot update these configs dynamically" in error.str()


def test_another_brokers_resource_is_refused_by_the_broker_asked(broker: BrokerProcess) -> None:
    answer = alter_raw(broker.bootstrap, "99", "message.max.bytes", "5000")
    assert answer["error_code"] == KafkaError.INVALID_REQUEST
    assert "Unexpected broker id" in answer["error_message"]


def test_max_connections_per_ip_applies_to_the_next_connection(tmp_path: Path) -> None:
    """Kafka closes a connection over the per-address limit as soon as it is accepted."""
    proc = BrokerProcess(tmp_path / "data")
    proc.start()
    try:
        first = RawClient(proc.bootstrap)
        config = {"name": "max.connections.per.ip", "config_operation": 0, "value": "2"}
        resource = {"resource_type": RESOURCE_BROKER, "resource_name": "", "configs": [config]}
        body = {"resources": [resource], "validate_only": False}
        [answer] = first.call(INCREMENTAL_ALTER_CONFIGS, 1, body)["responses"]
        assert answer["error_code"] == 0
        wait_until(lambda: _limit(first) == "2", "the limit to reach the broker")

        second = RawClient(proc.bootstrap)
        assert second.call(API_VERSIONS, 0, {})["error_code"] == 0
        third = RawClient(proc.bootstrap)
        with pytest.raises(ConnectionError):
            third.call(API_VERSIONS, 0, {})
        third.sock.close()
        second.sock.close()
        # Once the broker has seen one close, a new connection fits again.
        wait_until(lambda: _connects(proc.bootstrap), "a free connection slot")
        first.sock.close()
    finally:
        proc.stop()


def _limit(client: RawClient) -> str | None:
    resource = {
        "resource_type": RESOURCE_BROKER,
        "resource_name": "",
        "configuration_keys": ["max.connections.per.ip"],
    }
    body = {"resources": [resource], "include_synonyms": False, "include_documentation": False}
    rows = client.call(32, 4, body)["results"][0]["configs"]
    return rows[0]["value"] if rows else None


def _connects(bootstrap: str) -> bool:
    client = RawClient(bootstrap)
    try:
        return bool(client.call(API_VERSIONS, 0, {})["error_code"] == 0)
    except ConnectionError:
        return False
    finally:
        client.sock.close()


def test_kafka_python_raises_message_max_bytes_at_runtime(broker: BrokerProcess) -> None:
    """kafka-python checks a broker config is described as dynamic before altering it."""
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource as KafkaPythonResource
    from kafka.admin import ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    node = str(admin.describe_cluster()["brokers"][0]["broker_id"])

    def value() -> str | None:
        resource = KafkaPythonResource(ConfigResourceType.BROKER, node)
        row = admin.describe_configs([resource])["broker"][node].get("message.max.bytes")
        return None if row is None else row["value"]

    raised = {"message.max.bytes": "3000000"}
    try:
        resource = KafkaPythonResource(ConfigResourceType.BROKER, node, raised)
        assert admin.alter_configs([resource])["broker"][node] == "OK"
        wait_until(lambda: value() == "3000000", "the new value")
    finally:
        reset = KafkaPythonResource(ConfigResourceType.BROKER, node, ["message.max.bytes"])
        admin.reset_configs([reset])
        admin.close()
