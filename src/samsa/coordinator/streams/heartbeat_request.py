"""StreamsGroupHeartbeat requests as Kafka checks them: validation (Kafka's
GroupCoordinatorService), member-epoch fencing, what a heartbeat changes in a
member, and the error answer.

Pure functions over the request dict, so the rules can be read and tested apart
from the manager's state handling.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from samsa.coordinator.modern.errors import GroupError
from samsa.coordinator.streams.group import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    StreamsMember,
)
from samsa.coordinator.streams.tasks import TaskSet, has_task
from samsa.coordinator.streams.topology import topic_names_of_request
from samsa.errors import ErrorCode

Body = dict[str, Any]


def error_response(code: ErrorCode, message: str | None) -> Body:
    return {
        "throttle_time_ms": 0,
        "error_code": int(code),
        "error_message": message,
        "member_id": "",
        "member_epoch": 0,
        "heartbeat_interval_ms": 0,
        "acceptable_recovery_lag_legacy": 0,
        "task_offset_interval_ms": 0,
        "acceptable_recovery_lag": -1,
        "status": None,
        "active_tasks": None,
        "standby_tasks": None,
        "warmup_tasks": None,
        "topology_description_required": False,
        "endpoint_information_epoch": 0,
        "partitions_by_user_endpoint": None,
    }


KAFKA_INTERNAL_TOPICS = frozenset(
    {"__consumer_offsets", "__transaction_state", "__share_group_state"}
)
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


def refused_topic_names(req: Body) -> GroupError | None:
    """STREAMS_INVALID_TOPOLOGY for a topology naming Kafka's internal topics or names
    that cannot be topics (KafkaApis checks this right after READ on the group)."""
    names = topic_names_of_request(req.get("topology"))
    internal = [n for n in names if n in KAFKA_INTERNAL_TOPICS]
    if internal:
        return GroupError(
            ErrorCode.STREAMS_INVALID_TOPOLOGY,
            f"Use of Kafka internal topics {','.join(internal)} in a Kafka Streams topology is"
            " prohibited.",
        )
    invalid = [n for n in names if not _LEGAL_TOPIC.match(n) or n in (".", "..")]
    if invalid:
        return GroupError(
            ErrorCode.STREAMS_INVALID_TOPOLOGY,
            f"Topic names {','.join(invalid)} are not valid topic names.",
        )
    return None


def validate(req: Body) -> None:
    """Kafka's checks before the group is looked at, each INVALID_REQUEST (or
    STREAMS_INVALID_TOPOLOGY) with Kafka's message, in Kafka's order."""

    def invalid(message: str) -> GroupError:
        return GroupError(ErrorCode.INVALID_REQUEST, message)

    topology = req.get("topology")
    for sub in (topology or {}).get("subtopologies") or ():
        if sub.get("source_topic_regex"):
            raise invalid("Regular expressions for source topics are not supported yet.")
    for field, what in (
        ("member_id", "MemberId"),
        ("group_id", "GroupId"),
        ("instance_id", "InstanceId"),
        ("rack_id", "RackId"),
    ):
        value = req.get(field)
        if value is not None and not value.strip():
            raise invalid(f"{what} can't be empty.")
    epoch = req["member_epoch"]
    tasks = (req.get("active_tasks"), req.get("standby_tasks"), req.get("warmup_tasks"))
    if epoch == 0:
        if req.get("rebalance_timeout_ms", -1) == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        for listed, name in zip(tasks, ("ActiveTasks", "StandbyTasks", "WarmupTasks"), strict=True):
            if listed:
                raise invalid(f"{name} must be empty when (re-)joining.")
        if topology is None:
            raise invalid("Topology must be non-null when (re-)joining.")
        for sub in topology.get("subtopologies") or ():
            for info in sub.get("state_changelog_topics") or ():
                if info.get("partitions", 0) != 0:
                    raise GroupError(
                        ErrorCode.STREAMS_INVALID_TOPOLOGY,
                        f"Changelog topic {info['name']} must have an undefined partition count,"
                        f" but it is set to {info['partitions']}.",
                    )
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.get("instance_id") is None:
            raise invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
    if any(t is not None for t in tasks) and any(t is None for t in tasks):
        raise invalid("If one task-type is non-null, all must be non-null.")
    if epoch != 0 and topology is not None:
        raise invalid("Topology can only be provided when (re-)joining.")


def check_epoch(member: StreamsMember, epoch: int, owned: TaskSet | None) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one while it
    owns only tasks it was assigned (the answer to its last heartbeat was lost)."""
    if epoch > member.member_epoch:
        raise GroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a greater member epoch ({epoch}) than the one known"
            f" by the group coordinator ({member.member_epoch}). The member must abandon all its"
            " partitions and rejoin.",
        )
    if epoch < member.member_epoch and (
        epoch != member.previous_member_epoch
        or owned is None
        or not _owns_only_assigned(member, owned)
    ):
        raise GroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a smaller member epoch ({epoch}) than the one known"
            f" by the group coordinator ({member.member_epoch}). The member must abandon all its"
            " partitions and rejoin.",
        )


def _owns_only_assigned(member: StreamsMember, owned: TaskSet) -> bool:
    held = member.assigned
    return (
        all(has_task(held.active_tasks(), s, p) for s, ps in owned.active.items() for p in ps)
        and all(has_task(held.standby, s, p) for s, ps in owned.standby.items() for p in ps)
        and all(has_task(held.warmup, s, p) for s, ps in owned.warmup.items() for p in ps)
    )


def check_tasks_exist(number_of_tasks: dict[str, int], owned: TaskSet | None) -> None:
    """Tasks a member reports must exist in the configured topology (Kafka's
    throwIfRequestContainsInvalidTasks)."""
    if owned is None:
        return
    for tasks in (owned.active, owned.standby, owned.warmup):
        for sid, parts in sorted(tasks.items()):
            if sid not in number_of_tasks:
                raise GroupError(
                    ErrorCode.INVALID_REQUEST, f"Subtopology {sid} does not exist in the topology."
                )
            count = number_of_tasks[sid]
            for p in sorted(parts):
                if p < 0 or p >= count:
                    raise GroupError(
                        ErrorCode.INVALID_REQUEST,
                        f"Task {p} for subtopology {sid} is invalid. Number of tasks for this"
                        f" subtopology: {count}",
                    )


def with_request(
    member: StreamsMember, req: Body, client_id: str, client_host: str
) -> StreamsMember:
    """The member with what this heartbeat changed (null fields mean unchanged)."""
    updates: dict[str, Any] = {"client_id": client_id, "client_host": client_host}
    if req.get("rack_id") is not None:
        updates["rack_id"] = req["rack_id"]
    if req.get("instance_id") is not None:
        updates["instance_id"] = req["instance_id"]
    if req.get("rebalance_timeout_ms", -1) != -1:
        updates["rebalance_timeout_ms"] = req["rebalance_timeout_ms"]
    if req.get("topology") is not None:
        updates["topology_epoch"] = req["topology"]["epoch"]
    if req.get("process_id") is not None:
        updates["process_id"] = req["process_id"]
    if req.get("client_tags") is not None:
        updates["client_tags"] = tuple(sorted((t["key"], t["value"]) for t in req["client_tags"]))
    if req.get("user_endpoint") is not None:
        endpoint = req["user_endpoint"]
        updates["user_endpoint"] = (endpoint["host"], endpoint["port"])
    return replace(member, **updates)
