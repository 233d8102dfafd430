"""ConsumerGroupHeartbeat: joining, reconciling and leaving KIP-848 groups.

Each heartbeat runs under its group's lock: it reads the group, computes the
records of every change (member metadata, group epoch, target assignment, the
member's current assignment), writes them to ``__consumer_offsets`` and only
then applies them by replay, so memory never runs ahead of the log and a
reloaded coordinator rebuilds the same state.

Members are fenced after ``group.consumer.session.timeout.ms`` without a
heartbeat, and after their rebalance timeout if they do not revoke partitions
the target moved elsewhere.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.advance import advance
from samsa.coordinator.consumer.assignors import ASSIGNORS
from samsa.coordinator.consumer.config import ConsumerGroupConfig
from samsa.coordinator.consumer.group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from samsa.coordinator.consumer.heartbeat_request import (
    check_epoch,
    error_response,
    joining_member,
    validate,
    with_request,
)
from samsa.coordinator.group import Group
from samsa.coordinator.modern.errors import GroupError
from samsa.coordinator.modern.record_groups import RecordGroups
from samsa.coordinator.modern.timers import Deadline
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import group_store_error
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.internal_records.consumer_group_records import (
    CONSUMER_GROUP_RECORDS,
    ConsumerGroupKey,
    assignment_from_wire,
    assignment_to_wire,
)
from samsa.protocol.internal_records.group_records import encode_group_metadata_key

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]
TopicLookup = Callable[[], Mapping[str, tuple[bytes, int]]]


class Migration(Protocol):
    """KIP-848's online migration, as the coordinator wires it in."""

    async def upgrade(self, classic: Group) -> bool:
        """Make a classic group with members a consumer group; False if not allowed."""
        ...

    def can_downgrade(self, group: ConsumerGroup, leaving: set[str]) -> bool: ...

    async def downgrade(
        self, group: ConsumerGroup, leaving: set[str], *, rebalance: bool = True
    ) -> Group:
        """Make the group classic again without the ``leaving`` members."""
        ...


