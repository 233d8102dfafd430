"""The in-memory state of one streams group, changed only by replaying its records.

Invariants (as in Kafka's StreamsGroup):

- ``group_epoch`` >= ``assignment_epoch``: the target assignment lags the group
  epoch until the coordinator recomputes it for new members, a new topology or
  new topic metadata;
- a member reaches the target epoch once it holds no task the target gives to
  another member; an active task is held by at most one member, and a process
  (one Streams instance, possibly many members) never holds a task twice.

What is not in the log is soft state, rebuilt or re-decided after a load: the
configured topology (partition counts depend on the cluster), the shutdown
request, the endpoint information epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from samsa.coordinator.streams.internal_topics import ConfiguredTopology
from samsa.coordinator.streams.tasks import (
    NO_TASKS,
    HeldTasks,
    TaskSet,
    epochs_from_record,
    tasks_from_wire,
)
from samsa.coordinator.streams.topology import StreamsTopology
from samsa.protocol.internal_records.streams_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    TOPOLOGY,
    StreamsGroupKey,
)

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

Body = dict[str, Any]
Endpoint = tuple[str, int]


class MemberState(IntEnum):
    """Kafka's streams MemberState byte, as the CurrentMemberAssignment record stores it
    (not the consumer group's numbers)."""

    STABLE = 1
    UNREVOKED_TASKS = 2
    UNRELEASED_TASKS = 3
    UNKNOWN = 127


@dataclass(slots=True)
class StreamsMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    assigned: HeldTasks = NO_TASKS
    pending_revocation: HeldTasks = NO_TASKS

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def metadata_value(self) -> Body:
        return {
            "instance_id": self.instance_id,
            "rack_id": self.rack_id,
            "client_id": self.client_id,
            "client_host": self.client_host,
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "topology_epoch": self.topology_epoch,
            "process_id": self.process_id,
            "user_endpoint": (
                None
                if self.user_endpoint is None
                else {"host": self.user_endpoint[0], "port": self.user_endpoint[1]}
            ),
            "client_tags": [{"key": k, "value": v} for k, v in self.client_tags],
        }


class StreamsGroup:
    """One streams group of the ``__consumer_offsets`` partition ``partition``."""

    def __init__(self, group_id: str, partition: int) -> None:
        self.group_id = group_id
        self.partition = partition
        self.group_epoch = 0
        self.metadata_hash = 0
        self.validated_topology_epoch = -1
        self.last_assignment_configs: dict[str, str] = {}
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        self.members: dict[str, StreamsMember] = {}
        self.target: dict[str, TaskSet] = {}
        self.topology: StreamsTopology | None = None
        self.deleted = False
        # Soft state (not in the log).
        self.configured: ConfiguredTopology | None = None
        self.configured_for: tuple[int, int] | None = None
        """(topology epoch, metadata hash) that ``configured`` was computed for."""
        self.shutdown_requested_by: str | None = None
        self.endpoint_information_epoch = 0
        self.created_ms: int | None = None
        """When a heartbeat created the group (for the initial rebalance delay)."""

    # --------------------------------------------------------------- views

    @property
    def state(self) -> str:
        """Kafka's StreamsGroupState names (ListGroups, describe)."""
        if not self.members:
            return "Empty"
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return "NotReady"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def member_by_instance(self, instance_id: str) -> StreamsMember | None:
        for m in self.members.values():
            if m.instance_id == instance_id:
                return m
        return None

    def active_owner_process(self, subtopology: str, partition: int) -> str | None:
        """The process holding ``subtopology_partition`` as an active task (assigned or
        still revoking it), if any."""
        for m in self.members.values():
            for held in (m.assigned, m.pending_revocation):
                if partition in held.active.get(subtopology, {}):
                    return m.process_id
        return None

    def standby_processes(self, subtopology: str, partition: int) -> set[str]:
        return self._replica_processes(subtopology, partition, standby=True)

    def warmup_processes(self, subtopology: str, partition: int) -> set[str]:
        return self._replica_processes(subtopology, partition, standby=False)

    def _replica_processes(self, subtopology: str, partition: int, *, standby: bool) -> set[str]:
        out = set()
        for m in self.members.values():
            for held in (m.assigned, m.pending_revocation):
                tasks = held.standby if standby else held.warmup
                if partition in tasks.get(subtopology, ()):
                    out.add(m.process_id)
        return out

    # -------------------------------------------------------------- replay

    def replay(self, key: StreamsGroupKey, value: Body | None) -> None:
        """Apply one record; the same code runs after a write and while loading."""
        kind = key.record_type
        if kind == GROUP_METADATA:
            if value is None:
                self.deleted = True
                return
            self.group_epoch = value["epoch"]
            self.metadata_hash = value["metadata_hash"]
            self.validated_topology_epoch = value.get("validated_topology_epoch", -1)
            self.last_assignment_configs = {
                c["key"]: c["value"] for c in value.get("last_assignment_configs") or ()
            }
        elif kind == TOPOLOGY:
            self.topology = None if value is None else StreamsTopology.from_wire(value)
            self.configured = self.configured_for = None
        elif kind == TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = 0 if value is None else value["assignment_epoch"]
            self.assignment_timestamp = 0 if value is None else value["assignment_timestamp"]
        elif key.member_id is not None:
            self._replay_member(kind, key.member_id, value)

    def _replay_member(self, kind: int, member_id: str, value: Body | None) -> None:
        if kind == TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                self.target.pop(member_id, None)
            else:
                self.target[member_id] = TaskSet(
                    tasks_from_wire(value["active_tasks"]),
                    tasks_from_wire(value["standby_tasks"]),
                    tasks_from_wire(value["warmup_tasks"]),
                )
            return
        if value is None:
            if kind == MEMBER_METADATA:
                self.members.pop(member_id, None)
            elif kind == CURRENT_MEMBER_ASSIGNMENT and member_id in self.members:
                m = self.members[member_id]
                m.member_epoch, m.previous_member_epoch = 0, -1
                m.state = MemberState.STABLE
                m.assigned = m.pending_revocation = NO_TASKS
            return
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = StreamsMember(member_id)
        if kind == MEMBER_METADATA:
            endpoint = value.get("user_endpoint")
            member.instance_id = value["instance_id"]
            member.rack_id = value["rack_id"]
            member.client_id = value["client_id"]
            member.client_host = value["client_host"]
            member.rebalance_timeout_ms = value["rebalance_timeout_ms"]
            member.topology_epoch = value["topology_epoch"]
            member.process_id = value["process_id"]
            member.user_endpoint = (
                None if endpoint is None else (endpoint["host"], endpoint["port"])
            )
            member.client_tags = tuple((t["key"], t["value"]) for t in value["client_tags"])
        elif kind == CURRENT_MEMBER_ASSIGNMENT:
            epoch = value["member_epoch"]
            member.member_epoch = epoch
            member.previous_member_epoch = value["previous_member_epoch"]
            state = value["state"]
            member.state = (
                MemberState(state)
                if state in MemberState._value2member_map_
                else MemberState.UNKNOWN
            )
            member.assigned = _held(value, "", epoch)
            member.pending_revocation = _held(value, "_pending_revocation", epoch)


def _held(value: Body, suffix: str, member_epoch: int) -> HeldTasks:
    return HeldTasks(
        epochs_from_record(value[f"active_tasks{suffix}"], member_epoch),
        tasks_from_wire(value[f"standby_tasks{suffix}"]),
        tasks_from_wire(value[f"warmup_tasks{suffix}"]),
    )
