"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic membership protocol.

Each handler validates in Kafka's order (coordinator, group, member, generation,
state) so clients see the same error codes they see from Kafka, then hands state
changes to the ``Rebalancer``.  Requests that must wait (a join until the
rebalance completes, a follower's sync until the leader's assignment is stored)
await their member's future; nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeAlias

from samsa.coordinator.group import Group, GroupState, JoinResult, Member, SyncResult
from samsa.coordinator.rebalance import Rebalancer
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import group_store_error
from samsa.errors import ErrorCode, KafkaError

S = GroupState
_Pending: TypeAlias = JoinResult | asyncio.Future[JoinResult] | Coroutine[Any, Any, JoinResult]


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """A JoinGroup request, independent of its wire version."""

    group_id: str
    member_id: str
    group_instance_id: str | None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    client_id: str
    client_host: str
    require_known_member_id: bool
    supports_skip_assignment: bool
    reason: str | None = None


class Membership:
    """The four membership APIs over shared groups."""

    def __init__(self, registry: GroupRegistry, rebalancer: Rebalancer) -> None:
        self.registry = registry
        self.rebalancer = rebalancer
        self.config = registry.config

    # -------------------------------------------------------------- join

    async def join(self, r: JoinRequest) -> JoinResult:
        err = self.registry.check(r.group_id)
        if err is not None:
            return JoinResult(err, r.member_id)
        cfg = self.config
        if (
            not cfg.group_min_session_timeout_ms
            <= r.session_timeout_ms
            <= cfg.group_max_session_timeout_ms
        ):
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, r.member_id)
        unknown = r.member_id == ""
        group = self.registry.groups.get(r.group_id)
        if group is None:
            if not unknown:
                return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, r.member_id)
            group = self.registry.get_or_create(r.group_id)
        if group.is_(S.DEAD):
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, r.member_id)
        if not self._accepts(group, r.member_id):
            member = group.members.get(r.member_id)
            if member is not None:
                member.complete_join(JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, ""))
                group.remove(r.member_id)
                self.rebalancer.try_complete_join(group)
            return JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, "")
        waiter = self._join_new(group, r) if unknown else self._join_existing(group, r)
        if group.is_(S.PREPARING_REBALANCE):
            self.rebalancer.try_complete_join(group)
        if isinstance(waiter, JoinResult):
            # A refused first join must not leave a phantom Empty group behind.
            self.registry.drop_if_vacant(group)
            return waiter
        return await waiter

    def _accepts(self, group: Group, member_id: str) -> bool:
        """Kafka's acceptJoiningMember: room for one more under ``group.max.size``?

        While preparing, only members that already rejoined count, so that if the
        limit was lowered the last members to rejoin are the ones turned away.
        """
        limit = self.config.group_max_size
        member = group.members.get(member_id)
        if group.is_(S.EMPTY, S.DEAD):
            return True
        if group.is_(S.PREPARING_REBALANCE):
            awaiting = sum(1 for m in group.members.values() if m.awaiting_join)
            return (member is not None and member.awaiting_join) or awaiting < limit
        return member is not None or len(group.members) < limit

    def _join_new(self, group: Group, r: JoinRequest) -> _Pending:
        if not group.supports_protocols(r.protocol_type, r.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, r.member_id)
        new_id = f"{r.group_instance_id or r.client_id}-{uuid.uuid4()}"
        if r.group_instance_id is not None:
            old_id = group.static_members.get(r.group_instance_id)
            if old_id is None:
                return self._add_member_and_rebalance(group, r, new_id)
            return self._replace_static_member(group, r, old_id, new_id)
        if r.require_known_member_id:
            # Two-step join (v4+): the client must come back with this id, so ids of
            # clients that die before rejoining do not pile up as members.
            self.rebalancer.schedule_pending_expiry(group, new_id, r.session_timeout_ms)
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, new_id)
        return self._add_member_and_rebalance(group, r, new_id)

    def _join_existing(self, group: Group, r: JoinRequest) -> _Pending:
        if not group.supports_protocols(r.protocol_type, r.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, r.member_id)
        if r.member_id in group.pending_members:
            if r.group_instance_id is not None:
                return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, r.member_id)
            return self._add_member_and_rebalance(group, r, r.member_id)
        err = group.validate_member(r.member_id, r.group_instance_id)
        if err is not None:
            return JoinResult(err, r.member_id)
        member = group.members[r.member_id]
        if group.is_(S.PREPARING_REBALANCE):
            return self._update_member_and_rebalance(group, member, r)
        if group.is_(S.COMPLETING_REBALANCE):
            if member.matches(r.protocols):
                # A retried join of this generation: answer again what the member was told.
                return self._current_join_result(group, member)
            return self._update_member_and_rebalance(group, member, r)
        if group.is_(S.STABLE):
            if group.is_leader(member.member_id) or not member.matches(r.protocols):
                return self._update_member_and_rebalance(group, member, r)
            return self._current_join_result(group, member)
        return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, r.member_id)

    def _current_join_result(self, group: Group, member: Member) -> JoinResult:
        leader = group.is_leader(member.member_id)
        return JoinResult(
            ErrorCode.NONE,
            member.member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            members=group.member_metadata() if leader else (),
        )

    def _new_waiter(self, member: Member) -> asyncio.Future[JoinResult]:
        if member.join_waiter is not None:
            member.complete_join(JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
        member.join_waiter = asyncio.get_running_loop().create_future()
        return member.join_waiter

    def _add_member_and_rebalance(
        self, group: Group, r: JoinRequest, member_id: str
    ) -> asyncio.Future[JoinResult]:
        member = Member(
            member_id=member_id,
            group_instance_id=r.group_instance_id,
            client_id=r.client_id,
            client_host=r.client_host,
            rebalance_timeout_ms=r.rebalance_timeout_ms,
            session_timeout_ms=r.session_timeout_ms,
            protocol_type=r.protocol_type,
            protocols=list(r.protocols),
            is_new=True,
        )
        if group.is_(S.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        waiter = self._new_waiter(member)
        self.rebalancer.schedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        self.rebalancer.remove_pending(group, member_id)
        self.rebalancer.maybe_prepare_rebalance(group, f"adding new member {member_id}")
        return waiter

    def _update_member_and_rebalance(
        self, group: Group, member: Member, r: JoinRequest
    ) -> asyncio.Future[JoinResult]:
        member.protocols = list(r.protocols)
        member.rebalance_timeout_ms = r.rebalance_timeout_ms
        member.session_timeout_ms = r.session_timeout_ms
        waiter = self._new_waiter(member)
        self.rebalancer.maybe_prepare_rebalance(group, f"member {member.member_id} rejoined")
        return waiter

    async def _replace_static_member(
        self, group: Group, r: JoinRequest, old_id: str, new_id: str
    ) -> JoinResult:
        """A static member came back with a fresh member id (restart): fence the old id.

        In a Stable group whose selected protocol would not change this needs no
        rebalance: the member keeps its assignment and the group snapshot is
        rewritten with the new id (Kafka's updateStaticMemberAndRebalance).
        """
        old_leader = group.leader_id
        member = group.members[old_id]
        member.complete_join(JoinResult(ErrorCode.FENCED_INSTANCE_ID, old_id))
        member.complete_sync(SyncResult(ErrorCode.FENCED_INSTANCE_ID))
        old_settings = (member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms)
        group.replace_static_member(r.group_instance_id or "", old_id, new_id)
        member.protocols = list(r.protocols)
        member.rebalance_timeout_ms = r.rebalance_timeout_ms
        member.session_timeout_ms = r.session_timeout_ms
        member.client_id, member.client_host = r.client_id, r.client_host
        self.rebalancer.schedule_heartbeat(group, member)

        if group.is_(S.STABLE) and group.select_protocol() == group.protocol_name:
            generation = group.generation_id
            try:
                await self.registry.write(
                    group.partition, [self.registry.group_record(group)], replay=False
                )
            except KafkaError as exc:
                if group.members.get(new_id) is member:
                    member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms = (
                        old_settings
                    )
                    group.replace_static_member(r.group_instance_id or "", new_id, old_id)
                    self.rebalancer.schedule_heartbeat(group, member)
                return JoinResult(group_store_error(exc.code), "", generation_id=generation)
            leader = group.is_leader(new_id)
            skip = leader and r.supports_skip_assignment
            return JoinResult(
                ErrorCode.NONE,
                new_id,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                # Old clients must not think they lead: a Stable group would not
                # broadcast a new assignment, so they get the previous leader id.
                leader=(group.leader_id or "")
                if r.supports_skip_assignment
                else (old_leader or ""),
                skip_assignment=skip,
                members=group.member_metadata() if skip else (),
            )
        waiter = self._new_waiter(member)
        if group.is_(S.STABLE):
            self.rebalancer.maybe_prepare_rebalance(
                group, f"static member {new_id} changed protocols"
            )
        elif group.is_(S.COMPLETING_REBALANCE):
            self.rebalancer.prepare_rebalance(
                group, f"static member {new_id} replaced mid-rebalance"
            )
        else:
            self.rebalancer.try_complete_join(group)
        return await waiter

    # -------------------------------------------------------------- sync

    async def sync(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResult:
        err = self.registry.check(group_id)
        if err is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance state was lost with the previous coordinator; old
            # clients do not expect LOAD_IN_PROGRESS here, but all of them rejoin
            # on REBALANCE_IN_PROGRESS.
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        if err is not None:
            return SyncResult(err)
        group = self.registry.groups.get(group_id)
        if group is None:
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_(S.DEAD):
            return SyncResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        err = group.validate_member(member_id, group_instance_id)
        if err is not None:
            return SyncResult(err)
        if generation_id != group.generation_id:
            return SyncResult(ErrorCode.ILLEGAL_GENERATION)
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if group.is_(S.EMPTY):
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_(S.PREPARING_REBALANCE):
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        member = group.members[member_id]
        group.pending_sync.discard(member_id)
        self.rebalancer.schedule_heartbeat(group, member)
        if group.is_(S.STABLE):
            return SyncResult(
                ErrorCode.NONE, member.assignment, group.protocol_type, group.protocol_name
            )
        # CompletingRebalance: wait for the leader's assignment.
        if member.sync_waiter is not None:
            member.complete_sync(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        waiter: asyncio.Future[SyncResult] = asyncio.get_running_loop().create_future()
        member.sync_waiter = waiter
        if group.is_leader(member_id):
            full = {m: assignments.get(m, b"") for m in group.members}
            generation = group.generation_id
            try:
                await self.registry.write(
                    group.partition, [self.registry.group_record(group, full)], replay=False
                )
            except KafkaError as exc:
                if group.is_(S.COMPLETING_REBALANCE) and group.generation_id == generation:
                    self.rebalancer.fail_sync(group, group_store_error(exc.code))
            else:
                if group.is_(S.COMPLETING_REBALANCE) and group.generation_id == generation:
                    self.rebalancer.propagate_assignment(group, full)
        return await waiter

    # --------------------------------------------------------- heartbeat

    def heartbeat(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode:
        err = self.registry.check(group_id)
        if err is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return ErrorCode.NONE  # as Kafka: keep the member alive until its group is loaded
        if err is not None:
            return err
        group = self.registry.groups.get(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if group.is_(S.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        err = group.validate_member(member_id, group_instance_id)
        if err is not None:
            return err
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if group.is_(S.EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID
        self.rebalancer.schedule_heartbeat(group, group.members[member_id])
        if group.is_(S.PREPARING_REBALANCE):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    # ------------------------------------------------------------- leave

    def leave(
        self, group_id: str, leaving: list[tuple[str, str | None]]
    ) -> tuple[ErrorCode, list[ErrorCode]]:
        """Remove members given as (member_id, group_instance_id); one error per member."""
        err = self.registry.check(group_id)
        if err is not None:
            return err, [err] * len(leaving)
        group = self.registry.groups.get(group_id)
        if group is None:
            return ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID] * len(leaving)
        if group.is_(S.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, [ErrorCode.COORDINATOR_NOT_AVAILABLE] * len(
                leaving
            )
        return ErrorCode.NONE, [self._leave_one(group, m, i) for m, i in leaving]

    def _leave_one(self, group: Group, member_id: str, instance_id: str | None) -> ErrorCode:
        if instance_id is not None:
            current = group.static_members.get(instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if member_id and member_id != current:
                return ErrorCode.FENCED_INSTANCE_ID
            member_id = current
        elif self.rebalancer.remove_pending(group, member_id):
            self.rebalancer.try_complete_join(group)
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self.rebalancer.remove_member_and_update(group, member, f"member {member_id} left")
        return ErrorCode.NONE
