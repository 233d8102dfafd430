"""KIP-848's online migration: a classic group becomes a consumer group and back.

A fleet moves to ``group.protocol=consumer`` one consumer at a time, and back:

- upgrade (Kafka's convertToConsumerGroup / ConsumerGroup.fromClassicGroup):
  the first consumer-protocol member to heartbeat into a classic group that has
  members turns it into a consumer group.  Every classic member becomes a
  member at the group's generation, holding what the classic group assigned it
  (which is also its target); the members waiting in a rebalance are told
  REBALANCE_IN_PROGRESS and rejoin, served in the consumer group by
  ``consumer/classic_members``;
- downgrade (convertToClassicGroup / ClassicGroup.fromConsumerGroup): when the
  members leaving (or fenced) are the last that speak the consumer protocol and
  others remain, the group becomes a classic group, Stable at the consumer
  group's epoch with each member's target assignment, and a rebalance starts
  so the classic members agree on a new one among themselves.

Both write, in one batch, the tombstones of the old shape and the records of
the new, so a reload finds one group.  ``group.consumer.migration.policy``
(disabled, upgrade, downgrade, bidirectional) says which ways are allowed;
sizes beyond the other protocol's maximum stay where they are.
"""

from __future__ import annotations

import logging

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.group import (
    ClassicMetadata,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from samsa.coordinator.consumer.manager import ConsumerGroupManager
from samsa.coordinator.group import Group, GroupState, JoinResult, Member, SyncResult
from samsa.coordinator.rebalance import Rebalancer
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import Record
from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.consumer_protocol import (
    ASSIGNMENT,
    PROTOCOL_TYPE,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from samsa.protocol.internal_records.consumer_group_records import (
    Assignment,
    encode_consumer_group_value,
)
from samsa.protocol.internal_records.group_records import encode_group_metadata_key

log = logging.getLogger("samsa.coordinator")


class _NotConvertible(Exception):
    """A member's bytes do not read as the consumer protocol (or carry user data a
    server-side assignor would drop)."""


class Migration:
    """Conversions between a group's classic and consumer shapes."""

    def __init__(
        self, registry: GroupRegistry, rebalancer: Rebalancer, consumer: ConsumerGroupManager
    ) -> None:
        self.registry = registry
        self.rebalancer = rebalancer
        self.consumer = consumer

    # ------------------------------------------------------------ upgrade

    async def upgrade(self, classic: Group) -> bool:
        """Called under the consumer group's lock by the joining member's heartbeat."""
        config = self.consumer.config
        group_id = classic.group_id
        if not config.upgrade_enabled:
            log.info(
                "group %s: not upgraded, the migration policy is %s",
                group_id,
                config.migration_policy,
            )
            return False
        if classic.protocol_type != PROTOCOL_TYPE or len(classic.members) > config.max_size:
            return False
        try:
            members = [self._consumer_member(classic, m) for m in classic.members.values()]
        except _NotConvertible as exc:
            log.warning("group %s: not upgraded: %s", group_id, exc)
            return False
        epoch = classic.generation_id
        changes = [records.member_metadata(group_id, m) for m in members]
        changes.append(records.group_epoch(group_id, epoch))
        changes += [records.target_member(group_id, m.member_id, m.assigned) for m in members]
        changes.append(records.target_epoch(group_id, epoch))
        changes += [records.current_assignment(group_id, m) for m in members]
        for member in classic.members.values():
            member.complete_join(JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
            member.complete_sync(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        self.rebalancer.cancel_all(classic)
        for member_id in list(classic.pending_members):
            self.rebalancer.remove_pending(classic, member_id)
        encoded: list[Record] = [(encode_group_metadata_key(group_id), None)] + [
            (
                key.encode(),
                None if value is None else encode_consumer_group_value(key.record_type, value),
            )
            for key, value in changes
        ]
        await self.registry.write(classic.partition, encoded)  # replayed: both shapes
        log.info(
            "group %s: upgraded from classic to consumer with %d member(s) at epoch %d",
            group_id,
            len(members),
            epoch,
        )
        for converted in members:
            self.consumer.schedule(group_id, converted)
        return True

    def _consumer_member(self, classic: Group, member: Member) -> ConsumerMember:
        protocol = classic.protocol_name or (member.protocols[0][0] if member.protocols else "")
        topics = self.consumer.topics()
        try:
            subscription = decode_subscription(member.metadata(protocol))
            assignment = decode_assignment(member.assignment)
        except (DecodeError, ValueError) as exc:
            raise _NotConvertible(f"member {member.member_id}: {exc}") from None
        if assignment.user_data:
            raise _NotConvertible(f"member {member.member_id}: a custom assignor's user data")
        assigned: Assignment = {}
        for topic, parts in assignment.partitions.items():
            if topic in topics and parts:
                assigned[topics[topic][0]] = frozenset(parts)
        epoch = classic.generation_id
        return ConsumerMember(
            member.member_id,
            instance_id=member.group_instance_id,
            rack_id=subscription.rack_id,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=tuple(subscription.topics),
            rebalance_timeout_ms=member.rebalance_timeout_ms,
            member_epoch=epoch,
            previous_member_epoch=epoch,
            state=MemberState.STABLE,
            assigned=assigned,
            classic=ClassicMetadata(member.session_timeout_ms, tuple(member.protocols)),
        )

    # ---------------------------------------------------------- downgrade

    def can_downgrade(self, group: ConsumerGroup, leaving: set[str]) -> bool:
        """Kafka's validateOnlineDowngradeWithFencedMembers (and, with nobody
        leaving, WithReplacedMemberId: every member now speaks the classic protocol)."""
        remaining = len(set(group.members) - leaving)
        return (
            remaining > 0
            and group.all_classic_except(leaving)
            and self.consumer.config.downgrade_enabled
            and remaining <= self.registry.config.group_max_size
        )

    async def downgrade(
        self, group: ConsumerGroup, leaving: set[str], *, rebalance: bool = True
    ) -> Group:
        """Called under the consumer group's lock.  Without ``rebalance`` (a static
        classic member took the place of the last consumer-protocol one) the
        classic group stays Stable with the target assignment, as in Kafka."""
        group_id = group.group_id
        classic = self._classic_group(group, leaving)
        tombstones = records.group_removal(group_id, list(group.members))
        encoded: list[Record] = [(key.encode(), None) for key, _ in tombstones]
        encoded.append(self.registry.group_record(classic))
        offsets_holder = self.registry.groups.get(group_id)
        if offsets_holder is not None:
            classic.offsets = offsets_holder.offsets

        def apply() -> None:
            for change in tombstones:
                self.consumer.apply(change)
            self.registry.groups[group_id] = classic

        await self.registry.write(group.partition, encoded, apply=apply)
        self.consumer.timers.cancel_group(group_id)
        log.info(
            "group %s: downgraded from consumer to classic with %d member(s) at generation %d",
            group_id,
            len(classic.members),
            classic.generation_id,
        )
        for member in classic.members.values():
            self.rebalancer.schedule_heartbeat(classic, member)
        if rebalance:
            self.rebalancer.prepare_rebalance(classic, f"downgrade of group {group_id} to classic")
        return classic

    def _classic_group(self, group: ConsumerGroup, leaving: set[str]) -> Group:
        classic = Group(
            group.group_id,
            group.partition,
            state=GroupState.STABLE,
            state_timestamp=self.registry.time_ms(),
            generation_id=group.group_epoch,
            protocol_type=PROTOCOL_TYPE,
        )
        for member in group.members.values():
            if member.member_id in leaving or member.classic is None:
                continue
            classic.add(
                Member(
                    member_id=member.member_id,
                    group_instance_id=member.instance_id,
                    client_id=member.client_id,
                    client_host=member.client_host,
                    rebalance_timeout_ms=member.rebalance_timeout_ms,
                    session_timeout_ms=member.classic.session_timeout_ms,
                    protocol_type=PROTOCOL_TYPE,
                    protocols=list(member.classic.protocols),
                )
            )
        classic.protocol_name = classic.select_protocol()
        for joined in classic.members.values():
            target = group.target.get(joined.member_id, {})
            by_name = {group.topic_name(t): sorted(ps) for t, ps in sorted(target.items())}
            joined.assignment = encode_assignment(
                by_name, version=_assignment_version(joined.metadata(classic.protocol_name))
            )
        return classic


def _assignment_version(subscription: bytes) -> int:
    try:
        return max(min(decode_subscription(subscription).version, ASSIGNMENT.valid[1]), 0)
    except (DecodeError, ValueError):
        return ASSIGNMENT.valid[1]
