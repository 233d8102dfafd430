"""Per-topic log configuration, under Kafka's topic config names and defaults.

``LOG_CONFIG_KEYS`` is the single table of every key: its type, default,
validator, the broker-level synonym (``log.segment.bytes`` for
``segment.bytes``) and a one-line doc, so DescribeConfigs can list them with
``is_default``/``read_only`` and the broker can take defaults from
``server.properties``.  ``LogConfig`` is the parsed, immutable value a ``Log``
reads its settings from; changing a topic's config builds a new one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from samsa.errors import ConfigError

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigType(StrEnum):
    """Kafka's ConfigDef types, as DescribeConfigs v3+ reports them."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"


Validator = Callable[[Any], str | None]  # returns a problem, or None when fine


def _at_least(low: float) -> Validator:
    return lambda v: None if v >= low else f"must be at least {low}"


def _between(low: float, high: float) -> Validator:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


def _one_of(*choices: str) -> Validator:
    return lambda v: None if v in choices else f"must be one of {', '.join(choices)}"


def _matches(pattern: str, what: str) -> Validator:
    compiled = re.compile(pattern)
    return lambda v: None if compiled.fullmatch(v) else f"must be {what}"


def _each_of(*choices: str) -> Validator:
    def check(v: tuple[str, ...]) -> str | None:
        bad = [x for x in v if x not in choices]
        return f"unknown value(s) {bad}; allowed: {', '.join(choices)}" if bad else None

    return check


def _throttled_replicas(v: tuple[str, ...]) -> str | None:
    """Kafka's ThrottledReplicaListValidator: ``*`` or ``partition:broker`` pairs."""
    if v == ("*",) or all(re.fullmatch(r"\d+:\d+", x) for x in v):
        return None
    return "must be * or a list of partition:broker pairs"


@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    attr: str
    type: ConfigType
    default: Any
    doc: str
    validator: Validator | None = None
    synonym: str | None = None  # broker-level key that supplies the default
    read_only: bool = False


def _key(
    name: str,
    type_: ConfigType,
    default: Any,
    doc: str,
    validator: Validator | None = None,
    synonym: str | None = None,
) -> ConfigKey:
    return ConfigKey(name, name.replace(".", "_"), type_, default, doc, validator, synonym)


_T = ConfigType
LOG_CONFIG_KEYS: tuple[ConfigKey, ...] = (
    _key(
        "cleanup.policy",
        _T.LIST,
        ("delete",),
        "delete old segments, compact by key, or both",
        _each_of("delete", "compact"),
        "log.cleanup.policy",
    ),
    _key(
        "compression.type",
        _T.STRING,
        "producer",
        "codec of stored batches; producer keeps the producer's",
        _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        "compression.type",
    ),
    _key(
        "delete.retention.ms",
        _T.LONG,
        86400000,
        "how long delete tombstones survive compaction",
        _at_least(0),
        "log.cleaner.delete.retention.ms",
    ),
    _key(
        "file.delete.delay.ms",
        _T.LONG,
        60000,
        "delay before a deleted segment's files are removed",
        _at_least(0),
        "log.segment.delete.delay.ms",
    ),
    _key(
        "flush.messages",
        _T.LONG,
        LONG_MAX,
        "fsync after this many messages (default: leave it to the OS)",
        _at_least(1),
        "log.flush.interval.messages",
    ),
    _key(
        "flush.ms",
        _T.LONG,
        LONG_MAX,
        "fsync when data is older than this (default: leave it to the OS)",
        _at_least(0),
        "log.flush.interval.ms",
    ),
    # Set and cleared by kafka-reassign-partitions --throttle around every move;
    # kept and described, but Samsa does not throttle replication.
    _key(
        "follower.replication.throttled.replicas",
        _T.LIST,
        (),
        "replicas throttled on the follower side (accepted, not enforced)",
        _throttled_replicas,
    ),
    _key(
        "index.interval.bytes",
        _T.INT,
        4096,
        "bytes of log between offset index entries",
        _at_least(0),
        "log.index.interval.bytes",
    ),
    _key(
        "leader.replication.throttled.replicas",
        _T.LIST,
        (),
        "replicas throttled on the leader side (accepted, not enforced)",
        _throttled_replicas,
    ),
    _key(
        "max.compaction.lag.ms",
        _T.LONG,
        LONG_MAX,
        "longest a message may stay uncompacted",
        _at_least(1),
        "log.cleaner.max.compaction.lag.ms",
    ),
    _key(
        "max.message.bytes",
        _T.INT,
        1048588,
        "largest record batch accepted",
        _at_least(0),
        "message.max.bytes",
    ),
    _key(
        "message.timestamp.after.max.ms",
        _T.LONG,
        LONG_MAX,
        "how far in the future a CreateTime timestamp may be",
        _at_least(0),
        "log.message.timestamp.after.max.ms",
    ),
    _key(
        "message.timestamp.before.max.ms",
        _T.LONG,
        LONG_MAX,
        "how far in the past a CreateTime timestamp may be",
        _at_least(0),
        "log.message.timestamp.before.max.ms",
    ),
    _key(
        "message.timestamp.type",
        _T.STRING,
        "CreateTime",
        "producer's timestamp or the broker's append time",
        _one_of("CreateTime", "LogAppendTime"),
        "log.message.timestamp.type",
    ),
    _key(
        "min.cleanable.dirty.ratio",
        _T.DOUBLE,
        0.5,
        "dirty share of the log that triggers compaction",
        _between(0, 1),
        "log.cleaner.min.cleanable.ratio",
    ),
    _key(
        "min.compaction.lag.ms",
        _T.LONG,
        0,
        "shortest a message stays uncompacted",
        _at_least(0),
        "log.cleaner.min.compaction.lag.ms",
    ),
    _key(
        "min.insync.replicas",
        _T.INT,
        1,
        "replicas that must acknowledge an acks=all write",
        _at_least(1),
        "min.insync.replicas",
    ),
    _key(
        "preallocate",
        _T.BOOLEAN,
        False,
        "preallocate segment files (accepted, not used)",
        None,
        "log.preallocate",
    ),
    _key(
        "retention.bytes",
        _T.LONG,
        -1,
        "largest size of the log before old segments go; -1 = no limit",
        None,
        "log.retention.bytes",
    ),
    _key(
        "retention.ms",
        _T.LONG,
        604800000,
        "age after which old segments go; -1 = forever",
        _at_least(-1),
        "log.retention.ms",
    ),
    _key(
        "segment.bytes",
        _T.INT,
        1073741824,
        "size at which a segment is rolled",
        _at_least(14),
        "log.segment.bytes",
    ),
    _key(
        "segment.index.bytes",
        _T.INT,
        10485760,
        "largest size of an offset or time index",
        _at_least(4),
        "log.index.size.max.bytes",
    ),
    _key(
        "segment.jitter.ms",
        _T.LONG,
        0,
        "random slack subtracted from segment.ms",
        _at_least(0),
        "log.roll.jitter.ms",
    ),
    _key(
        "segment.ms",
        _T.LONG,
        604800000,
        "age at which a segment is rolled",
        _at_least(1),
        "log.roll.ms",
    ),
    _key(
        "unclean.leader.election.enable",
        _T.BOOLEAN,
        False,
        "allow an out-of-sync replica to become leader (may lose data)",
        None,
        "unclean.leader.election.enable",
    ),
    # Deprecated in Kafka 3.x and removed in 4.0, but older tools and client
    # test suites still set them: accepted, stored and described, no effect.
    _key(
        "message.downconversion.enable",
        _T.BOOLEAN,
        True,
        "deprecated (Kafka 3.x): accepted for compatibility, has no effect",
        None,
        "log.message.downconversion.enable",
    ),
    _key(
        "message.format.version",
        _T.STRING,
        "3.0-IV1",
        "deprecated (Kafka 3.x): accepted for compatibility, has no effect",
        _matches(
            r"[0-9]+\.[0-9]+(\.[0-9]+)?(-IV[0-9]+)?", "a Kafka version such as 2.8 or 3.0-IV1"
        ),
        "log.message.format.version",
    ),
    _key(
        "message.timestamp.difference.max.ms",
        _T.LONG,
        LONG_MAX,
        "deprecated (Kafka 3.6): accepted for compatibility, has no effect",
        _at_least(0),
        "log.message.timestamp.difference.max.ms",
    ),
)
DEPRECATED_KEYS = frozenset(
    (
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.difference.max.ms",
    )
)
LOG_CONFIG_BY_NAME: dict[str, ConfigKey] = {k.name: k for k in LOG_CONFIG_KEYS}