class ConsumerGroupManager(RecordGroups[ConsumerGroup, ConsumerGroupKey]):
    """Every KIP-848 group of the ``__consumer_offsets`` partitions this coordinator owns
    (replay, writes, locks and deadlines in ``RecordGroups``)."""

    record_family = CONSUMER_GROUP_RECORDS

    def __init__(
        self, registry: GroupRegistry, config: ConsumerGroupConfig, topics: TopicLookup
    ) -> None:
        super().__init__(registry)
        self.config = config
        self.topics = topics
        registry.replay_other = self.replay_raw
        self.migration: Migration | None = None
        """Conversions to and from classic groups (coordinator/migration.py)."""

    def _new_group(self, group_id: str, partition: int) -> ConsumerGroup:
        return ConsumerGroup(group_id, partition)

    # ----------------------------------------------------------- heartbeat

    async def heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """ConsumerGroupHeartbeat (68)."""
        try:
            validate(request, version, self.config)
            group_id = request["group_id"]
            err = self.registry.check(group_id)
            if err is not None:
                raise GroupError(err)
            async with self.lock(group_id):
                return await self._heartbeat(request, version, client_id, client_host)
        except GroupError as exc:
            return error_response(exc.code, exc.message)
        except KafkaError as exc:
            return error_response(group_store_error(exc.code), None)

    async def _heartbeat(self, req: Body, version: int, client_id: str, client_host: str) -> Body:
        group_id: str = req["group_id"]
        epoch: int = req["member_epoch"]
        member_id: str = req["member_id"] or ""
        if not member_id:  # v0: the coordinator names new members
            member_id = uuid.uuid4().hex
        partition = self.registry.partition_for(group_id)
        group = self.groups.get(group_id)
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return await self._leave(group, member_id, epoch)
        changes: list[records.Change] = []
        if group is None:
            if epoch != 0:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {group_id} has no members")
            await self._take_over_classic(group_id, partition)
            group = self.groups.get(group_id) or ConsumerGroup(group_id, partition)
        members = dict(group.members)
        target = dict(group.target)
        member = members.get(member_id)
        subscription_changed = False
        if epoch == 0:
            member, replaced = joining_member(
                group, member, member_id, req.get("instance_id"), self.config.max_size
            )
            if replaced is not None:
                changes += records.member_removal(group_id, replaced.member_id)
                changes.append(
                    records.target_member(group_id, member_id, target.get(replaced.member_id, {}))
                )
                target[member_id] = target.pop(replaced.member_id, {})
                members.pop(replaced.member_id)
            subscription_changed = member_id not in group.members and replaced is None
        else:
            if member is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is not in group {group_id}"
                )
            check_epoch(member, epoch, req.get("topic_partitions"))
        updated = with_request(member, req, client_id, client_host)
        subscription_changed |= updated.subscription() != member.subscription()
        if updated.metadata_value() != member.metadata_value() or member_id not in group.members:
            changes.append(records.member_metadata(group_id, updated))
        members[member_id] = updated
        owned_req = req.get("topic_partitions")
        owned = None if owned_req is None else assignment_from_wire(owned_req)
        reconciled = advance(
            group,
            members,
            target,
            updated,
            subscription_changed=subscription_changed,
            owned=owned,
            all_topics=self.topics(),
            assignor=ASSIGNORS[self.assignor_of_members(members.values())],
            changes=changes,
        )
        # Decided before the write: replaying it updates ``member`` in place.
        send_assignment = (
            epoch == 0
            or reconciled.member_epoch != epoch
            or reconciled.assigned != member.assigned
            or (owned is not None and owned != reconciled.assigned)
        )
        await self.write(partition, changes)
        self.schedule(group_id, reconciled)
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member_id,
            "member_epoch": reconciled.member_epoch,
            "heartbeat_interval_ms": self.config.heartbeat_interval_ms,
            "assignment": (
                {"topic_partitions": assignment_to_wire(reconciled.assigned)}
                if send_assignment
                else None
            ),
        }

    def assignor_of(self, group: ConsumerGroup) -> str:
        return self.assignor_of_members(group.members.values())

    def assignor_of_members(self, members: Any) -> str:
        """The assignor most members ask for, else the first configured (Kafka's rule)."""
        asked = Counter(m.server_assignor for m in members if m.server_assignor)
        if asked:
            return asked.most_common(1)[0][0]
        return self.config.assignors[0]

    async def _take_over_classic(self, group_id: str, partition: int) -> None:
        """A classic group of this id: upgraded (KIP-848's online migration) when
        the policy allows it, even with members, who go on in the consumer group
        with the classic protocol; refused otherwise.  Committed offsets stay."""
        classic = self.registry.groups.get(group_id)
        if classic is None:
            return
        if classic.members or classic.pending_members:
            if self.migration is None or not await self.migration.upgrade(classic):
                raise GroupError(
                    ErrorCode.GROUP_ID_NOT_FOUND, f"group {group_id} is not a consumer group"
                )
            return
        if classic.generation_id > 0 or classic.protocol_type is not None:
            log.info("upgrading empty classic group %s to the consumer protocol", group_id)
            await self.registry.write(partition, [(encode_group_metadata_key(group_id), None)])

    async def _leave(self, group: ConsumerGroup | None, member_id: str, epoch: int) -> Body:
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is not in the group")
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if member.instance_id is None:
                raise GroupError(ErrorCode.INVALID_REQUEST, "only static members leave with -2")
            # Kept with its partitions until the session times out or the instance returns.
            left = replace(
                member,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                previous_member_epoch=member.member_epoch,
            )
            await self.write(group.partition, [records.current_assignment(group.group_id, left)])
        else:
            await self.fence(group, {member_id})
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member_id,
            "member_epoch": epoch,
            "heartbeat_interval_ms": 0,
            "assignment": None,
        }

    async def fence(self, group: ConsumerGroup, member_ids: set[str]) -> None:
        """Remove members (left, or fenced by a deadline): their records are
        tombstoned and the group epoch bumps, so the next heartbeat computes a
        target without them -- or, when only classic members would be left and the
        policy allows it, the group becomes a classic group again (downgrade)."""
        migration = self.migration
        if migration is not None and migration.can_downgrade(group, member_ids):
            await migration.downgrade(group, member_ids)
            return
        changes: list[records.Change] = []
        for member_id in sorted(member_ids):
            changes += records.member_removal(group.group_id, member_id)
        changes.append(records.group_epoch(group.group_id, group.group_epoch + 1))
        await self.write(group.partition, changes)
        for member_id in member_ids:
            self.timers.cancel(group.group_id, member_id)

    async def remove_member(self, group: ConsumerGroup, member_id: str) -> None:
        await self.fence(group, {member_id})

    # -------------------------------------------------------------- timers

    def schedule(self, group_id: str, member: ConsumerMember) -> None:
        """Restart the session; start the revocation deadline when the member must revoke
        (and drop it once it has).  A classic member's session is its JoinGroup's, and
        it has join and sync deadlines instead (classic_members)."""
        member_id = member.member_id
        if member.classic is not None:
            self.timers.start(
                group_id, member_id, Deadline.SESSION, member.classic.session_timeout_ms
            )
            return
        self.timers.heartbeat(
            group_id,
            member_id,
            session_timeout_ms=self.config.session_timeout_ms,
            revoking=self._revoking(member),
            rebalance_timeout_ms=member.rebalance_timeout_ms,
        )

    def _revoking(self, member: ConsumerMember) -> bool:
        return member.state is MemberState.UNREVOKED_PARTITIONS
