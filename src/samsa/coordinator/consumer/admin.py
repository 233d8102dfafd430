"""What the other group APIs see of KIP-848 groups: describe, list, delete, and the
member-epoch checks of OffsetCommit/OffsetFetch (what every record-backed group
answers alike is ``modern.group_admin``'s)."""

from __future__ import annotations

from typing import Any

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.group import ConsumerGroup, ConsumerMember
from samsa.coordinator.consumer.manager import ConsumerGroupManager
from samsa.coordinator.modern.group_admin import ModernGroupAdmin
from samsa.errors import ErrorCode
from samsa.protocol.consumer_protocol import PROTOCOL_TYPE, encode_assignment, encode_subscription
from samsa.protocol.internal_records.consumer_group_records import Assignment

Body = dict[str, Any]
GROUP_TYPE = "consumer"
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1
"""ConsumerGroupDescribe v1's MemberType: the protocol the member speaks."""


class ConsumerGroupAdmin(ModernGroupAdmin[ConsumerGroup, ConsumerGroupManager]):
    """Read views and deletion of consumer groups, for the coordinator façade."""

    group_type = GROUP_TYPE
    protocol_type = PROTOCOL_TYPE

    def _removal(self, group: ConsumerGroup) -> list[records.Change]:
        return records.group_removal(group.group_id, list(group.target))

    def subscribed_topics(self, group_id: str) -> frozenset[str]:
        """The topics a consumer group's members read now (empty for other groups)."""
        group = self.manager.groups.get(group_id)
        return frozenset(group.topics) if group is not None and group.members else frozenset()

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
        commit is allowed; else Kafka's error (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID),
        as Kafka's ConsumerGroup.validateOffsetCommit."""
        group = self.get(group_id)
        if group is None:
            return None
        if self.commits_unchecked(group, member_id, member_epoch, instance_id, transactional):
            return None
        return _check_member(group, member_id, member_epoch)

    def check_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9: a member that names itself must be at its current epoch."""
        group = self.get(group_id)
        if group is None or member_id is None or (member_epoch < 0 and not member_id):
            return ErrorCode.NONE
        return _check_member(group, member_id, member_epoch)

    # ----------------------------------------------------------- views

    def describe(self, group_id: str) -> Body:
        """One group of a ConsumerGroupDescribe (69) response."""
        group, failed = self._to_describe(group_id)
        if group is None:
            return {
                **failed,
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
