"""LogConfig: Kafka's names and defaults, parsing, overrides, describe."""

from __future__ import annotations

import pytest

from samsa.errors import ConfigError
from samsa.storage.topic_config.log_config import DEPRECATED_KEYS, LOG_CONFIG_BY_NAME, LogConfig


def test_kafka_defaults() -> None:
    c = LogConfig()
    assert c.segment_bytes == 1073741824
    assert c.segment_ms == 604800000
    assert c.segment_index_bytes == 10485760
    assert c.index_interval_bytes == 4096
    assert c.retention_ms == 604800000
    assert c.retention_bytes == -1
    assert c.cleanup_policy == ("delete",)
    assert c.max_message_bytes == 1048588
    assert c.message_timestamp_type == "CreateTime"
    assert c.min_insync_replicas == 1
    assert c.min_cleanable_dirty_ratio == 0.5
    assert c.compression_type == "producer"
    assert c.unclean_leader_election_enable is False


def test_parse_overrides_and_to_dict() -> None:
    c = LogConfig.from_dict(
        {"retention.ms": "1000", "cleanup.policy": "compact, delete", "preallocate": "TRUE"}
    )
    assert c.retention_ms == 1000 and c.compact and c.delete and c.preallocate
    assert c.to_dict() == {
        "cleanup.policy": "compact,delete",
        "preallocate": "true",
        "retention.ms": "1000",
    }
    assert LogConfig.from_dict(c.to_dict()) == c


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("segment.bytes", "abc"),
        ("segment.bytes", "10"),
        ("cleanup.policy", "forever"),
        ("message.timestamp.type", "Now"),
        ("min.cleanable.dirty.ratio", "1.5"),
        ("unclean.leader.election.enable", "yes"),
        ("segment.bytes", str(2**31)),
        ("no.such.key", "1"),
    ],
)
def test_bad_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        LogConfig.from_dict({key: value})


def test_topic_overrides_on_top_of_broker_defaults() -> None:
    broker = LogConfig.from_broker_properties(
        {"log.retention.hours": "24", "log.segment.bytes": "1048576", "num.partitions": "3"}
    )
    assert broker.retention_ms == 86_400_000 and broker.segment_bytes == 1048576
    assert broker.to_dict() == {}
    topic = LogConfig.from_dict({"retention.ms": "5"}, base=broker)
    assert topic.segment_bytes == 1048576 and topic.retention_ms == 5
    assert topic.to_dict() == {"retention.ms": "5"}


def test_describe_lists_every_key_with_default_flags() -> None:
    entries = {e.name: e for e in LogConfig.from_dict({"segment.ms": "10"}).describe()}
    assert set(entries) == set(LOG_CONFIG_BY_NAME) - DEPRECATED_KEYS  # Kafka 4.x lists them no more
    deprecated = LogConfig.from_dict({"message.format.version": "2.8"}).describe()
    assert "message.format.version" in {e.name for e in deprecated}  # unless the topic sets one
    assert entries["segment.ms"].value == "10" and not entries["segment.ms"].is_default
    assert entries["retention.ms"].is_default and entries["retention.ms"].value == "604800000"
    assert entries["cleanup.policy"].value == "delete"
