"""``LOG_CONFIG_KEYS``: every topic config key Samsa knows, with Kafka's names and defaults.

The single table of every key: its type, default, validator, the
broker-level synonym (``log.segment.bytes`` for ``segment.bytes``) and a
one-line doc, so DescribeConfigs can list them with ``is_default``/``read_only``
and the broker can take defaults from ``server.properties``.  A module of its
own because it is data: adding a key is one entry here and one field on
``LogConfig`` (log_config.py checks the two agree at import).
"""

from __future__ import annotations

import re
from typing import Any

from samsa.protocol.kafka_versions import EXPECTED as KAFKA_VERSION
from samsa.protocol.kafka_versions import is_kafka_version
from samsa.storage.topic_config.types import (
    LONG_MAX,
    ConfigKey,
    ConfigType,
    Validator,
    at_least,
    between,
    each_of,
    one_of,
    one_of_ints,
)


def _kafka_version(v: str) -> str | None:
    """What Kafka's MetadataVersionValidator accepts (see samsa.protocol.kafka_versions)."""
    return None if is_kafka_version(v) else f"must be {KAFKA_VERSION}"


_THROTTLED_REPLICA = re.compile(r"[0-9]+:[0-9]+")


def _throttled_replicas(v: tuple[str, ...]) -> str | None:
    """Kafka's ThrottledReplicaListValidator: '*' alone, or partition:broker pairs."""
    if v == ("*",) or all(_THROTTLED_REPLICA.fullmatch(x) for x in v):
        return None
    return "must be '*' or a list of partitionId:brokerId"


STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."
SUBJECT_NAME_STRATEGIES = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
TOPIC_NAME_STRATEGY = STRATEGY_PACKAGE + "TopicNameStrategy"


def strategy_name(value: str) -> str:
    """``TopicNameStrategy`` for ``io.confluent...subject.TopicNameStrategy`` or itself."""
    return value.removeprefix(STRATEGY_PACKAGE)


def _subject_name_strategy(v: str) -> str | None:
    """Confluent's three strategies, by class name (short or in full)."""
    if strategy_name(v) in SUBJECT_NAME_STRATEGIES:
        return None
    return "must be one of " + ", ".join(STRATEGY_PACKAGE + s for s in SUBJECT_NAME_STRATEGIES)


