"""Topic configs Kafka 3.x deprecated but still accepts, through confluent-kafka's AdminClient.

Older tools and client test suites set ``message.format.version`` and friends
when they create topics; Kafka 3.x accepts, stores and describes them and they
have no effect.  Refusing them (INVALID_CONFIG) broke those suites.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)
from kafka.admin import ConfigResource as KafkaConfigResource
from kafka.admin import ConfigResourceType as KafkaConfigResourceType
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KafkaNewTopic
from kafka.errors import InvalidConfigurationError

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


# What Kafka 3.x's version parser accepts, in each of its spellings; librdkafka's
# test 0092 creates its topics with the legacy four-part 0.10.0.0.
KAFKA_VERSIONS = ["0.10.0.0", "0.10.0", "0.11.0-IV2", "2.8", "3.0-IV1"]


def invalid_config_error(future: Any) -> KafkaError:
    with pytest.raises(KafkaException) as caught:
        future.result(10)
    error: KafkaError = caught.value.args[0]
    assert error.code() == KafkaError.INVALID_CONFIG, error
    return error


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")
@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_kafka_versions_are_accepted_by_create_alter_and_incremental_alter(
    broker: BrokerProcess, topic_name: str, version: str
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    config = {"message.format.version": version}
    admin.create_topics([NewTopic(topic_name, 1, 1, config=config)])[topic_name].result(10)
    assert describe(admin, topic_name)["message.format.version"] == (version, False)

    altered = ConfigResource(ConfigResource.Type.TOPIC, topic_name, set_config=config)
    admin.alter_configs([altered])[altered].result(10)  # the legacy AlterConfigs API
    assert describe(admin, topic_name)["message.format.version"] == (version, False)

    # Incremental: change it to another accepted spelling and back.
    other = "3.0" if version != "3.0" else "2.8"
    for value in (other, version):
        resource = set_config(topic_name, "message.format.version", value)
        admin.incremental_alter_configs([resource])[resource].result(10)
        assert describe(admin, topic_name)["message.format.version"] == (value, False)


@pytest.mark.parametrize("garbage", ["0.10", "9.9", "3.0-IV7", "0.10.0-beta"])
def test_versions_kafka_refuses_get_invalid_config_naming_the_key(
    broker: BrokerProcess, topic_name: str, garbage: str
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    bad_topic = NewTopic(topic_name, 1, 1, config={"message.format.version": garbage})
    error = invalid_config_error(admin.create_topics([bad_topic])[topic_name])
    assert "message.format.version" in error.str()

    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    bad = set_config(topic_name, "message.format.version", garbage)
    error = invalid_config_error(admin.incremental_alter_configs([bad])[bad])
    assert "message.format.version" in error.str()
    # Nothing stored: the key is at its default (deprecated keys may be left out).
    described = describe(admin, topic_name).get("message.format.version", ("3.0-IV1", True))
    assert described == ("3.0-IV1", True)


def test_kafka_python_creates_and_alters_with_a_legacy_version(
    broker: BrokerProcess, topic_name: str
) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        config = {"message.format.version": "0.10.0.0"}
        admin.create_topics([KafkaNewTopic(topic_name, 1, 1, topic_configs=config)])
        for incremental, version in ((False, "0.9.0.1"), (True, "2.8.1")):
            resource = KafkaConfigResource(
                KafkaConfigResourceType.TOPIC,
                topic_name,
                configs={"message.format.version": version},
            )
            result = admin.alter_configs([resource], incremental=incremental)
            assert result == {"topic": {topic_name: "OK"}}
        for incremental in (False, True):
            resource = KafkaConfigResource(
                KafkaConfigResourceType.TOPIC, topic_name, configs={"message.format.version": "2.9"}
            )
            outcome = str(admin.alter_configs([resource], incremental=incremental))
            assert "INVALID_CONFIG" in outcome and "message.format.version" in outcome
        with pytest.raises(InvalidConfigurationError, match=r"message\.format\.version"):
            bad = {"message.format.version": "0.10"}
            admin.create_topics([KafkaNewTopic(f"{topic_name}-bad", 1, 1, topic_configs=bad)])
    finally:
        admin.close()
    confluent = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert describe(confluent, topic_name)["message.format.version"] == ("2.8.1", False)
