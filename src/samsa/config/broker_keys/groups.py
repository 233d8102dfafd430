"""Broker keys of the group coordinator: classic and KIP-848 consumer groups,
share groups (KIP-932) and their state topic, KIP-1071 streams groups,
committed offsets."""

from __future__ import annotations

from samsa.config.values import INT32_MAX, ConfigKey, int_between, parse_list


def _share_offset_reset(value: str) -> str:
    lowered = value.strip().lower()
    if lowered not in ("latest", "earliest"):
        raise ValueError("must be latest or earliest")
    return lowered


GROUP_KEYS: list[ConfigKey] = [
    ConfigKey(
        "group.initial.rebalance.delay.ms",
        int,
        3000,
        "Wait for more members of a new group (tests: 0).",
    ),
    ConfigKey("group.min.session.timeout.ms", int, 6000, "Smallest accepted session timeout."),
    ConfigKey("group.max.session.timeout.ms", int, 1800000, "Largest accepted session timeout."),
    ConfigKey("group.max.size", int, INT32_MAX, "Members per group."),
    ConfigKey(
        "group.consumer.session.timeout.ms",
        int,
        45000,
        "KIP-848 consumer groups: a member silent this long is removed.",
    ),
    ConfigKey(
        "group.consumer.heartbeat.interval.ms",
        int,
        5000,
        "KIP-848 consumer groups: how often members are told to heartbeat.",
    ),
    ConfigKey(
        "group.consumer.assignors",
        parse_list,
        ["uniform", "range"],
        "KIP-848 server-side assignors; the first is the default.",
    ),
    ConfigKey("group.consumer.max.size", int, INT32_MAX, "Members per consumer group."),
    ConfigKey(
        "group.consumer.migration.policy",
        str,
        "bidirectional",
        "KIP-848 online migration: disabled, upgrade, downgrade or bidirectional.",
    ),
    ConfigKey(
        "group.share.session.timeout.ms",
        int,
        45000,
        "Share groups: a member silent this long is removed.",
    ),
    ConfigKey(
        "group.share.heartbeat.interval.ms",
        int,
        5000,
        "Share groups: how often members are told to heartbeat.",
    ),
    ConfigKey("group.share.max.size", int, 200, "Members per share group."),
    ConfigKey(
        "group.share.record.lock.duration.ms",
        int_between(1000, 3_600_000),
        30000,
        "Share groups: how long an acquired record stays with its consumer.",
    ),
    ConfigKey(
        "group.share.delivery.count.limit",
        int_between(2, 10),
        5,
        "Share groups: deliveries of a record before it is archived.",
    ),
    ConfigKey(
        "group.share.partition.max.record.locks",
        int_between(100, 10_000),
        2000,
        "Share groups: records in flight per share partition.",
    ),
    ConfigKey(
        "group.streams.session.timeout.ms",
        int,
        45000,
        "Streams groups: a member silent this long is removed.",
    ),
    ConfigKey(
        "group.streams.min.session.timeout.ms",
        int,
        45000,
        "Streams groups: the smallest streams.session.timeout.ms a group may set.",
    ),
    ConfigKey(
        "group.streams.max.session.timeout.ms",
        int,
        60000,
        "Streams groups: the largest streams.session.timeout.ms a group may set.",
    ),
    ConfigKey(
        "group.streams.heartbeat.interval.ms",
        int,
        5000,
        "Streams groups: how often members are told to heartbeat.",
    ),
    ConfigKey(
        "group.streams.min.heartbeat.interval.ms",
        int,
        5000,
        "Streams groups: the smallest streams.heartbeat.interval.ms a group may set.",
    ),
    ConfigKey(
        "group.streams.max.heartbeat.interval.ms",
        int,
        15000,
        "Streams groups: the largest streams.heartbeat.interval.ms a group may set.",
    ),
    ConfigKey("group.streams.max.size", int, INT32_MAX, "Members per streams group."),
    ConfigKey(
        "group.streams.num.standby.replicas",
        int,
        0,
        "Streams groups: standby replicas of each stateful task.",
    ),
    ConfigKey(
        "group.streams.max.standby.replicas",
        int,
        2,
        "Streams groups: the most streams.num.standby.replicas a group may set.",
    ),
    ConfigKey(
        "group.streams.initial.rebalance.delay.ms",
        int,
        3000,
        "Streams groups: wait for more members of a new group before the first assignment"
        " (tests: 0).",
    ),
    ConfigKey(
        "group.streams.task.offset.interval.ms",
        int,
        60000,
        "Streams groups: how often members report their tasks' changelog offsets.",
    ),
    ConfigKey(
        "group.streams.acceptable.recovery.lag",
        int,
        10000,
        "Streams groups: the lag under which a member counts as caught up on a task.",
    ),
    ConfigKey(
        "share.coordinator.state.topic.num.partitions",
        int,
        50,
        "Partitions of __share_group_state.",
    ),
    ConfigKey(
        "share.coordinator.state.topic.replication.factor",
        int,
        3,
        "Replication of __share_group_state (capped at the live brokers).",
    ),
    ConfigKey(
        "share.coordinator.state.topic.min.isr",
        int,
        2,
        "min.insync.replicas of __share_group_state.",
    ),
    ConfigKey(
        "share.auto.offset.reset",
        _share_offset_reset,
        "latest",
        "Share groups: where a share partition starts (latest or earliest); the"
        " default of Kafka's group config of the same name.",
    ),
    ConfigKey("offsets.topic.num.partitions", int, 50, "Partitions of __consumer_offsets."),
    ConfigKey(
        "offsets.topic.segment.bytes",
        int,
        104857600,
        "Segment size of __consumer_offsets (kept small so compaction can reclaim it).",
    ),
    ConfigKey(
        "offsets.topic.replication.factor",
        int,
        3,
        "Replication of __consumer_offsets (1 on one node).",
    ),
    ConfigKey(
        "offsets.retention.minutes",
        int,
        10080,
        "Committed offsets of empty groups expire after this.",
    ),
    ConfigKey("offsets.retention.check.interval.ms", int, 600000, "How often offset expiry runs."),
    ConfigKey("offset.metadata.max.bytes", int, 4096, "Largest commit metadata string."),
]
