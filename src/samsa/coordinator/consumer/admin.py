"""What the other group APIs see of KIP-848 groups: describe, list, delete, and the
member-epoch checks of OffsetCommit/OffsetFetch."""

from __future__ import annotations

from typing import Any

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.group import ConsumerGroup, ConsumerMember
from samsa.coordinator.consumer.manager import ConsumerGroupManager
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.consumer_protocol import PROTOCOL_TYPE, encode_assignment, encode_subscription
from samsa.protocol.internal_records.consumer_group_records import Assignment

Body = dict[str, Any]
GROUP_TYPE = "consumer"
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1
"""ConsumerGroupDescribe v1's MemberType: the protocol the member speaks."""


class ConsumerGroupAdmin:
    """Read views and deletion of consumer groups, for the coordinator façade."""

    def __init__(self, manager: ConsumerGroupManager) -> None:
        self.manager = manager

    def get(self, group_id: str) -> ConsumerGroup | None:
        return self.manager.groups.get(group_id)

    def subscribed_topics(self, group_id: str) -> frozenset[str]:
        """The topics a consumer group's members read now (empty for other groups)."""
        group = self.manager.groups.get(group_id)
        return frozenset(group.topics) if group is not None and group.members else frozenset()

    def has_members(self, group_id: str) -> bool:
        """Whether a consumer group of that id is in use (its offsets do not expire)."""
        group = self.manager.groups.get(group_id)
        return group is not None and bool(group.members)

    # --------------------------------------------------------- offsets

    def check_commit(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        instance_id: str | None = None,
        *,
        transactional: bool = False,
    ) -> ErrorCode | None:
        """None when the group is not a consumer group (the classic rules apply) or the
        commit is allowed; else Kafka's error (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).

        As Kafka's ConsumerGroup.validateOffsetCommit: a commit without a member
        epoch is an admin's, allowed only while nobody consumes; a transactional
        one that names no member at all (TxnOffsetCommit before v3, as aiokafka
        sends it) is not checked against the members."""
        group = self.get(group_id)
        if group is None:
            return None
        if member_epoch < 0 and not group.members:
            return None
        if transactional and member_epoch == -1 and not member_id and instance_id is None:
            return None
        return _check_member(group, member_id, member_epoch)

    def check_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9: a member that names itself must be at its current epoch."""
        group = self.get(group_id)
        if group is None or member_id is None or (member_epoch < 0 and not member_id):
            return ErrorCode.NONE
        return _check_member(group, member_id, member_epoch)

    # ----------------------------------------------------------- views

    def listed(self, states: set[str] | None) -> list[Body]:
        out = []
        for group in self.manager.groups.values():
            if group.partition not in self.manager.registry.owned:
                continue
            if states is not None and group.state.lower() not in states:
                continue
            out.append(
                {
                    "group_id": group.group_id,
                    "protocol_type": PROTOCOL_TYPE,
                    "group_state": group.state,
                    "group_type": GROUP_TYPE,
                }
            )
        return out

    def describe(self, group_id: str) -> Body:
        """One group of a ConsumerGroupDescribe (69) response."""
        err = self.manager.registry.check(group_id)
        group = self.get(group_id)
        if err is None and group is None:
            err = ErrorCode.GROUP_ID_NOT_FOUND
        if err is not None or group is None:
            return {
                "error_code": int(err or ErrorCode.GROUP_ID_NOT_FOUND),
                "error_message": f"Group {group_id} not found."
                if err is ErrorCode.GROUP_ID_NOT_FOUND
                else None,
                "group_id": group_id,
                "group_state": "",
                "group_epoch": -1,
                "assignment_epoch": -1,
                "assignor_name": "",
                "members": [],
            }
        return {
            "error_code": 0,
            "error_message": None,
            "group_id": group_id,
            "group_state": group.state,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor_name": self.manager.assignor_of(group),
            "members": [
                {
                    "member_id": m.member_id,
                    "instance_id": m.instance_id,
                    "rack_id": m.rack_id,
                    "member_epoch": m.member_epoch,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "subscribed_topic_names": list(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "member_type": CLASSIC_MEMBER if m.uses_classic_protocol else CONSUMER_MEMBER,
                    "assignment": {"topic_partitions": _named(group, m.assigned)},
                    "target_assignment": {
                        "topic_partitions": _named(group, group.target.get(m.member_id, {}))
                    },
                }
                for m in group.members.values()
            ],
        }

    def described_as_classic(self, group: ConsumerGroup) -> Body:
        """A DescribeGroups (15) entry: the consumer protocol's bytes, so classic tools read it."""
        return {
            "error_code": 0,
            "group_id": group.group_id,
            "group_state": group.state,
            "protocol_type": PROTOCOL_TYPE,
            "protocol_data": self.manager.assignor_of(group),
            "members": [_classic_member(group, m) for m in group.members.values()],
        }

    # ---------------------------------------------------------- delete

    async def delete(self, group_id: str) -> ErrorCode | None:
        """Tombstone an empty consumer group; None if ``group_id`` is not one."""
        group = self.get(group_id)
        if group is None:
            return None
        async with self.manager.lock(group_id):
            if group.members:
                return ErrorCode.NON_EMPTY_GROUP
            try:
                await self.manager.write(
                    group.partition, records.group_removal(group_id, list(group.target))
                )
            except KafkaError as exc:
                return exc.code
        return ErrorCode.NONE


def _check_member(group: ConsumerGroup, member_id: str, member_epoch: int) -> ErrorCode:
    """Kafka's validateMemberEpoch: a classic member's mismatch is ILLEGAL_GENERATION
    (the generation it was told is its member epoch), a consumer member's is
    STALE_MEMBER_EPOCH."""
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if member_epoch != member.member_epoch:
        if member.uses_classic_protocol:
            return ErrorCode.ILLEGAL_GENERATION
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE


def _named(group: ConsumerGroup, assignment: Assignment) -> list[Body]:
    return [
        {"topic_id": tid, "topic_name": group.topic_name(tid), "partitions": sorted(ps)}
        for tid, ps in sorted(assignment.items())
    ]


def _classic_member(group: ConsumerGroup, member: ConsumerMember) -> Body:
    by_name = {group.topic_name(t): sorted(ps) for t, ps in member.assigned.items()}
    return {
        "member_id": member.member_id,
        "group_instance_id": member.instance_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "member_metadata": encode_subscription(
            sorted(member.subscribed_topic_names), rack_id=member.rack_id
        ),
        "member_assignment": encode_assignment(by_name),
    }
