"""``LOG_CONFIG_KEYS``: every topic config key Samsa knows, with Kafka's names and defaults.

The single table of every key: its type, default, validator, the
broker-level synonym (``log.segment.bytes`` for ``segment.bytes``) and a
one-line doc, so DescribeConfigs can list them with ``is_default``/``read_only``
and the broker can take defaults from ``server.properties``.  A module of its
own because it is data: adding a key is one entry here (or in its family's
module: ``tiered_keys``, ``schema_validation_keys``) and one field on
``LogConfig`` (log_config.py checks the two agree at import).  The order is
the table's, not the user's: DescribeConfigs sorts by name.
"""

from __future__ import annotations

import re

from samsa.protocol.kafka_versions import EXPECTED as KAFKA_VERSION
from samsa.protocol.kafka_versions import is_kafka_version
from samsa.storage.topic_config.schema_validation_keys import SCHEMA_VALIDATION_KEYS
from samsa.storage.topic_config.tiered_keys import TIERED_STORAGE_KEYS
from samsa.storage.topic_config.types import (
    LONG_MAX,
    ConfigKey,
    ConfigType,
    at_least,
    between,
    each_of,
    one_of,
    one_of_ints,
    topic_key,
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


DECOMPRESSED_MAX = 2147483639
"""Kafka's default and largest ``max.decompressed.message.bytes`` (Integer.MAX_VALUE - 8)."""


_T = ConfigType
LOG_CONFIG_KEYS: tuple[ConfigKey, ...] = (
    topic_key(
        "cleanup.policy",
        _T.LIST,
        ("delete",),
        "delete old segments, compact by key, or both",
        each_of("delete", "compact"),
        "log.cleanup.policy",
    ),
    topic_key(
        "compression.type",
        _T.STRING,
        "producer",
        "codec of stored batches; producer keeps the producer's",
        one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        "compression.type",
    ),
    topic_key(
        "delete.retention.ms",
        _T.LONG,
        86400000,
        "how long delete tombstones survive compaction",
        at_least(0),
        "log.cleaner.delete.retention.ms",
    ),
    topic_key(
        "file.delete.delay.ms",
        _T.LONG,
        60000,
        "delay before a deleted segment's files are removed",
        at_least(0),
        "log.segment.delete.delay.ms",
    ),
    topic_key(
        "flush.messages",
        _T.LONG,
        LONG_MAX,
        "fsync after this many messages (default: leave it to the OS)",
        at_least(1),
        "log.flush.interval.messages",
    ),
    topic_key(
        "flush.ms",
        _T.LONG,
        LONG_MAX,
        "fsync when data is older than this (default: leave it to the OS)",
        at_least(0),
        "log.flush.interval.ms",
    ),
    topic_key(
        "index.interval.bytes",
        _T.INT,
        4096,
        "bytes of log between offset index entries",
        at_least(0),
        "log.index.interval.bytes",
    ),
    topic_key(
        "max.compaction.lag.ms",
        _T.LONG,
        LONG_MAX,
        "longest a message may stay uncompacted",
        at_least(1),
        "log.cleaner.max.compaction.lag.ms",
    ),
    topic_key(
        "max.message.bytes",
        _T.INT,
        1048588,
        "largest record batch accepted",
        at_least(0),
        "message.max.bytes",
    ),
    topic_key(
        "message.timestamp.after.max.ms",
        _T.LONG,
        3600000,
        "how far in the future a CreateTime timestamp may be",
        at_least(0),
        "log.message.timestamp.after.max.ms",
    ),
    topic_key(
        "message.timestamp.before.max.ms",
        _T.LONG,
        LONG_MAX,
        "how far in the past a CreateTime timestamp may be",
        at_least(0),
        "log.message.timestamp.before.max.ms",
    ),
    topic_key(
        "message.timestamp.type",
        _T.STRING,
        "CreateTime",
        "producer's timestamp or the broker's append time",
        one_of("CreateTime", "LogAppendTime"),
        "log.message.timestamp.type",
    ),
    topic_key(
        "min.cleanable.dirty.ratio",
        _T.DOUBLE,
        0.5,
        "dirty share of the log that triggers compaction",
        between(0, 1),
        "log.cleaner.min.cleanable.ratio",
    ),
    topic_key(
        "min.compaction.lag.ms",
        _T.LONG,
        0,
        "shortest a message stays uncompacted",
        at_least(0),
        "log.cleaner.min.compaction.lag.ms",
    ),
    topic_key(
        "min.insync.replicas",
        _T.INT,
        1,
        "replicas that must acknowledge an acks=all write",
        at_least(1),
        "min.insync.replicas",
    ),
    topic_key(
        "preallocate",
        _T.BOOLEAN,
        False,
        "preallocate segment files (accepted, not used)",
        None,
        "log.preallocate",
    ),
    topic_key(
        "retention.bytes",
        _T.LONG,
        -1,
        "largest size of the log before old segments go; -1 = no limit",
        None,
        "log.retention.bytes",
    ),
    topic_key(
        "retention.ms",
        _T.LONG,
        604800000,
        "age after which old segments go; -1 = forever",
        at_least(-1),
        "log.retention.ms",
    ),
    topic_key(
        "segment.bytes",
        _T.INT,
        1073741824,
        "size at which a segment is rolled",
        at_least(14),
        "log.segment.bytes",
    ),
    topic_key(
        "segment.index.bytes",
        _T.INT,
        10485760,
        "largest size of an offset or time index",
        at_least(4),
        "log.index.size.max.bytes",
    ),
    topic_key(
        "segment.jitter.ms",
        _T.LONG,
        0,
        "random slack subtracted from segment.ms",
        at_least(0),
        "log.roll.jitter.ms",
    ),
    topic_key(
        "segment.ms",
        _T.LONG,
        604800000,
        "age at which a segment is rolled",
        at_least(1),
        "log.roll.ms",
    ),
    topic_key(
        "unclean.leader.election.enable",
        _T.BOOLEAN,
        False,
        "allow an out-of-sync replica to become leader (may lose data)",
        None,
        "unclean.leader.election.enable",
    ),
    # Kafka 3.x/4.x topic configs for features Samsa does not have (codec
    # levels, replication throttling): accepted, stored and described so tools
    # that set them work.
    topic_key(
        "compression.gzip.level",
        _T.INT,
        -1,
        "gzip level when the broker compresses (accepted, not used)",
        one_of_ints((-1, -1), (1, 9)),
        "compression.gzip.level",
    ),
    topic_key(
        "compression.lz4.level",
        _T.INT,
        9,
        "lz4 level when the broker compresses (accepted, not used)",
        between(1, 17),
        "compression.lz4.level",
    ),
    topic_key(
        "compression.zstd.level",
        _T.INT,
        3,
        "zstd level when the broker compresses (accepted, not used)",
        between(-131072, 22),
        "compression.zstd.level",
    ),
    topic_key(
        "leader.replication.throttled.replicas",
        _T.LIST,
        (),
        "replicas throttled on the leader side (accepted, not applied)",
        _throttled_replicas,
    ),
    topic_key(
        "follower.replication.throttled.replicas",
        _T.LIST,
        (),
        "replicas throttled on the follower side (accepted, not applied)",
        _throttled_replicas,
    ),
    # Families of their own: tiered storage's, Confluent's schema id validation.
    *TIERED_STORAGE_KEYS,
    *SCHEMA_VALIDATION_KEYS,
    topic_key(
        "max.decompressed.message.bytes",
        _T.INT,
        DECOMPRESSED_MAX,
        "largest record body a compressed batch may hold where the broker decompresses it "
        "(compacted-topic key and schema id checks on produce, the cleaner, ListOffsets by "
        "timestamp): a larger one is refused with INVALID_RECORD before it is inflated",
        between(1, DECOMPRESSED_MAX),
        "max.decompressed.message.bytes",
    ),
    topic_key(
        "errors.deadletterqueue.group.enable",
        _T.BOOLEAN,
        False,
        "Kafka Streams groups' dead letter queue (accepted, not used)",
    ),
    # Deprecated in Kafka 3.x and removed in 4.0, but older tools and client
    # test suites still set them: accepted and stored, no effect; described only
    # on a topic that sets them (Kafka 4.x no longer lists them, and refuses them).
    topic_key(
        "message.downconversion.enable",
        _T.BOOLEAN,
        True,
        "deprecated (Kafka 3.x): accepted for compatibility, has no effect",
        None,
        "log.message.downconversion.enable",
    ),
    topic_key(
        "message.format.version",
        _T.STRING,
        "3.0-IV1",
        "deprecated (Kafka 3.x): accepted for compatibility, has no effect",
        _kafka_version,
        "log.message.format.version",
    ),
    topic_key(
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
assert len(LOG_CONFIG_BY_NAME) == len(LOG_CONFIG_KEYS), "a topic config key is declared twice"
