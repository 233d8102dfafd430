"""Per-topic log configuration, under Kafka's topic config names and defaults.

``LogConfig`` is the parsed, immutable value a ``Log`` reads its settings
from; changing a topic's config builds a new one.  The table of every key
(type, default, validator, broker-level synonym, doc) is ``LOG_CONFIG_KEYS`` in
``keys``, and the types, validators and value parsing it is written with are
in ``types``; both are re-exported here, where callers have always found them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from samsa.errors import ConfigError
from samsa.storage.topic_config.keys import DEPRECATED_KEYS, LOG_CONFIG_BY_NAME, LOG_CONFIG_KEYS
from samsa.storage.topic_config.schema_validation_keys import TOPIC_NAME_STRATEGY
from samsa.storage.topic_config.types import (
    INT_MAX,
    LONG_MAX,
    ConfigEntry,
    ConfigKey,
    ConfigType,
    Validator,
    format_value,
    parse_value,
)

__all__ = [
    "DEPRECATED_KEYS",
    "INT_MAX",
    "LOG_CONFIG_BY_NAME",
    "LOG_CONFIG_KEYS",
    "LONG_MAX",
    "ConfigEntry",
    "ConfigKey",
    "ConfigType",
    "LogConfig",
    "Validator",
    "format_value",
    "parse_value",
]


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Settings of one partition's log.  Attribute = key with dots as underscores."""

    cleanup_policy: tuple[str, ...] = ("delete",)
    compression_type: str = "producer"
    delete_retention_ms: int = 86400000
    file_delete_delay_ms: int = 60000
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    index_interval_bytes: int = 4096
    max_compaction_lag_ms: int = LONG_MAX
    max_message_bytes: int = 1048588
    message_timestamp_after_max_ms: int = 3600000
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_type: str = "CreateTime"
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    min_insync_replicas: int = 1
    preallocate: bool = False
    retention_bytes: int = -1
    retention_ms: int = 604800000
    segment_bytes: int = 1073741824
    segment_index_bytes: int = 10485760
    segment_jitter_ms: int = 0
    segment_ms: int = 604800000
    unclean_leader_election_enable: bool = False
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    follower_replication_throttled_replicas: tuple[str, ...] = ()
    local_retention_bytes: int = -2
    local_retention_ms: int = -2
    remote_storage_enable: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    remote_copy_lag_bytes: int = -1
    remote_copy_lag_ms: int = 0
    max_decompressed_message_bytes: int = 2147483639
    errors_deadletterqueue_group_enable: bool = False
    confluent_key_schema_validation: bool = False
    confluent_key_subject_name_strategy: str = TOPIC_NAME_STRATEGY
    confluent_value_schema_validation: bool = False
    confluent_value_subject_name_strategy: str = TOPIC_NAME_STRATEGY
    message_downconversion_enable: bool = True
    message_format_version: str = "3.0-IV1"
    message_timestamp_difference_max_ms: int = LONG_MAX
    overrides: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def from_dict(cls, props: Mapping[str, str], base: LogConfig | None = None) -> LogConfig:
        """Parse topic-level ``props`` on top of ``base`` (the broker defaults,
        else Kafka's).  Unknown keys and bad values raise ConfigError."""
        changes: dict[str, Any] = {}
        for name, raw in props.items():
            key = LOG_CONFIG_BY_NAME.get(name)
            if key is None:
                raise ConfigError(f"unknown topic configuration {name}")
            changes[key.attr] = parse_value(key, raw)
        start = base or cls()
        return replace(start, **changes, overrides=start.overrides | frozenset(props))

    @classmethod
    def from_broker_properties(cls, props: Mapping[str, str]) -> LogConfig:
        """Broker defaults from ``server.properties`` keys (``log.segment.bytes``,
        ``log.retention.hours``...).  Keys that are not log settings are ignored."""
        by_synonym = {k.synonym: k for k in LOG_CONFIG_KEYS if k.synonym}
        changes: dict[str, Any] = {}
        # Coarser units first, so the finest unit given wins, as in Kafka.
        coarse = (
            ("log.retention.hours", "retention.ms", 3_600_000),
            ("log.retention.minutes", "retention.ms", 60_000),
            ("log.roll.hours", "segment.ms", 3_600_000),
        )
        for name, target, factor in coarse:
            if name in props:
                key = LOG_CONFIG_BY_NAME[target]
                value = parse_value(replace(key, name=name, validator=None), props[name])
                changes[key.attr] = -1 if value == -1 else value * factor
        for name, raw in props.items():
            synonym = by_synonym.get(name)
            if synonym is not None:
                changes[synonym.attr] = parse_value(synonym, raw)
        return replace(cls(), **changes)

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def validates_schema_ids(self) -> bool:
        """Produces are checked for Confluent schema ids (key, value or both)."""
        return self.confluent_value_schema_validation or self.confluent_key_schema_validation

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    def get(self, name: str) -> Any:
        return getattr(self, LOG_CONFIG_BY_NAME[name].attr)

    def to_dict(self) -> dict[str, str]:
        """The topic-level overrides, as strings (what a topic's config record holds)."""
        return {
            name: format_value(LOG_CONFIG_BY_NAME[name], self.get(name))
            for name in sorted(self.overrides)
        }

    def describe(self) -> list[ConfigEntry]:
        """Every key with its value, for DescribeConfigs: the keys Kafka 4.x lists,
        and a deprecated key only where this topic sets it."""
        return [
            ConfigEntry(
                key.name,
                format_value(key, getattr(self, key.attr)),
                key.type,
                key.name not in self.overrides,
                key.read_only,
                key.doc,
            )
            for key in LOG_CONFIG_KEYS
            if key.name not in DEPRECATED_KEYS or key.name in self.overrides
        ]


assert {f.name for f in fields(LogConfig)} - {"overrides"} == {k.attr for k in LOG_CONFIG_KEYS}
assert all(LogConfig().get(k.name) == k.default for k in LOG_CONFIG_KEYS)
