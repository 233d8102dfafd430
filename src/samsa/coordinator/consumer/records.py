"""Builders of the records one consumer-group change writes (Kafka's
GroupCoordinatorRecordHelpers), as (key, value) pairs replayed by ``ConsumerGroup``."""

from __future__ import annotations

from typing import Any

from samsa.coordinator.consumer.group import ConsumerMember, TopicMetadata
from samsa.protocol.internal_records.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    Assignment,
    ConsumerGroupKey,
    assignment_to_wire,
)

Change = tuple[ConsumerGroupKey, dict[str, Any] | None]


def group_epoch(group_id: str, epoch: int) -> Change:
    return ConsumerGroupKey(GROUP_METADATA, group_id), {"epoch": epoch, "metadata_hash": 0}


def partition_metadata(group_id: str, topics: TopicMetadata) -> Change:
    value = {
        "topics": [
            {"topic_id": tid, "topic_name": name, "num_partitions": count, "partition_racks": []}
            for name, (tid, count) in sorted(topics.items())
        ]
    }
    return ConsumerGroupKey(PARTITION_METADATA, group_id), value


def member_metadata(group_id: str, member: ConsumerMember) -> Change:
    key = ConsumerGroupKey(MEMBER_METADATA, group_id, member.member_id)
    return key, member.metadata_value()


def target_member(group_id: str, member_id: str, assignment: Assignment) -> Change:
    key = ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, group_id, member_id)
    return key, {"topic_partitions": assignment_to_wire(assignment)}


def target_epoch(group_id: str, epoch: int) -> Change:
    return ConsumerGroupKey(TARGET_ASSIGNMENT_METADATA, group_id), {"assignment_epoch": epoch}


def current_assignment(group_id: str, member: ConsumerMember) -> Change:
    key = ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id)
    return key, {
        "member_epoch": member.member_epoch,
        "previous_member_epoch": member.previous_member_epoch,
        "state": int(member.state),
        "assigned_partitions": assignment_to_wire(member.assigned),
        "partitions_pending_revocation": assignment_to_wire(member.pending_revocation),
    }


def member_removal(group_id: str, member_id: str) -> list[Change]:
    """Tombstones of a member, in Kafka's order (assignment, target, metadata)."""
    return [
        (ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, group_id, member_id), None),
        (ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, group_id, member_id), None),
        (ConsumerGroupKey(MEMBER_METADATA, group_id, member_id), None),
    ]


def group_removal(group_id: str, member_ids: list[str]) -> list[Change]:
    """Every record of a group, tombstoned; the group-metadata tombstone last."""
    out: list[Change] = []
    for member_id in member_ids:
        out.extend(member_removal(group_id, member_id))
    out.append((ConsumerGroupKey(TARGET_ASSIGNMENT_METADATA, group_id), None))
    out.append((ConsumerGroupKey(PARTITION_METADATA, group_id), None))
    out.append((ConsumerGroupKey(GROUP_METADATA, group_id), None))
    return out
