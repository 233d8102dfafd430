"""Broker keys of the log: segments, retention, flushing, timestamps, the cleaner
and compression (most are the broker-wide defaults of a topic config)."""

from __future__ import annotations

from samsa.config.kafka_versions import kafka_version
from samsa.config.values import INT64_MAX, ConfigKey, parse_bool

LOG_KEYS: list[ConfigKey] = [
    # Segments and retention.
    ConfigKey("log.segment.bytes", int, 1073741824, "Segment size before rolling."),
    ConfigKey("log.roll.ms", int, 604800000, "Segment age before rolling."),
    ConfigKey(
        "log.roll.hours", int, 168, "Segment age before rolling, in hours (log.roll.ms wins)."
    ),
    ConfigKey("log.retention.ms", int, 604800000, "Time retention of the delete policy."),
    ConfigKey(
        "log.retention.minutes", int, -2, "Time retention in minutes (log.retention.ms wins)."
    ),
    ConfigKey("log.retention.hours", int, 168, "Time retention in hours."),
    ConfigKey("log.retention.bytes", int, -1, "Size retention per partition (-1 = none)."),
    ConfigKey("log.retention.check.interval.ms", int, 300000, "How often retention runs."),
    ConfigKey("log.roll.jitter.ms", int, 0, "Random slack subtracted from the segment age."),
    ConfigKey("log.roll.jitter.hours", int, 0, "Segment roll jitter in hours (ms wins)."),
    ConfigKey(
        "log.segment.delete.delay.ms", int, 60000, "Delay before a deleted segment's files go."
    ),
    ConfigKey(
        "log.preallocate", parse_bool, False, "Preallocate segment files (accepted, not used)."
    ),
    # Indexes and flushing.
    ConfigKey("log.index.interval.bytes", int, 4096, "Bytes between offset index entries."),
    ConfigKey("log.index.size.max.bytes", int, 10485760, "Maximum index file size."),
    ConfigKey("log.flush.interval.messages", int, INT64_MAX, "fsync after this many messages."),
    ConfigKey("log.flush.interval.ms", int, -1, "fsync after this long (-1 = page cache decides)."),
    ConfigKey(
        "log.flush.offset.checkpoint.interval.ms",
        int,
        60000,
        "How often recovery points are checkpointed.",
    ),
    ConfigKey(
        "log.flush.scheduler.interval.ms",
        int,
        INT64_MAX,
        "Default of flush.ms when log.flush.interval.ms is unset.",
    ),
    # Record timestamps and formats.
    ConfigKey("log.message.timestamp.type", str, "CreateTime", "CreateTime or LogAppendTime."),
    ConfigKey(
        "log.message.timestamp.before.max.ms",
        int,
        INT64_MAX,
        "How far in the past a CreateTime timestamp may be.",
    ),
    ConfigKey(
        "log.message.timestamp.after.max.ms",
        int,
        3600000,
        "How far in the future a CreateTime timestamp may be (Kafka 4.x: one hour).",
    ),
    ConfigKey(
        "log.message.timestamp.difference.max.ms",
        int,
        INT64_MAX,
        "Deprecated (Kafka 3.6): accepted, no effect.",
    ),
    ConfigKey(
        "log.message.downconversion.enable", parse_bool, True, "Deprecated (Kafka 3.x): no effect."
    ),
    # Ignored (KRaft and RecordBatch v2 only), but old server.properties set them.
    ConfigKey(
        "log.message.format.version",
        kafka_version,
        "3.0-IV1",
        "Deprecated in Kafka 3.x; accepted when Kafka would accept it, no effect.",
    ),
    ConfigKey(
        "inter.broker.protocol.version",
        kafka_version,
        "3.9-IV0",
        "Ignored in KRaft mode (as in Kafka 3.x); accepted when Kafka would accept it.",
    ),
    # Cleanup policy and the cleaner.
    ConfigKey("log.cleanup.policy", str, "delete", "delete, compact or compact,delete."),
    ConfigKey("log.cleaner.enable", parse_bool, True, "Run the log cleaner for compacted topics."),
    ConfigKey("log.cleaner.backoff.ms", int, 15000, "Cleaner sleep between passes."),
    ConfigKey("log.cleaner.delete.retention.ms", int, 86400000, "Tombstone retention."),
    ConfigKey("log.cleaner.min.cleanable.ratio", float, 0.5, "Dirty ratio before cleaning."),
    ConfigKey("log.cleaner.min.compaction.lag.ms", int, 0, "Shortest a message stays uncompacted."),
    ConfigKey(
        "log.cleaner.max.compaction.lag.ms",
        int,
        INT64_MAX,
        "Longest a message may stay uncompacted.",
    ),
    # Compression and tiered storage.
    ConfigKey("compression.type", str, "producer", "Broker-side compression (producer = keep)."),
    ConfigKey("compression.gzip.level", int, -1, "gzip level (accepted, not used)."),
    ConfigKey("compression.lz4.level", int, 9, "lz4 level (accepted, not used)."),
    ConfigKey("compression.zstd.level", int, 3, "zstd level (accepted, not used)."),
    ConfigKey(
        "max.decompressed.message.bytes",
        int,
        2147483639,
        "Default largest record body of a compressed batch the broker decompresses"
        " (topics' max.decompressed.message.bytes; INVALID_RECORD over it).",
    ),
]
