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
from samsa.kafka_versions import EXPECTED as KAFKA_VERSION
from samsa.kafka_versions import is_kafka_version

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


def _kafka_version(v: str) -> str | None:
    """What Kafka's MetadataVersionValidator accepts (see samsa.kafka_versions)."""
    return None if is_kafka_version(v) else f"must be {KAFKA_VERSION}"


def _each_of(*choices: str) -> Validator:
    def check(v: tuple[str, ...]) -> str | None:
        bad = [x for x in v if x not in choices]
        return f"unknown value(s) {bad}; allowed: {', '.join(choices)}" if bad else None

    return check


def _one_of_ints(*ranges: tuple[int, int]) -> Validator:
    def check(v: int) -> str | None:
        if any(low <= v <= high for low, high in ranges):
            return None
        return "must be " + " or ".join(
            str(low) if low == high else f"between {low} and {high}" for low, high in ranges
        )

    return check


_THROTTLED_REPLICA = re.compile(r"[0-9]+:[0-9]+")


def _throttled_replicas(v: tuple[str, ...]) -> str | None:
    """Kafka's ThrottledReplicaListValidator: '*' alone, or partition:broker pairs."""
    if v == ("*",) or all(_THROTTLED_REPLICA.fullmatch(x) for x in v):
        return None
    return "must be '*' or a list of partitionId:brokerId"


def _remote_storage_off(v: bool) -> str | None:
    if v:
        return (
            "Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage."
        )
    return None


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
    _key(
        "index.interval.bytes",
        _T.INT,
        4096,
        "bytes of log between offset index entries",
        _at_least(0),
        "log.index.interval.bytes",
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
    # Kafka 3.x/4.x topic configs for features Samsa does not have (codec
    # levels, replication throttling, tiered storage): accepted, stored and
    # described so tools that set them work; remote storage can only be off.
    _key(
        "compression.gzip.level",
        _T.INT,
        -1,
        "gzip level when the broker compresses (accepted, not used)",
        _one_of_ints((-1, -1), (1, 9)),
        "compression.gzip.level",
    ),
    _key(
        "compression.lz4.level",
        _T.INT,
        9,
        "lz4 level when the broker compresses (accepted, not used)",
        _between(1, 17),
        "compression.lz4.level",
    ),
    _key(
        "compression.zstd.level",
        _T.INT,
        3,
        "zstd level when the broker compresses (accepted, not used)",
        _between(-131072, 22),
        "compression.zstd.level",
    ),
    _key(
        "leader.replication.throttled.replicas",
        _T.LIST,
        (),
        "replicas throttled on the leader side (accepted, not applied)",
        _throttled_replicas,
    ),
    _key(
        "follower.replication.throttled.replicas",
        _T.LIST,
        (),
        "replicas throttled on the follower side (accepted, not applied)",
        _throttled_replicas,
    ),
    _key(
        "local.retention.bytes",
        _T.LONG,
        -2,
        "tiered storage: local size retention (-2 = retention.bytes)",
        _at_least(-2),
        "log.local.retention.bytes",
    ),
    _key(
        "local.retention.ms",
        _T.LONG,
        -2,
        "tiered storage: local time retention (-2 = retention.ms)",
        _at_least(-2),
        "log.local.retention.ms",
    ),
    _key(
        "remote.storage.enable",
        _T.BOOLEAN,
        False,
        "tiered storage (not available: must stay false)",
        _remote_storage_off,
    ),
    _key("remote.log.copy.disable", _T.BOOLEAN, False, "tiered storage: stop copying"),
    _key("remote.log.delete.on.disable", _T.BOOLEAN, False, "tiered storage: delete on disable"),
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
        _kafka_version,
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
    index_interval_bytes: int = 4096
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
