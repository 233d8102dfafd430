"""Topic and partition records: creation, leadership/ISR changes, deletion.

Transcribed from Kafka's TopicRecord, PartitionRecord, PartitionChangeRecord and
RemoveTopicRecord JSON, flexible from v0.  PartitionRecord v1 adds each replica's
log directory (KIP-858), v2 the eligible leader replicas (KIP-966).
PartitionChangeRecord carries only what changed, as tagged fields whose defaults
mean "unchanged": null lists, ``leader`` -2, ``leader_recovery_state`` -1.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

TOPIC = DataSchema(
    "TopicRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("name", "string"), F("topic_id", "uuid")),
)

PARTITION = DataSchema(
    "PartitionRecord",
    valid=(0, 2),
    flexible=0,
    fields=(
        F("partition_id", "int32", default=-1),
        F("topic_id", "uuid"),
        F("replicas", "[]int32"),
        F("isr", "[]int32"),
        F("removing_replicas", "[]int32"),
        F("adding_replicas", "[]int32"),
        F("leader", "int32", default=-1),
        F("leader_recovery_state", "int8", tag=0, tagged="0+", default=0),
        F("leader_epoch", "int32", default=-1),
        F("partition_epoch", "int32", default=-1),
        F("directories", "[]uuid", "1+"),
        F(
            "eligible_leader_replicas",
            "[]int32",
            "2+",
            nullable="2+",
            tag=1,
            tagged="2+",
            default=None,
        ),
        F("last_known_elr", "[]int32", "2+", nullable="2+", tag=2, tagged="2+", default=None),
    ),
)

PARTITION_CHANGE = DataSchema(
    "PartitionChangeRecord",
    valid=(0, 2),
    flexible=0,
    fields=(
        F("partition_id", "int32", default=-1),
        F("topic_id", "uuid"),
        F("isr", "[]int32", nullable="0+", tag=0, tagged="0+", default=None),
        F("leader", "int32", tag=1, tagged="0+", default=-2),
        F("replicas", "[]int32", nullable="0+", tag=2, tagged="0+", default=None),
        F("removing_replicas", "[]int32", nullable="0+", tag=3, tagged="0+", default=None),
        F("adding_replicas", "[]int32", nullable="0+", tag=4, tagged="0+", default=None),
        F("leader_recovery_state", "int8", tag=5, tagged="0+", default=-1),
        F("directories", "[]uuid", "1+", nullable="1+", tag=8, tagged="1+", default=None),
        F(
            "eligible_leader_replicas",
            "[]int32",
            "2+",
            nullable="2+",
            tag=6,
            tagged="2+",
            default=None,
        ),
        F("last_known_elr", "[]int32", "2+", nullable="2+", tag=7, tagged="2+", default=None),
    ),
)

REMOVE_TOPIC = DataSchema(
    "RemoveTopicRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("topic_id", "uuid"),),
)

# (api key, schema), as Kafka's MetadataRecordType numbers them.
RECORDS: tuple[tuple[int, DataSchema], ...] = (
    (2, TOPIC),
    (3, PARTITION),
    (5, PARTITION_CHANGE),
    (9, REMOVE_TOPIC),
)
