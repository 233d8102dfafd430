"""Builders of the records one streams-group change writes (Kafka's
StreamsCoordinatorRecordHelpers), as (key, value) pairs replayed by ``StreamsGroup``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.coordinator.streams.group import StreamsMember
from samsa.coordinator.streams.tasks import TaskSet, held_to_record, tasks_to_wire
from samsa.coordinator.streams.topology import StreamsTopology
from samsa.protocol.internal_records.streams_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    TOPOLOGY,
    StreamsGroupKey,
)

Change = tuple[StreamsGroupKey, dict[str, Any] | None]


def group_epoch(
    group_id: str,
    epoch: int,
    metadata_hash: int,
    validated_topology_epoch: int,
    assignment_configs: Mapping[str, str],
) -> Change:
    return StreamsGroupKey(GROUP_METADATA, group_id), {
        "epoch": epoch,
        "metadata_hash": metadata_hash,
        "validated_topology_epoch": validated_topology_epoch,
        "last_assignment_configs": [
            {"key": k, "value": v} for k, v in sorted(assignment_configs.items())
        ],
        "stored_description_topology_epoch": -1,
        "failed_description_topology_epoch": -1,
    }


def topology(group_id: str, value: StreamsTopology) -> Change:
    return StreamsGroupKey(TOPOLOGY, group_id), value.to_wire()


def member_metadata(group_id: str, member: StreamsMember) -> Change:
    return StreamsGroupKey(MEMBER_METADATA, group_id, member.member_id), member.metadata_value()


def target_member(group_id: str, member_id: str, tasks: TaskSet) -> Change:
    key = StreamsGroupKey(TARGET_ASSIGNMENT_MEMBER, group_id, member_id)
    return key, {
        "active_tasks": tasks_to_wire(tasks.active),
        "standby_tasks": tasks_to_wire(tasks.standby),
        "warmup_tasks": tasks_to_wire(tasks.warmup),
    }


def target_epoch(group_id: str, epoch: int, timestamp_ms: int) -> Change:
    key = StreamsGroupKey(TARGET_ASSIGNMENT_METADATA, group_id)
    return key, {"assignment_epoch": epoch, "assignment_timestamp": timestamp_ms}


def current_assignment(group_id: str, member: StreamsMember) -> Change:
    active, standby, warmup = held_to_record(member.assigned)
    active_r, standby_r, warmup_r = held_to_record(member.pending_revocation)
    key = StreamsGroupKey(CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id)
    return key, {
        "member_epoch": member.member_epoch,
        "previous_member_epoch": member.previous_member_epoch,
        "state": int(member.state),
        "active_tasks": active,
        "standby_tasks": standby,
        "warmup_tasks": warmup,
        "active_tasks_pending_revocation": active_r,
        "standby_tasks_pending_revocation": standby_r,
        "warmup_tasks_pending_revocation": warmup_r,
    }


def member_removal(group_id: str, member_id: str) -> list[Change]:
    """Tombstones of a member, in Kafka's order (assignment, target, metadata)."""
    return [
        (StreamsGroupKey(CURRENT_MEMBER_ASSIGNMENT, group_id, member_id), None),
        (StreamsGroupKey(TARGET_ASSIGNMENT_MEMBER, group_id, member_id), None),
        (StreamsGroupKey(MEMBER_METADATA, group_id, member_id), None),
    ]


def group_removal(group_id: str, member_ids: list[str]) -> list[Change]:
    """Every record of a group, tombstoned in Kafka's order (StreamsGroup's
    createGroupTombstoneRecords), the group metadata and topology last."""
    out: list[Change] = []
    for member_id in member_ids:
        out.append((StreamsGroupKey(CURRENT_MEMBER_ASSIGNMENT, group_id, member_id), None))
    for member_id in member_ids:
        out.append((StreamsGroupKey(TARGET_ASSIGNMENT_MEMBER, group_id, member_id), None))
    out.append((StreamsGroupKey(TARGET_ASSIGNMENT_METADATA, group_id), None))
    for member_id in member_ids:
        out.append((StreamsGroupKey(MEMBER_METADATA, group_id, member_id), None))
    out.append((StreamsGroupKey(GROUP_METADATA, group_id), None))
    out.append((StreamsGroupKey(TOPOLOGY, group_id), None))
    return out