DECOMPRESSED_MAX = 2147483639
"""Kafka's default and largest ``max.decompressed.message.bytes`` (Integer.MAX_VALUE - 8)."""


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
        each_of("delete", "compact"),
        "log.cleanup.policy",
    ),
    _key(
        "compression.type",
        _T.STRING,
        "producer",
        "codec of stored batches; producer keeps the producer's",
        one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        "compression.type",
    ),
    _key(
        "delete.retention.ms",
        _T.LONG,
        86400000,
        "how long delete tombstones survive compaction",
        at_least(0),
        "log.cleaner.delete.retention.ms",
    ),
    _key(
        "file.delete.delay.ms",
        _T.LONG,
        60000,
        "delay before a deleted segment's files are removed",
        at_least(0),
        "log.segment.delete.delay.ms",
    ),
    _key(
        "flush.messages",
        _T.LONG,
        LONG_MAX,
        "fsync after this many messages (default: leave it to the OS)",
        at_least(1),
        "log.flush.interval.messages",
    ),
    _key(
        "flush.ms",
        _T.LONG,
        LONG_MAX,
        "fsync when data is older than this (default: leave it to the OS)",
        at_least(0),
        "log.flush.interval.ms",
    ),
    _key(
        "index.interval.bytes",
        _T.INT,
        4096,
        "bytes of log between offset index entries",
        at_least(0),
        "log.index.interval.bytes",
    ),
    _key(
        "max.compaction.lag.ms",
        _T.LONG,
        LONG_MAX,
        "longest a message may stay uncompacted",
        at_least(1),
        "log.cleaner.max.compaction.lag.ms",
    ),
    _key(
        "max.message.bytes",
        _T.INT,
        1048588,
        "largest record batch accepted",
        at_least(0),
        "message.max.bytes",
    ),
    _key(
        "message.timestamp.after.max.ms",
        _T.LONG,
        3600000,
        "how far in the future a CreateTime timestamp may be",
        at_least(0),
        "log.message.timestamp.after.max.ms",
    ),
    _key(
        "message.timestamp.before.max.ms",
        _T.LONG,
        LONG_MAX,
        "how far in the past a CreateTime timestamp may be",
        at_least(0),
        "log.message.timestamp.before.max.ms",
    ),
    _key(
        "message.timestamp.type",
        _T.STRING,
        "CreateTime",
        "producer's timestamp or the broker's append time",
        one_of("CreateTime", "LogAppendTime"),
        "log.message.timestamp.type",
    ),
    _key(
        "min.cleanable.dirty.ratio",
        _T.DOUBLE,
        0.5,
        "dirty share of the log that triggers compaction",
        between(0, 1),
        "log.cleaner.min.cleanable.ratio",
    ),
    _key(
        "min.compaction.lag.ms",
        _T.LONG,
        0,
        "shortest a message stays uncompacted",
        at_least(0),
        "log.cleaner.min.compaction.lag.ms",
    ),
    _key(
        "min.insync.replicas",
        _T.INT,
        1,
        "replicas that must acknowledge an acks=all write",
        at_least(1),
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
        at_least(-1),
        "log.retention.ms",
    ),
    _key(
        "segment.bytes",
        _T.INT,
        1073741824,
        "size at which a segment is rolled",
        at_least(14),
        "log.segment.bytes",
    ),
    _key(
        "segment.index.bytes",
        _T.INT,
        10485760,
        "largest size of an offset or time index",
        at_least(4),
        "log.index.size.max.bytes",
    ),
    _key(
        "segment.jitter.ms",
        _T.LONG,
        0,
        "random slack subtracted from segment.ms",
        at_least(0),
        "log.roll.jitter.ms",
    ),
    _key(
        "segment.ms",
        _T.LONG,
        604800000,
        "age at which a segment is rolled",
        at_least(1),
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
    # levels, replication throttling): accepted, stored and described so tools
    # that set them work.  Then tiered storage's (remote_rules checks them).
    _key(
        "compression.gzip.level",
        _T.INT,
        -1,
        "gzip level when the broker compresses (accepted, not used)",
        one_of_ints((-1, -1), (1, 9)),
        "compression.gzip.level",
    ),
    _key(
        "compression.lz4.level",
        _T.INT,
        9,
        "lz4 level when the broker compresses (accepted, not used)",
        between(1, 17),
        "compression.lz4.level",
    ),
    _key(
        "compression.zstd.level",
        _T.INT,
        3,
        "zstd level when the broker compresses (accepted, not used)",
        between(-131072, 22),
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
        at_least(-2),
        "log.local.retention.bytes",
    ),
    _key(
        "local.retention.ms",
        _T.LONG,
        -2,
        "tiered storage: local time retention (-2 = retention.ms)",
        at_least(-2),
        "log.local.retention.ms",
    ),
    _key(
        "remote.storage.enable",
        _T.BOOLEAN,
        False,
        "tiered storage: copy closed segments to the remote store, serve old reads from it",
    ),
    _key(
        "remote.log.copy.disable",
        _T.BOOLEAN,
        False,
        "tiered storage: stop copying; remote data stays readable until it expires",
    ),
    _key(
        "remote.log.delete.on.disable",
        _T.BOOLEAN,
        False,
        "tiered storage: when remote.storage.enable turns false, delete the remote data",
    ),
    # Confluent Server's broker-side schema id validation (samsa.registry):
    # records must carry the magic byte and a schema id registered for the
    # topic's subject (replication/leader/schema_validation.py checks them).
    _key(
        "confluent.key.schema.validation",
        _T.BOOLEAN,
        False,
        "refuse records whose key lacks a schema id registered for the key subject",
    ),
    _key(
        "confluent.key.subject.name.strategy",
        _T.STRING,
        TOPIC_NAME_STRATEGY,
        "how the key subject is named: TopicNameStrategy, RecordNameStrategy, "
        "TopicRecordNameStrategy",
        _subject_name_strategy,
    ),
    _key(
        "confluent.value.schema.validation",
        _T.BOOLEAN,
        False,
        "refuse records whose value lacks a schema id registered for the value subject",
    ),
    _key(
        "confluent.value.subject.name.strategy",
        _T.STRING,
        TOPIC_NAME_STRATEGY,
        "how the value subject is named: TopicNameStrategy, RecordNameStrategy, "
        "TopicRecordNameStrategy",
        _subject_name_strategy,
    ),
    _key(
        "remote.copy.lag.bytes",
        _T.LONG,
        -1,
        "tiered storage: local bytes before a copy to remote storage (accepted, not used)",
        at_least(-1),
        "log.remote.copy.lag.bytes",
    ),
    _key(
        "remote.copy.lag.ms",
        _T.LONG,
        0,
        "tiered storage: age before a copy to remote storage (accepted, not used)",
        at_least(-1),
        "log.remote.copy.lag.ms",
    ),
    _key(
        "max.decompressed.message.bytes",
        _T.INT,
        DECOMPRESSED_MAX,
        "largest record body a compressed batch may hold where the broker decompresses it "
        "(compacted-topic key and schema id checks on produce, the cleaner, ListOffsets by "
        "timestamp): a larger one is refused with INVALID_RECORD before it is inflated",
        between(1, DECOMPRESSED_MAX),
        "max.decompressed.message.bytes",
    ),
    _key(
        "errors.deadletterqueue.group.enable",
        _T.BOOLEAN,
        False,
        "Kafka Streams groups' dead letter queue (accepted, not used)",
    ),
    # Deprecated in Kafka 3.x and removed in 4.0, but older tools and client
    # test suites still set them: accepted and stored, no effect; described only
    # on a topic that sets them (Kafka 4.x no longer lists them, and refuses them).
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
        at_least(0),
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
