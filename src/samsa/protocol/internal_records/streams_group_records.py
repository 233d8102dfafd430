"""``__consumer_offsets`` records of KIP-1071 streams groups, in Kafka 4.4's layout.

As for KIP-848 consumer groups, a streams group is a set of records so that a
heartbeat writes only what it changed.  The key's opening int16 names the
record type (Kafka's coordinator-key ``apiKey``); 18 was a partition-metadata
record that Kafka dropped before release and no longer writes:

==  ==========================================  ==========================
17  StreamsGroupMetadata (epoch, metadata hash)  key: group
19  StreamsGroupMemberMetadata                   key: group, member
20  StreamsGroupTargetAssignmentMetadata         key: group
21  StreamsGroupTargetAssignmentMember           key: group, member
22  StreamsGroupCurrentMemberAssignment          key: group, member
23  StreamsGroupTopology                         key: group
==  ==========================================  ==========================

Keys and values are framed as ``modern_group_records`` says (consumer groups
share the frame): keys are not flexible; values are flexible version 0, with
the tagged fields Kafka 4.4 defines (the validated topology epoch, the last
assignment configs, the assignment timestamp, the per-task assignment epochs of
KIP-1251).  Tasks are ``(subtopology id, partitions)`` lists sorted by subtopology.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from samsa.protocol.internal_records.modern_group_records import GroupRecordFamily, GroupRecordKey
from samsa.protocol.schema import DataSchema, F

GROUP_METADATA = 17
MEMBER_METADATA = 19
TARGET_ASSIGNMENT_METADATA = 20
TARGET_ASSIGNMENT_MEMBER = 21
CURRENT_MEMBER_ASSIGNMENT = 22
TOPOLOGY = 23
MEMBER_KEYS = frozenset({MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})

_KEY_VALUE = [F("key", "string"), F("value", "string")]
_TASK_IDS = [F("subtopology_id", "string"), F("partitions", "[]int32")]
_TASK_IDS_WITH_EPOCHS = [
    F("subtopology_id", "string"),
    F("partitions", "[]int32"),
    F("assignment_epochs", "[]int32", nullable="0+", tag=0, tagged="0+", default=None),
]
_TOPIC_INFO = [
    F("name", "string"),
    F("partitions", "int32"),
    F("replication_factor", "int16"),
    F("topic_configs", "[]struct", fields=_KEY_VALUE),
]

_SCHEMAS: dict[int, DataSchema] = {
    GROUP_METADATA: DataSchema(
        "StreamsGroupMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("epoch", "int32"),
            F("metadata_hash", "int64"),
            F("validated_topology_epoch", "int32", tag=0, tagged="0+", default=-1),
            F(
                "last_assignment_configs",
                "[]struct",
                nullable="0+",
                tag=1,
                tagged="0+",
                default=None,
                fields=_KEY_VALUE,
            ),
            F("stored_description_topology_epoch", "int32", tag=2, tagged="0+", default=-1),
            F("failed_description_topology_epoch", "int32", tag=3, tagged="0+", default=-1),
        ),
    ),
    MEMBER_METADATA: DataSchema(
        "StreamsGroupMemberMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("instance_id", "string", nullable="0+"),
            F("rack_id", "string", nullable="0+"),
            F("client_id", "string"),
            F("client_host", "string"),
            F("rebalance_timeout_ms", "int32", default=-1),
            F("topology_epoch", "int32"),
            F("process_id", "string"),
            F(
                "user_endpoint",
                "struct",
                nullable="0+",
                default=None,
                fields=[F("host", "string"), F("port", "uint16")],
            ),
            F("client_tags", "[]struct", fields=_KEY_VALUE),
        ),
    ),
    TARGET_ASSIGNMENT_METADATA: DataSchema(
        "StreamsGroupTargetAssignmentMetadataValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("assignment_epoch", "int32"),
            F("assignment_timestamp", "int64", tag=0, tagged="0+", default=0),
        ),
    ),
    TARGET_ASSIGNMENT_MEMBER: DataSchema(
        "StreamsGroupTargetAssignmentMemberValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("active_tasks", "[]struct", fields=_TASK_IDS),
            F("standby_tasks", "[]struct", fields=_TASK_IDS),
            F("warmup_tasks", "[]struct", fields=_TASK_IDS),
        ),
    ),
    CURRENT_MEMBER_ASSIGNMENT: DataSchema(
        "StreamsGroupCurrentMemberAssignmentValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("member_epoch", "int32"),
            F("previous_member_epoch", "int32"),
            F("state", "int8"),
            F("active_tasks", "[]struct", fields=_TASK_IDS_WITH_EPOCHS),
            F("standby_tasks", "[]struct", fields=_TASK_IDS_WITH_EPOCHS),
            F("warmup_tasks", "[]struct", fields=_TASK_IDS_WITH_EPOCHS),
            F("active_tasks_pending_revocation", "[]struct", fields=_TASK_IDS_WITH_EPOCHS),
            F("standby_tasks_pending_revocation", "[]struct", fields=_TASK_IDS_WITH_EPOCHS),
            F("warmup_tasks_pending_revocation", "[]struct", fields=_TASK_IDS_WITH_EPOCHS),
        ),
    ),
    TOPOLOGY: DataSchema(
        "StreamsGroupTopologyValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("epoch", "int32"),
            F(
                "subtopologies",
                "[]struct",
                fields=[
                    F("subtopology_id", "string"),
                    F("source_topics", "[]string"),
                    F("source_topic_regex", "[]string"),
                    F("state_changelog_topics", "[]struct", fields=_TOPIC_INFO),
                    F("repartition_sink_topics", "[]string"),
                    F("repartition_source_topics", "[]struct", fields=_TOPIC_INFO),
                    F(
                        "copartition_groups",
                        "[]struct",
                        fields=[
                            F("source_topics", "[]int16"),
                            F("source_topic_regex", "[]int16"),
                            F("repartition_source_topics", "[]int16"),
                        ],
                    ),
                ],
            ),
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class StreamsGroupKey(GroupRecordKey):
    """Key of a streams-group record; ``member_id`` is None for group-wide records."""


STREAMS_GROUP_RECORDS = GroupRecordFamily("streams-group", StreamsGroupKey, _SCHEMAS, MEMBER_KEYS)
KEY_VERSIONS = STREAMS_GROUP_RECORDS.key_versions


def is_streams_group_key(data: bytes | memoryview) -> bool:
    """Whether a ``__consumer_offsets`` key opens with a streams-group record type."""
    return STREAMS_GROUP_RECORDS.is_key(data)


def decode_streams_group_key(data: bytes | memoryview) -> StreamsGroupKey:
    """Decode the key of a streams-group record (key versions 17 and 19-23)."""
    return STREAMS_GROUP_RECORDS.decode_key(data)


def encode_streams_group_value(record_type: int, body: dict[str, Any]) -> bytes:
    """Encode the value of ``record_type`` (field names as in ``_SCHEMAS``)."""
    return STREAMS_GROUP_RECORDS.encode_value(record_type, body)


def decode_streams_group_value(record_type: int, data: bytes | memoryview) -> dict[str, Any]:
    """Decode the value of ``record_type``; newer value versions are read as v0 (KIP-915)."""
    return STREAMS_GROUP_RECORDS.decode_value(record_type, data)
