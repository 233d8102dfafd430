"""The StreamsGroupHeartbeat response: the member's epoch and tasks, the endpoints, the statuses.

Apart from the heartbeat's steps (``manager``) because it only reads what they
decided: it sends the tasks when the member (re)joined or its assignment
changed, the partitions by endpoint when the member's endpoint epoch is behind,
and a status for a topology that is not ready or a requested shutdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.coordinator.streams.assignment import target
from samsa.coordinator.streams.config import StreamsSettings
from samsa.coordinator.streams.group import StreamsGroup, StreamsMember
from samsa.coordinator.streams.internal_topics import (
    SHUTDOWN_APPLICATION,
    ConfiguredTopology,
    InternalTopic,
)
from samsa.coordinator.streams.tasks import TaskSet, tasks_to_wire

__all__ = ["HeartbeatResult", "heartbeat_response", "status_entry", "tasks_text"]

Body = dict[str, Any]


@dataclass(slots=True)
class HeartbeatResult:
    """The response, and the internal topics the broker should create for the group."""

    response: Body
    to_create: Mapping[str, InternalTopic] = field(default_factory=dict)


def heartbeat_response(
    settings: StreamsSettings,
    group: StreamsGroup,
    req: Body,
    assignment_changed: bool,
    member: StreamsMember,
    configured: ConfiguredTopology,
    statuses: list[Body],
    topic_metadata: Mapping[str, tuple[bytes, int]],
) -> HeartbeatResult:
    """The answer to ``member``'s heartbeat, with ``statuses`` gathered by its steps.

    Sending a changed assignment of a member with an endpoint moves the group's
    endpoint epoch (in memory, as Kafka does), so the other members ask again."""
    group_id = group.group_id
    lag = settings.config.acceptable_recovery_lag
    response: Body = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "member_id": member.member_id,
        "member_epoch": member.member_epoch,
        "heartbeat_interval_ms": settings.heartbeat_interval_ms(group_id),
        "acceptable_recovery_lag_legacy": min(lag, 2**31 - 1),
        "task_offset_interval_ms": settings.config.task_offset_interval_ms,
        "acceptable_recovery_lag": lag,
        "status": None,
        "active_tasks": None,
        "standby_tasks": None,
        "warmup_tasks": None,
        "topology_description_required": False,
        "endpoint_information_epoch": group.endpoint_information_epoch,
        "partitions_by_user_endpoint": None,
    }
    if req["member_epoch"] == 0 or assignment_changed:
        response["active_tasks"] = tasks_to_wire(member.assigned.active_tasks())
        response["standby_tasks"] = tasks_to_wire(member.assigned.standby)
        response["warmup_tasks"] = tasks_to_wire(member.assigned.warmup)
        if member.user_endpoint is not None and assignment_changed:
            group.endpoint_information_epoch += 1
            response["endpoint_information_epoch"] = group.endpoint_information_epoch
    if req.get("endpoint_information_epoch") != group.endpoint_information_epoch:
        response["partitions_by_user_endpoint"] = target.endpoint_partitions(
            group, configured, topic_metadata
        )
    to_create: Mapping[str, InternalTopic] = {}
    if configured.error is not None:
        to_create = configured.to_create
        statuses.append(status_entry(configured.error.status, configured.error.message))
    if group.shutdown_requested_by is not None:
        statuses.append(
            status_entry(
                SHUTDOWN_APPLICATION,
                f"Streams group member {group.shutdown_requested_by} encountered a fatal error"
                " and requested a shutdown for the entire application.",
            )
        )
    if statuses:
        response["status"] = statuses
    return HeartbeatResult(response, to_create)


def tasks_text(tasks: TaskSet) -> str:
    """Tasks as Kafka's coordinator logs them: ``[active=sub_0,sub_1 standby=...]``."""

    def part(role: str, t: Mapping[str, frozenset[int]]) -> str:
        return role + "=" + ",".join(f"{s}_{p}" for s in sorted(t) for p in sorted(t[s]))

    return (
        "["
        + " ".join(
            part(r, t)
            for r, t in (
                ("active", tasks.active),
                ("standby", tasks.standby),
                ("warmup", tasks.warmup),
            )
            if t
        )
        + "]"
    )


def status_entry(code: int, detail: str) -> Body:
    """One entry of the response's ``status`` list."""
    return {"status_code": code, "status_detail": detail}
