"""Streams members outside their heartbeats: leaving (-1, or -2 for a static member that
will be back), being fenced when their session or rebalance timeout runs out,
and the first assignment of a group whose initial rebalance delay ends.

Two deadlines per member, as for KIP-848 members (``modern.timers``): the
session restarts on every heartbeat; the revocation deadline starts when the
member is asked to revoke tasks and is not restarted by heartbeats.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from samsa.coordinator.modern.errors import GroupError
from samsa.coordinator.modern.timers import Deadline
from samsa.coordinator.streams import records
from samsa.coordinator.streams.assignment import target
from samsa.coordinator.streams.group import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    MemberState,
    StreamsGroup,
    StreamsMember,
)
from samsa.coordinator.streams.heartbeat_request import error_response
from samsa.coordinator.streams.state import StreamsGroups
from samsa.coordinator.streams.tasks import NO_TASKS
from samsa.errors import ErrorCode, KafkaError

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]


class MemberLifecycle(StreamsGroups):
    """Leaving, fencing and the timers of streams members."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initial_assignments: dict[str, asyncio.TimerHandle] = {}
        """Groups waiting out their initial rebalance delay (one timer each)."""

    def _group_gone(self, group_id: str) -> None:
        super()._group_gone(group_id)
        handle = self._initial_assignments.pop(group_id, None)
        if handle is not None:
            handle.cancel()

    # --------------------------------------------------------------- leave

    async def _leave(self, req: Body) -> Body:
        group_id, member_id, epoch = req["group_id"], req["member_id"], req["member_epoch"]
        group = self.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
        if req.get("shutdown_application"):
            self._request_shutdown(group, member_id)
        instance_id = req.get("instance_id")
        member = (
            group.members.get(member_id)
            if instance_id is None
            else group.member_by_instance(instance_id)
        )
        if member is None:
            if instance_id is not None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown."
                )
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {member_id} is not a member of group {group_id}.",
            )
        if instance_id is not None and member.member_id != member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member"
                f" {member.member_id}.",
            )
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # Kept with its tasks until the session times out or the instance returns.
            left = replace(
                member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation=NO_TASKS
            )
            await self.write(group.partition, [records.current_assignment(group_id, left)])
        else:
            log.info(
                "[GroupId %s][MemberId %s] Member left the streams group.", group_id, member_id
            )
            await self.remove_member(group, member.member_id)
        return {
            **error_response(ErrorCode.NONE, None),
            "member_id": member_id,
            "member_epoch": epoch,
        }

    async def remove_member(self, group: StreamsGroup, member_id: str) -> None:
        """Fence a member: its records are tombstoned and the group epoch bumps, so the
        next heartbeat computes a target without it."""
        changes = records.member_removal(group.group_id, member_id)
        changes.append(
            records.group_epoch(
                group.group_id,
                group.group_epoch + 1,
                group.metadata_hash,
                group.validated_topology_epoch,
                group.last_assignment_configs,
            )
        )
        await self.write(group.partition, changes)
        self.timers.cancel(group.group_id, member_id)
        self.task_offsets.get(group.group_id, {}).pop(member_id, None)

    # -------------------------------------------------------------- timers

    def schedule(self, group_id: str, member: StreamsMember) -> None:
        self.timers.heartbeat(
            group_id,
            member.member_id,
            session_timeout_ms=self.settings.session_timeout_ms(group_id),
            revoking=self._revoking(member),
            rebalance_timeout_ms=member.rebalance_timeout_ms,
        )

    def _revoking(self, member: StreamsMember) -> bool:
        return member.state is MemberState.UNREVOKED_TASKS

    def _log_fenced(self, group_id: str, member_id: str, kind: Deadline) -> None:
        log.info(
            "[GroupId %s] Streams member %s fenced from the group because %s.",
            group_id,
            member_id,
            "the member session expired"
            if kind is Deadline.SESSION
            else "it did not revoke its tasks in time",
        )

    def _schedule_initial_assignment(self, group_id: str, delay_ms: int) -> None:
        if group_id in self._initial_assignments:
            return

        def fire() -> None:
            self._initial_assignments.pop(group_id, None)
            self._spawn(self._assign_after_delay(group_id))

        loop = asyncio.get_running_loop()
        self._initial_assignments[group_id] = loop.call_later(delay_ms / 1000, fire)

    async def _assign_after_delay(self, group_id: str) -> None:
        """The first assignment of a group whose initial delay ran out: computed by the
        coordinator, picked up by each member at its next heartbeat."""
        async with self.lock(group_id):
            group = self.groups.get(group_id)
            if group is None or group.group_epoch <= group.assignment_epoch:
                return
            if group.partition not in self.registry.owned or group.topology is None:
                return
            if self._initial_delay_left(group, self.registry.time_ms()) > 0:
                return
            topic_metadata = self.topics()
            configured = self._configured(
                group,
                group.topology,
                target.metadata_hash(group.topology, topic_metadata),
                topic_metadata,
            )
            targets = target.new_target(
                group,
                group.members,
                configured,
                self.settings.num_standby_replicas(group_id),
                self.task_offsets.get(group_id, {}),
            )
            changes = target.target_changes(
                group, targets, group.group_epoch, self.registry.time_ms()
            )
            try:
                await self.write(group.partition, changes)
            except KafkaError as exc:
                log.warning("group %s: could not write its first assignment: %s", group_id, exc)

    def shutdown(self) -> None:
        super().shutdown()
        for handle in self._initial_assignments.values():
            handle.cancel()
        self._initial_assignments.clear()
