"""ConsumerGroupHeartbeat requests as Kafka checks them: validation, member-epoch
fencing, what a heartbeat changes in a member, and the error answer.

Pure functions over the request dict, so the rules can be read (and tested)
apart from the coordinator's state handling in ``manager.py``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from samsa.coordinator.consumer.config import ConsumerGroupConfig
from samsa.coordinator.consumer.group import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from samsa.coordinator.consumer.subscription import InvalidRegex, compile_regex
from samsa.coordinator.modern.errors import GroupError
from samsa.errors import ErrorCode
from samsa.protocol.internal_records.consumer_group_records import assignment_from_wire

Body = dict[str, Any]


def error_response(code: ErrorCode, message: str | None) -> Body:
    return {
        "throttle_time_ms": 0,
        "error_code": int(code),
        "error_message": message,
        "member_id": None,
        "member_epoch": -1,
        "heartbeat_interval_ms": 0,
        "assignment": None,
    }


def validate(req: Body, version: int, config: ConsumerGroupConfig) -> None:
    """Kafka's request checks, each answered INVALID_REQUEST with its message."""
    epoch = req["member_epoch"]

    def invalid(message: str) -> GroupError:
        return GroupError(ErrorCode.INVALID_REQUEST, message)

    if not req.get("group_id"):
        raise invalid("GroupId can't be empty.")
    if version >= 1 and not req.get("member_id"):
        raise invalid("MemberId can't be empty.")
    if epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid(f"MemberEpoch {epoch} is invalid.")
    instance_id = req.get("instance_id")
    if instance_id is not None and not instance_id:
        raise invalid("InstanceId can't be empty.")
    if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and instance_id is None:
        raise invalid("InstanceId can't be null when leaving as a static member.")
    if epoch == 0:
        if req.get("rebalance_timeout_ms", -1) == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        if req.get("topic_partitions"):
            raise invalid("TopicPartitions must be empty when (re-)joining.")
        if req.get("subscribed_topic_names") is None and req.get("subscribed_topic_regex") is None:
            raise invalid(
                "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
            )
    assignor = req.get("server_assignor")
    if assignor is not None and assignor not in config.assignors:
        raise GroupError(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {assignor} is not supported. Supported assignors:"
            f" {', '.join(config.assignors)}.",
        )
    regex = req.get("subscribed_topic_regex")
    if regex:
        try:
            compile_regex(regex)
        except InvalidRegex as exc:
            raise GroupError(ErrorCode.INVALID_REGULAR_EXPRESSION, str(exc)) from None


def check_epoch(member: ConsumerMember, epoch: int, owned: list[Body] | None) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one when the
    member still owns only what it was assigned (the answer to its last heartbeat was lost)."""
    if epoch == member.member_epoch:
        return
    if epoch == member.previous_member_epoch and epoch < member.member_epoch and owned is not None:
        reported = assignment_from_wire(owned)
        if all(ps <= member.assigned.get(t, frozenset()) for t, ps in reported.items()):
            return
    raise GroupError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        f"The consumer group member has a smaller member epoch ({epoch}) than the one known"
        f" by the group coordinator ({member.member_epoch}). The member must abandon all"
        " its partitions and rejoin."
        if epoch < member.member_epoch
        else f"The consumer group member has a greater member epoch ({epoch}) than the one"
        f" known by the group coordinator ({member.member_epoch}). The member must abandon"
        " all its partitions and rejoin.",
    )


def with_request(
    member: ConsumerMember, req: Body, client_id: str, client_host: str
) -> ConsumerMember:
    """The member with what this heartbeat changed (null fields mean unchanged)."""
    # A member heartbeating speaks the consumer protocol (whatever it joined with).
    updates: dict[str, Any] = {"client_id": client_id, "client_host": client_host, "classic": None}
    for field, attr in (
        ("instance_id", "instance_id"),
        ("rack_id", "rack_id"),
        ("server_assignor", "server_assignor"),
    ):
        if req.get(field) is not None:
            updates[attr] = req[field]
    if req.get("rebalance_timeout_ms", -1) != -1:
        updates["rebalance_timeout_ms"] = req["rebalance_timeout_ms"]
    if req.get("subscribed_topic_names") is not None:
        updates["subscribed_topic_names"] = tuple(req["subscribed_topic_names"])
    if req.get("subscribed_topic_regex") is not None:
        updates["subscribed_topic_regex"] = req["subscribed_topic_regex"] or None
    return replace(member, **updates)


def joining_member(
    group: ConsumerGroup,
    member: ConsumerMember | None,
    member_id: str,
    instance_id: str | None,
    max_size: int,
) -> tuple[ConsumerMember, ConsumerMember | None]:
    """The member joining with epoch 0, and the static member it replaces, if any."""
    if instance_id is not None:
        previous = group.member_by_instance(instance_id)
        if previous is not None and previous.member_id != member_id:
            if (
                previous.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH
                and not previous.uses_classic_protocol
            ):
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"static member {instance_id} is still in use by {previous.member_id}",
                )
            # The same instance is back under a new member id: it takes over the
            # old member's subscription and target, so nothing is reassigned.
            joined = replace(
                previous,
                member_id=member_id,
                member_epoch=0,
                previous_member_epoch=0,
                state=MemberState.STABLE,
                assigned={},
                pending_revocation={},
            )
            return joined, previous
    if member is not None:
        return member, None
    if len(group.members) >= max_size:
        raise GroupError(
            ErrorCode.GROUP_MAX_SIZE_REACHED,
            f"group {group.group_id} has reached its maximum size",
        )
    return ConsumerMember(member_id, instance_id=instance_id), None