def parse_value(key: ConfigKey, raw: str) -> Any:
    """Parse and validate one string value; ConfigError names the key."""
    text = raw.strip()
    try:
        if key.type is ConfigType.BOOLEAN:
            if text.lower() not in ("true", "false"):
                raise ValueError(raw)
            value: Any = text.lower() == "true"
        elif key.type in (ConfigType.INT, ConfigType.LONG):
            value = int(text)
            limit = INT_MAX if key.type is ConfigType.INT else LONG_MAX
            if not -limit - 1 <= value <= limit:
                raise ValueError(raw)
        elif key.type is ConfigType.DOUBLE:
            value = float(text)
        elif key.type is ConfigType.LIST:
            value = tuple(x.strip() for x in text.split(",") if x.strip())
        else:
            value = text
    except ValueError:
        raise ConfigError(
            f"invalid value {raw!r} for configuration {key.name}: expected {key.type.value}"
        ) from None
    problem = key.validator(value) if key.validator else None
    if problem:
        raise ConfigError(f"invalid value {raw!r} for configuration {key.name}: {problem}")
    return value


def format_value(key: ConfigKey, value: Any) -> str:
    """The string Kafka shows for a value (lists comma-joined, booleans lowercase)."""
    if key.type is ConfigType.LIST:
        return ",".join(value)
    if key.type is ConfigType.BOOLEAN:
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One row of DescribeConfigs."""

    name: str
    value: str
    type: ConfigType
    is_default: bool
    read_only: bool
    doc: str


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Settings of one partition's log.  Attribute = key with dots as underscores."""

    cleanup_policy: tuple[str, ...] = ("delete",)
    compression_type: str = "producer"
    delete_retention_ms: int = 86400000
    file_delete_delay_ms: int = 60000
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    follower_replication_throttled_replicas: tuple[str, ...] = ()
    index_interval_bytes: int = 4096
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    max_compaction_lag_ms: int = LONG_MAX
    max_message_bytes: int = 1048588
    message_timestamp_after_max_ms: int = LONG_MAX
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
        """Every key with its value, for DescribeConfigs."""
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
        ]


assert {f.name for f in fields(LogConfig)} - {"overrides"} == {k.attr for k in LOG_CONFIG_KEYS}
assert all(LogConfig().get(k.name) == k.default for k in LOG_CONFIG_KEYS)
