"""StreamsGroupHeartbeat: joining, reconciling and leaving streams groups (Kafka's
GroupMetadataManager.streamsGroupHeartbeat).

Each heartbeat runs under its group's lock, in Kafka's five steps: update the
member; initialise the topology (the first member's); configure it against
the cluster (partition counts, missing topics: those become the internal
topics the broker asks the controller to create); recompute the target
assignment when the group epoch moved past it; reconcile the member towards
its target.  Every change is a record written to ``__consumer_offsets`` and
only then applied by replay (``state``), so memory never runs ahead of the log.
Leaving, fencing and the timers are ``lifecycle``'s.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from samsa.coordinator.modern.errors import GroupError
from samsa.coordinator.store import group_store_error
from samsa.coordinator.streams import records
from samsa.coordinator.streams.assignment import target
from samsa.coordinator.streams.group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    MemberState,
    StreamsGroup,
    StreamsMember,
)
from samsa.coordinator.streams.heartbeat_request import (
    check_epoch,
    check_tasks_exist,
    error_response,
    validate,
    with_request,
)
from samsa.coordinator.streams.heartbeat_response import (
    HeartbeatResult,
    heartbeat_response,
    status_entry,
    tasks_text,
)
from samsa.coordinator.streams.internal_topics import (
    ASSIGNMENT_DELAYED,
    STALE_TOPOLOGY,
    InvalidTopology,
)
from samsa.coordinator.streams.lifecycle import MemberLifecycle
from samsa.coordinator.streams.reconciliation import FencedMember, Reconciler
from samsa.coordinator.streams.tasks import TaskSet, task_set_from_request
from samsa.coordinator.streams.topology import StreamsTopology
from samsa.errors import ErrorCode, KafkaError

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]


class StreamsGroupManager(MemberLifecycle):
    """Every streams group of the ``__consumer_offsets`` partitions this coordinator owns:
    heartbeats here, the rest in its bases."""

    # ----------------------------------------------------------- heartbeat

    async def heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> HeartbeatResult:
        """StreamsGroupHeartbeat (88)."""
        try:
            validate(request)
            group_id = request["group_id"]
            err = self.registry.check(group_id)
            if err is not None:
                raise GroupError(err)
            async with self.lock(group_id):
                if request["member_epoch"] in (
                    LEAVE_GROUP_MEMBER_EPOCH,
                    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                ):
                    return HeartbeatResult(await self._leave(request))
                return await self._heartbeat(request, version, client_id, client_host)
        except GroupError as exc:
            return HeartbeatResult(error_response(exc.code, exc.message))
        except (InvalidTopology, FencedMember) as exc:
            return HeartbeatResult(error_response(exc.code, str(exc)))
        except KafkaError as exc:
            return HeartbeatResult(error_response(group_store_error(exc.code), None))

    def _group_for(self, group_id: str, joining: bool, now: int) -> StreamsGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if not joining:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
        if self.other_group(group_id):
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group."
            )
        group = StreamsGroup(group_id, self.registry.partition_for(group_id))
        group.created_ms = now
        return group

    def _member_for(self, group: StreamsGroup, req: Body, owned: TaskSet | None) -> StreamsMember:
        member_id: str = req["member_id"]
        epoch: int = req["member_epoch"]
        member = group.members.get(member_id)
        if epoch == 0:
            if member is not None:
                return member
            if len(group.members) >= self.settings.config.max_size:
                raise GroupError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    "The streams group has reached its maximum capacity of"
                    f" {self.settings.config.max_size} members.",
                )
            instance_id = req.get("instance_id")
            if instance_id is not None:
                previous = group.member_by_instance(instance_id)
                if (
                    previous is not None
                    and previous.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH
                ):
                    raise GroupError(
                        ErrorCode.UNRELEASED_INSTANCE_ID,
                        f"Static member {member_id} with instance id {instance_id} cannot join the"
                        f" group because the instance id is owned by {previous.member_id} member.",
                    )
            log.info(
                "[GroupId %s][MemberId %s] Member joins the streams group.",
                group.group_id,
                member_id,
            )
            return StreamsMember(member_id)
        if member is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
        check_epoch(member, epoch, owned)
        return member

    async def _heartbeat(
        self, req: Body, version: int, client_id: str, client_host: str
    ) -> HeartbeatResult:
        group_id: str = req["group_id"]
        member_id: str = req["member_id"]
        epoch: int = req["member_epoch"]
        now = self.registry.time_ms()
        group = self._group_for(group_id, epoch == 0, now)
        owned = task_set_from_request(req)
        member = self._member_for(group, req, owned)
        changes: list[records.Change] = []
        statuses: list[Body] = []

        # 1. The member, and a static member it takes over from.
        replaced = None
        instance_id = req.get("instance_id")
        if epoch == 0 and instance_id is not None and member_id not in group.members:
            replaced = group.member_by_instance(instance_id)
            if replaced is not None:
                member = replace(
                    replaced, member_id=member_id, member_epoch=0, previous_member_epoch=0
                )
                member = replace(member, state=MemberState.STABLE)
                changes += records.member_removal(group_id, replaced.member_id)
                changes.append(
                    records.target_member(
                        group_id, member_id, group.target.get(replaced.member_id, TaskSet())
                    )
                )
        updated = with_request(member, req, client_id, client_host)
        fresh = member_id not in group.members
        bump = False
        if fresh or updated.metadata_value() != member.metadata_value():
            changes.append(records.member_metadata(group_id, updated))
            bump = fresh or _epoch_relevant(member, updated)
            if member.user_endpoint != updated.user_endpoint:
                group.endpoint_information_epoch += 1
        self._remember_offsets(group_id, member_id, req)

        # 2. The topology: the first member's; later ones must send the same.
        topology = self._topology(group, req, changes)
        if topology.epoch > updated.topology_epoch:
            statuses.append(
                status_entry(
                    STALE_TOPOLOGY,
                    f"The member's topology epoch {updated.topology_epoch} is behind the group's"
                    f" topology epoch {topology.epoch}.",
                )
            )

        # 3. Configure it against the cluster; maybe bump the group epoch.
        topic_metadata = self.topics()
        metadata_hash = target.metadata_hash(topology, topic_metadata)
        if metadata_hash != group.metadata_hash:
            bump = True
        configured = self._configured(group, topology, metadata_hash, topic_metadata)
        validated = -1
        if configured.is_ready:
            validated = topology.epoch
            assert configured.subtopologies is not None
            counts = {sid: s.number_of_tasks for sid, s in configured.subtopologies.items()}
            check_tasks_exist(counts, owned)
        if validated != group.validated_topology_epoch:
            bump = True
        assignment_configs = self.settings.assignment_configs(group_id)
        if not bump and assignment_configs != group.last_assignment_configs:
            bump = True
        group_epoch = group.group_epoch
        if bump:
            group_epoch += 1
            changes.append(
                records.group_epoch(
                    group_id, group_epoch, metadata_hash, validated, assignment_configs
                )
            )
            log.info(
                "[GroupId %s][MemberId %s] Bumped streams group epoch to %d.",
                group_id,
                member_id,
                group_epoch,
            )

        # 4. The target assignment, when the group epoch moved past it.
        members = dict(group.members)
        if replaced is not None:
            members.pop(replaced.member_id, None)
        members[member_id] = updated
        targets = dict(group.target)
        if replaced is not None:
            targets[member_id] = targets.pop(replaced.member_id, TaskSet())
        assignment_epoch = group.assignment_epoch
        if group_epoch > assignment_epoch:
            delay = self._initial_delay_left(group, now)
            if delay > 0:
                statuses.append(
                    status_entry(
                        ASSIGNMENT_DELAYED,
                        "Assignment delayed due to the configured initial rebalance delay.",
                    )
                )
                self._schedule_initial_assignment(group_id, delay)
                # Kafka's: the members reconcile towards nothing at the first target epoch.
                assignment_epoch = max(1, group.assignment_epoch)
                targets[member_id] = TaskSet()
            else:
                targets = target.new_target(
                    group,
                    members,
                    configured,
                    self.settings.num_standby_replicas(group_id),
                    self.task_offsets.get(group_id, {}),
                )
                changes += target.target_changes(group, targets, group_epoch, now)
                assignment_epoch = group_epoch
                log.info(
                    "[GroupId %s] Computed a new target assignment for epoch %d: %s.",
                    group_id,
                    group_epoch,
                    {m: tasks_text(t) for m, t in sorted(targets.items())},
                )

        # 5. Reconcile the member towards its target.
        reconciled = updated
        if not updated.is_reconciled_to(assignment_epoch):
            reconciled = Reconciler(
                updated,
                assignment_epoch,
                targets.get(member_id, TaskSet()),
                owned,
                group.active_owner_process,
                group.standby_processes,
                group.warmup_processes,
            ).build()
        if fresh or reconciled is not updated:
            changes.append(records.current_assignment(group_id, reconciled))
            if reconciled is not updated:
                log.info(
                    "[GroupId %s][MemberId %s] Member's new assignment state: epoch=%d,"
                    " previousEpoch=%d, state=%s, assignedTasks=%s and tasksPendingRevocation=%s.",
                    group_id,
                    member_id,
                    reconciled.member_epoch,
                    reconciled.previous_member_epoch,
                    reconciled.state.name,
                    tasks_text(reconciled.assigned.as_task_set()),
                    tasks_text(reconciled.pending_revocation.as_task_set()),
                )
        # Decided before the write: replaying it updates ``member`` in place.
        assignment_changed = reconciled.assigned != member.assigned
        if group_id not in self.groups:
            self.groups[group_id] = group  # created by this heartbeat; replay fills it in
        try:
            await self.write(group.partition, changes)
        except KafkaError:
            if not group.members and group_id in self.groups and group.group_epoch == 0:
                del self.groups[group_id]
            raise
        self.schedule(group_id, reconciled)
        if req.get("shutdown_application"):
            self._request_shutdown(group, member_id)
        return heartbeat_response(
            self.settings,
            group,
            req,
            assignment_changed,
            reconciled,
            configured,
            statuses,
            topic_metadata,
        )

    def _topology(
        self, group: StreamsGroup, req: Body, changes: list[records.Change]
    ) -> StreamsTopology:
        sent = req.get("topology")
        if sent is None:
            if group.topology is None:
                raise GroupError(ErrorCode.INVALID_REQUEST, "The group has no topology.")
            return group.topology
        topology = StreamsTopology.from_wire(sent)
        if group.topology is None:
            log.info(
                "[GroupId %s][MemberId %s] Member initialized the topology with epoch %d",
                group.group_id,
                req["member_id"],
                topology.epoch,
            )
            changes.append(records.topology(group.group_id, topology))
            return topology
        if group.topology.epoch > topology.epoch:
            return group.topology
        if group.topology != topology:
            raise GroupError(ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
        return group.topology


def _epoch_relevant(old: StreamsMember, new: StreamsMember) -> bool:
    """Changes that may change the assignment (Kafka's hasEpochRelevantMemberConfigChanged)."""
    return (
        old.process_id != new.process_id
        or old.client_tags != new.client_tags
        or old.rack_id != new.rack_id
        or old.topology_epoch != new.topology_epoch
        or old.instance_id != new.instance_id
    )
