"""``__consumer_offsets`` records of KIP-848 consumer groups, in Kafka's layout.

A consumer group is persisted as several record types rather than one snapshot,
so that a heartbeat writes only what it changed.  Key versions (the int16 that
opens the key) name the record type, as Kafka's coordinator-key ``apiKey``:

==  ==========================================  ==========================
3   ConsumerGroupMetadata (group epoch)          key: group
4   ConsumerGroupPartitionMetadata (topics)      key: group
5   ConsumerGroupMemberMetadata (subscription)   key: group, member
6   ConsumerGroupTargetAssignmentMetadata        key: group
7   ConsumerGroupTargetAssignmentMember          key: group, member
8   ConsumerGroupCurrentMemberAssignment         key: group, member
==  ==========================================  ==========================

Keys and values are framed as ``modern_group_records`` says (streams groups
share the frame): keys are not flexible; values are flexible version 0 and
carry tagged fields that Kafka added later, which we write with their defaults
and ignore on read; a member's ``classic_member_metadata`` (its JoinGroup session timeout and
protocols, for a member of a consumer group that speaks the classic protocol) is
written and read.
Assignments are keyed by topic id (16 bytes), as Kafka stores them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from samsa.protocol.internal_records.modern_group_records import GroupRecordFamily, GroupRecordKey
from samsa.protocol.schema import DataSchema, F

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
MEMBER_KEYS = frozenset({MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})

Assignment = dict[bytes, frozenset[int]]
"""Partitions by topic id."""

_TOPIC_PARTITIONS = [F("topic_id", "uuid"), F("partitions", "[]int32")]

_SCHEMAS: dict[int, DataSchema] = {
    GROUP_METADATA: DataSchema(
        "ConsumerGroupMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("epoch", "int32"),
            F("metadata_hash", "int64", tag=0, tagged="0+", default=0),
        ),
    ),
    PARTITION_METADATA: DataSchema(
        "ConsumerGroupPartitionMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F(
                "topics",
                "[]struct",
                fields=[
                    F("topic_id", "uuid"),
                    F("topic_name", "string"),
                    F("num_partitions", "int32"),
                    F(
                        "partition_racks",
                        "[]struct",
                        fields=[F("partition", "int32"), F("racks", "[]string")],
                    ),
                ],
            ),
        ),
    ),
    MEMBER_METADATA: DataSchema(
        "ConsumerGroupMemberMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("instance_id", "string", nullable="0+"),
            F("rack_id", "string", nullable="0+"),
            F("client_id", "string"),
            F("client_host", "string"),
            F("subscribed_topic_names", "[]string"),
            F("subscribed_topic_regex", "string", nullable="0+"),
            F("rebalance_timeout_ms", "int32", default=-1),
            F("server_assignor", "string", nullable="0+"),
            F(
                "classic_member_metadata",
                "struct",
                nullable="0+",
                default=None,
                tag=0,
                tagged="0+",
                fields=[
                    F("session_timeout_ms", "int32"),
                    F(
                        "supported_protocols",
                        "[]struct",
                        fields=[F("name", "string"), F("metadata", "bytes")],
                    ),
                ],
            ),
        ),
    ),
    TARGET_ASSIGNMENT_METADATA: DataSchema(
        "ConsumerGroupTargetAssignmentMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(F("assignment_epoch", "int32"),),
    ),
    TARGET_ASSIGNMENT_MEMBER: DataSchema(
        "ConsumerGroupTargetAssignmentMemberValue",
        valid=(0, 0),
        flexible=0,
        fields=(F("topic_partitions", "[]struct", fields=_TOPIC_PARTITIONS),),
    ),
    CURRENT_MEMBER_ASSIGNMENT: DataSchema(
        "ConsumerGroupCurrentMemberAssignmentValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("member_epoch", "int32"),
            F("previous_member_epoch", "int32"),
            F("state", "int8"),
            F("assigned_partitions", "[]struct", fields=_TOPIC_PARTITIONS),
            F("partitions_pending_revocation", "[]struct", fields=_TOPIC_PARTITIONS),
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class ConsumerGroupKey(GroupRecordKey):
    """Key of a consumer-group record; ``member_id`` is None for group-wide records."""


CONSUMER_GROUP_RECORDS = GroupRecordFamily(
    "consumer-group", ConsumerGroupKey, _SCHEMAS, MEMBER_KEYS
)
KEY_VERSIONS = CONSUMER_GROUP_RECORDS.key_versions


def decode_consumer_group_key(data: bytes | memoryview) -> ConsumerGroupKey:
    """Decode the key of a consumer-group record (key versions 3-8)."""
    return CONSUMER_GROUP_RECORDS.decode_key(data)


def encode_consumer_group_value(record_type: int, body: dict[str, Any]) -> bytes:
    """Encode the value of ``record_type`` (field names as in ``_SCHEMAS``)."""
    return CONSUMER_GROUP_RECORDS.encode_value(record_type, body)


def decode_consumer_group_value(record_type: int, data: bytes | memoryview) -> dict[str, Any]:
    """Decode the value of ``record_type``; newer value versions are read as v0 (KIP-915)."""
    return CONSUMER_GROUP_RECORDS.decode_value(record_type, data)


def assignment_to_wire(assignment: Assignment) -> list[dict[str, Any]]:
    """An assignment as the ``[]TopicPartitions`` of records and responses, in a stable order."""
    return [
        {"topic_id": topic_id, "partitions": sorted(parts)}
        for topic_id, parts in sorted(assignment.items())
        if parts
    ]


def assignment_from_wire(topics: list[dict[str, Any]] | None) -> Assignment:
    """The inverse of ``assignment_to_wire`` (empty topics dropped)."""
    out: Assignment = {}
    for t in topics or ():
        parts = frozenset(t["partitions"])
        if parts:
            out[bytes(t["topic_id"])] = out.get(bytes(t["topic_id"]), frozenset()) | parts
    return out
