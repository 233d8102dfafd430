"""Members speaking the classic protocol inside a KIP-848 consumer group (online migration).

Kafka 4.x lets a fleet move between protocols one consumer at a time: a classic
consumer (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) joins a consumer group
and is served from the group's state machine (GroupMetadataManager's
classicGroup*ToConsumerGroup):

- JoinGroup is a full heartbeat: its subscription (the consumer protocol's
  metadata) and owned partitions drive the group epoch, the target assignment
  and the member's reconciliation; the answer is at once, with no leader and
  the member epoch as generation;
- SyncGroup hands the member its current assignment, encoded in the consumer
  protocol; while the group epoch has moved past it, it is told to rejoin;
- Heartbeat says REBALANCE_IN_PROGRESS when the member should rejoin (the group
  epoch moved, it must revoke, or what it waits for was released);
- deadlines: its session timeout, its rebalance timeout to rejoin once told and
  to sync once joined.

Errors are Kafka's for these APIs (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL, REBALANCE_IN_PROGRESS).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.advance import advance, waiting_on_unreleased
from samsa.coordinator.consumer.assignors import ASSIGNORS
from samsa.coordinator.consumer.group import (
    ClassicMetadata,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from samsa.coordinator.group import JoinResult, SyncResult
from samsa.coordinator.membership import JoinRequest
from samsa.coordinator.modern.timers import Deadline
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.consumer_protocol import (
    ASSIGNMENT,
    PROTOCOL_TYPE,
    decode_subscription,
    encode_assignment,
)
from samsa.protocol.internal_records.consumer_group_records import Assignment

if TYPE_CHECKING:
    from samsa.coordinator.consumer.manager import ConsumerGroupManager

log = logging.getLogger("samsa.coordinator")


class _Refused(Exception):
    def __init__(self, code: ErrorCode) -> None:
        super().__init__(code.name)
        self.code = code


class ClassicMembers:
    """The four classic membership APIs against a consumer group with members."""

    def __init__(self, manager: ConsumerGroupManager) -> None:
        self.manager = manager

    # --------------------------------------------------------------- join

    async def join(self, group: ConsumerGroup, r: JoinRequest) -> JoinResult:
        try:
            async with self.manager.lock(group.group_id):
                return await self._join(group, r)
        except _Refused as refused:
            return JoinResult(refused.code, r.member_id)

    async def _join(self, group: ConsumerGroup, r: JoinRequest) -> JoinResult:
        manager = self.manager
        unknown = not r.member_id
        member_id = r.member_id or f"{r.group_instance_id or r.client_id}-{uuid.uuid4()}"
        if len(group.members) >= manager.config.max_size and member_id not in group.members:
            raise _Refused(ErrorCode.GROUP_MAX_SIZE_REACHED)
        if not group.supports_classic_protocols(r.protocol_type, {n for n, _ in r.protocols}):
            raise _Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if unknown and r.require_known_member_id and r.group_instance_id is None:
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)
        try:
            subscription = decode_subscription(r.protocols[0][1])
        except (DecodeError, ValueError):
            raise _Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL) from None
        group_id = group.group_id
        changes: list[records.Change] = []
        members = dict(group.members)
        target = dict(group.target)
        member, replaced = self._member(group, member_id, r.group_instance_id, unknown)
        if replaced is not None:
            # The instance is back under a new member id: it takes the old one's place.
            changes += records.member_removal(group_id, replaced.member_id)
            target[member_id] = target.pop(replaced.member_id, {})
            changes.append(records.target_member(group_id, member_id, target[member_id]))
            members.pop(replaced.member_id)
        updated = replace(
            member,
            instance_id=r.group_instance_id or member.instance_id,
            rack_id=subscription.rack_id or member.rack_id,
            rebalance_timeout_ms=r.rebalance_timeout_ms,
            subscribed_topic_names=tuple(subscription.topics),
            client_id=r.client_id,
            client_host=r.client_host,
            classic=ClassicMetadata(r.session_timeout_ms, tuple(r.protocols)),
        )
        fresh = member_id not in group.members
        subscription_changed = (fresh and replaced is None) or (
            updated.subscription() != member.subscription()
        )
        if fresh or updated.metadata_value() != member.metadata_value():
            changes.append(records.member_metadata(group_id, updated))
        members[member_id] = updated
        topics = manager.topics()
        owned: Assignment = {}
        for topic, parts in subscription.owned_partitions.items():
            if topic in topics and parts:
                owned[topics[topic][0]] = frozenset(parts)
        reconciled = advance(
            group,
            members,
            target,
            updated,
            subscription_changed=subscription_changed,
            owned=owned,
            all_topics=topics,
            assignor=ASSIGNORS[manager.assignor_of_members(members.values())],
            changes=changes,
        )
        await manager.write(group.partition, changes)
        if fresh:
            log.info(
                "group %s: member %s joins the consumer group with the classic protocol",
                group_id,
                member_id,
            )
        timers = manager.timers
        if replaced is not None:
            timers.cancel(group_id, replaced.member_id)
        assert updated.classic is not None
        generation = reconciled.member_epoch
        migration = manager.migration
        if (
            replaced is not None
            and not replaced.uses_classic_protocol
            and migration is not None
            and migration.can_downgrade(group, set())
        ):
            # The last consumer-protocol member was replaced by its classic self:
            # the group is classic again, Stable with the target assignment.
            classic = await migration.downgrade(group, set(), rebalance=False)
            generation = classic.generation_id
        else:
            timers.cancel(group_id, member_id, Deadline.JOIN)
            manager.schedule(group_id, reconciled)
            timers.start(group_id, member_id, Deadline.SYNC, _rebalance_timeout(reconciled))
        return JoinResult(
            ErrorCode.NONE,
            member_id,
            generation_id=generation,
            protocol_type=PROTOCOL_TYPE,
            protocol_name=updated.classic.protocol_name,
            leader="",
        )

    def _member(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, unknown: bool
    ) -> tuple[ConsumerMember, ConsumerMember | None]:
        """The joining member, and the static member it replaces (Kafka's
        getOrMaybeSubscribe*ConsumerGroupMember for a classic member)."""
        if instance_id is None:
            return group.members.get(member_id) or ConsumerMember(member_id), None
        existing = group.member_by_instance(instance_id)
        if unknown:
            if existing is None:
                return ConsumerMember(member_id, instance_id=instance_id), None
            # Keeps what the old member held, at epoch 0: it reconciles from there.
            joined = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
            return joined, existing
        if existing is None:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        if existing.member_id != member_id:
            raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
        return existing, None

    # --------------------------------------------------------------- sync

    def sync(
        self,
        group: ConsumerGroup,
        generation_id: int,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> SyncResult:
        try:
            member = self._classic_member(group, member_id, instance_id, generation_id)
        except _Refused as refused:
            return SyncResult(refused.code)
        assert member.classic is not None
        name = member.classic.protocol_name
        if (protocol_type is not None and protocol_type != PROTOCOL_TYPE) or (
            protocol_name is not None and protocol_name != name
        ):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        timers = self.manager.timers
        if (
            group.group_epoch > member.member_epoch
            and member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            timers.start_if_absent(
                group.group_id, member.member_id, Deadline.JOIN, _rebalance_timeout(member)
            )
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        timers.cancel(group.group_id, member.member_id, Deadline.SYNC)
        self.manager.schedule(group.group_id, member)
        return SyncResult(ErrorCode.NONE, _assignment_bytes(group, member), PROTOCOL_TYPE, name)

    # ---------------------------------------------------------- heartbeat

    def heartbeat(
        self, group: ConsumerGroup, generation_id: int, member_id: str, instance_id: str | None
    ) -> ErrorCode:
        try:
            member = self._classic_member(group, member_id, instance_id, generation_id)
        except _Refused as refused:
            return refused.code
        self.manager.schedule(group.group_id, member)
        if (
            member.member_epoch < group.group_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (
                member.state is MemberState.UNRELEASED_PARTITIONS
                and not waiting_on_unreleased(group, member)
            )
        ):
            self.manager.timers.start_if_absent(
                group.group_id, member.member_id, Deadline.JOIN, _rebalance_timeout(member)
            )
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def _classic_member(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation: int
    ) -> ConsumerMember:
        member = _validate(group, member_id, instance_id)
        if not member.uses_classic_protocol:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        if generation != member.member_epoch:
            raise _Refused(ErrorCode.ILLEGAL_GENERATION)
        return member

    # -------------------------------------------------------------- leave

    async def leave(
        self, group: ConsumerGroup, leaving: list[tuple[str, str | None]]
    ) -> list[ErrorCode]:
        """Remove the members given as (member_id, group_instance_id); one error each."""
        errors: list[ErrorCode] = []
        gone: set[str] = set()
        for member_id, instance_id in leaving:
            try:
                member = _leaving_member(group, member_id, instance_id)
            except _Refused as refused:
                errors.append(refused.code)
                continue
            errors.append(ErrorCode.NONE)
            gone.add(member.member_id)
        if gone:
            async with self.manager.lock(group.group_id):
                gone &= set(group.members)
                if gone:
                    try:
                        await self.manager.fence(group, gone)
                    except KafkaError as exc:
                        return [exc.code if e is ErrorCode.NONE else e for e in errors]
        return errors


def _validate(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
    """The member named by id (and instance id, when given)."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        return member
    member = group.member_by_instance(instance_id)
    if member is None:
        raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if member.member_id != member_id:
        raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
    return member


def _leaving_member(
    group: ConsumerGroup, member_id: str, instance_id: str | None
) -> ConsumerMember:
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None or not member.uses_classic_protocol:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        return member
    member = group.member_by_instance(instance_id)
    if member is None:
        raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if member_id and member.member_id != member_id:
        raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
    return member


def _rebalance_timeout(member: ConsumerMember) -> int:
    if member.rebalance_timeout_ms > 0:
        return member.rebalance_timeout_ms
    return member.classic.session_timeout_ms if member.classic is not None else 45_000


def _assignment_bytes(group: ConsumerGroup, member: ConsumerMember) -> bytes:
    """The member's current assignment in the consumer protocol, at the version of
    the subscription it sent (as Kafka's prepareAssignment)."""
    version = ASSIGNMENT.valid[1]
    if member.classic is not None and member.classic.protocols:
        try:
            version = min(decode_subscription(member.classic.protocols[0][1]).version, version)
        except (DecodeError, ValueError):
            pass
    by_name = {group.topic_name(t): sorted(ps) for t, ps in sorted(member.assigned.items())}
    return encode_assignment(by_name, version=max(version, 0))
