"""Topic configs Kafka 3.x deprecated but still accepts, through confluent-kafka's AdminClient.

Older tools and client test suites set ``message.format.version`` and friends
when they create topics; Kafka 3.x accepts, stores and describes them and they
have no effect.  Refusing them (INVALID_CONFIG) broke those suites.
"""

from __future__ import annotations

from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from samsa.testing import BrokerProcess

DEPRECATED = {
    "message.format.version": "2.8",
    "message.downconversion.enable": "false",
    "message.timestamp.difference.max.ms": "3600000",
}


def set_config(topic: str, name: str, value: str) -> ConfigResource:
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    return ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[entry])


def describe(admin: AdminClient, topic: str) -> dict[str, tuple[str, bool]]:
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    entries = admin.describe_configs([resource])[resource].result(10)
    return {name: (e.value, e.is_default) for name, e in entries.items()}


def test_deprecated_topic_configs_are_accepted_described_and_altered(
    broker: BrokerProcess, topic_name: str
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, 1, 1, config=DEPRECATED)])[topic_name].result(10)

    configs = describe(admin, topic_name)
    for name, value in DEPRECATED.items():
        assert configs[name] == (value, False)

    resource = set_config(topic_name, "message.format.version", "3.0-IV1")
    admin.incremental_alter_configs([resource])[resource].result(10)
    assert describe(admin, topic_name)["message.format.version"] == ("3.0-IV1", False)

    bad = set_config(topic_name, "message.format.version", "banana")
    try:
        admin.incremental_alter_configs([bad])[bad].result(10)
    except Exception as exc:  # the broker's INVALID_CONFIG, surfaced by librdkafka
        assert "message.format.version" in str(exc)
    else:
        raise AssertionError("a malformed version was accepted")
