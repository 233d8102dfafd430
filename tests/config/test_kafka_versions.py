"""Which Kafka versions the ``*.format.version`` / ``inter.broker.protocol.version``
settings accept: exactly what Kafka 3.x's ``MetadataVersion.fromVersionString`` does."""

from __future__ import annotations

import pytest

from samsa.config.broker_config import BrokerConfig
from samsa.errors import ConfigError
from samsa.protocol.kafka_versions import is_kafka_version
from samsa.storage.topic_config.log_config import LogConfig

ACCEPTED = [
    "0.8.0",
    "0.8.2.x",  # Kafka's own example: the fourth part is ignored
    "0.9.0.1",
    "0.10.0.0",  # librdkafka's test 0092 sets this one
    "0.10.0",
    "0.10.0-IV1",
    "0.10.1-IV2",
    "0.11.0-IV2",
    "1.0",
    "1.0.1",  # read as 1.0, as Kafka does
    "2.8",
    "2.8-IV1",
    "3.0-IV1",
    "3.7-IV4",
    "3.9",
    "3.9-IV0",
    " 2.8 ",  # Kafka trims STRING configs
]
REFUSED = [
    "banana",
    "",
    "0.10",
    "0.10.3",
    "0.11.0-IV3",
    "3.0-IV2",
    "2.8.",
    "9.9",
    "3.9-IV1",
    "v2.8",
    "2.8-iv1",
]


@pytest.mark.parametrize("version", ACCEPTED)
def test_what_kafka_accepts_is_accepted(version: str) -> None:
    assert is_kafka_version(version.strip())
    config = LogConfig.from_dict({"message.format.version": version})
    assert config.to_dict() == {"message.format.version": version.strip()}
    broker = BrokerConfig(
        {"inter.broker.protocol.version": version, "log.message.format.version": version}
    )
    assert broker["inter.broker.protocol.version"] == version.strip()


@pytest.mark.parametrize("version", REFUSED)
def test_what_kafka_refuses_is_refused_naming_the_key(version: str) -> None:
    assert not is_kafka_version(version)
    with pytest.raises(ConfigError, match=r"message\.format\.version"):
        LogConfig.from_dict({"message.format.version": version})
    for key in ("inter.broker.protocol.version", "log.message.format.version"):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            BrokerConfig({key: version})
