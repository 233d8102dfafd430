"""The in-memory state of one KIP-848 consumer group, changed only by replaying records.

Invariants (as in Kafka's ModernGroup/ConsumerGroup):

- ``group_epoch`` >= ``assignment_epoch``: the target assignment lags the group
  epoch until the coordinator recomputes it for the new membership/metadata.
- a member's ``member_epoch`` <= ``assignment_epoch``; it reaches the target
  epoch once it holds no partition that the target gives to someone else.
- a partition is owned (assigned or pending revocation) by at most one member;
  a member receives a partition only after its previous owner revoked it.

A member that joined with the classic protocol (JoinGroup, KIP-848's online
migration) carries ``classic``: its session timeout and the protocols it
offered; its member epoch is the generation it is told.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from samsa.protocol.internal_records.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    Assignment,
    ConsumerGroupKey,
    assignment_from_wire,
)

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

TopicMetadata = dict[str, tuple[bytes, int]]
"""Topic name -> (topic id, partition count): the topics a group's members subscribe to."""


class MemberState(IntEnum):
    """Kafka's MemberState byte, as stored in ConsumerGroupCurrentMemberAssignment."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


@dataclass(frozen=True, slots=True)
class ClassicMetadata:
    """What a classic member sent in JoinGroup and keeps using in the consumer group."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        """The name it is told in JoinGroup and must repeat in SyncGroup (its first)."""
        return self.protocols[0][0] if self.protocols else ""

    def to_value(self) -> dict[str, Any]:
        return {
            "session_timeout_ms": self.session_timeout_ms,
            "supported_protocols": [{"name": n, "metadata": m} for n, m in self.protocols],
        }

    @classmethod
    def from_value(cls, value: dict[str, Any] | None) -> ClassicMetadata | None:
        if value is None:
            return None
        protocols = tuple((p["name"], bytes(p["metadata"])) for p in value["supported_protocols"])
        return cls(value["session_timeout_ms"], protocols)


@dataclass(slots=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    classic: ClassicMetadata | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def subscription(self) -> tuple[tuple[str, ...], str | None]:
        return tuple(sorted(self.subscribed_topic_names)), self.subscribed_topic_regex

    def metadata_value(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "rack_id": self.rack_id,
            "client_id": self.client_id,
            "client_host": self.client_host,
            "subscribed_topic_names": list(self.subscribed_topic_names),
            "subscribed_topic_regex": self.subscribed_topic_regex,
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "server_assignor": self.server_assignor,
            "classic_member_metadata": None if self.classic is None else self.classic.to_value(),
        }


class ConsumerGroup:
    """One KIP-848 group of the ``__consumer_offsets`` partition ``partition``."""

    def __init__(self, group_id: str, partition: int) -> None:
        self.group_id = group_id
        self.partition = partition
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict[str, Assignment] = {}
        self.topics: TopicMetadata = {}
        self.deleted = False

    # --------------------------------------------------------------- views

    @property
    def state(self) -> str:
        """Kafka's ConsumerGroupState names (as ListGroups and describe show them)."""
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE:
                return "Reconciling"
        return "Stable"

    def owner_of(self, topic_id: bytes, partition: int) -> str | None:
        """The member holding ``partition`` (assigned or still revoking it), if any."""
        for m in self.members.values():
            if partition in m.assigned.get(topic_id, ()) or partition in m.pending_revocation.get(
                topic_id, ()
            ):
                return m.member_id
        return None

    def classic_members(self) -> int:
        return sum(1 for m in self.members.values() if m.uses_classic_protocol)

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """Kafka's supportsClassicProtocols: a joining classic member must be of the
        consumer protocol type and share a protocol with every classic member."""
        if protocol_type != "consumer" or not names:
            return False
        for m in self.members.values():
            if m.classic is not None and not names & {n for n, _ in m.classic.protocols}:
                return False
        return True

    def all_classic_except(self, member_ids: set[str]) -> bool:
        """Every member but these speaks the classic protocol (Kafka's
        allMembersUseClassicProtocolExcept, the downgrade's first condition)."""
        rest = [m for mid, m in self.members.items() if mid not in member_ids]
        return all(m.uses_classic_protocol for m in rest)

    def member_by_instance(self, instance_id: str) -> ConsumerMember | None:
        for m in self.members.values():
            if m.instance_id == instance_id:
                return m
        return None

    def topic_name(self, topic_id: bytes) -> str:
        for name, (tid, _count) in self.topics.items():
            if tid == topic_id:
                return name
        return ""

    # -------------------------------------------------------------- replay

    def replay(self, key: ConsumerGroupKey, value: dict[str, Any] | None) -> None:
        """Apply one record; the same code runs after a write and while loading."""
        kind = key.record_type
        if kind == GROUP_METADATA:
            if value is None:
                self.deleted = True
            else:
                self.group_epoch = value["epoch"]
        elif kind == PARTITION_METADATA:
            self.topics = (
                {}
                if value is None
                else {
                    t["topic_name"]: (bytes(t["topic_id"]), t["num_partitions"])
                    for t in value["topics"]
                }
            )
        elif kind == TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = 0 if value is None else value["assignment_epoch"]
        elif key.member_id is not None:
            self._replay_member(kind, key.member_id, value)

    def _replay_member(self, kind: int, member_id: str, value: dict[str, Any] | None) -> None:
        if kind == TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                self.target.pop(member_id, None)
            else:
                self.target[member_id] = assignment_from_wire(value["topic_partitions"])
            return
        if value is None:
            if kind == MEMBER_METADATA:
                self.members.pop(member_id, None)
            elif kind == CURRENT_MEMBER_ASSIGNMENT and member_id in self.members:
                m = self.members[member_id]
                m.member_epoch = m.previous_member_epoch = 0
                m.state = MemberState.STABLE
                m.assigned, m.pending_revocation = {}, {}
            return
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = ConsumerMember(member_id)
        if kind == MEMBER_METADATA:
            member.instance_id = value["instance_id"]
            member.rack_id = value["rack_id"]
            member.client_id = value["client_id"]
            member.client_host = value["client_host"]
            member.subscribed_topic_names = tuple(value["subscribed_topic_names"])
            member.subscribed_topic_regex = value["subscribed_topic_regex"]
            member.rebalance_timeout_ms = value["rebalance_timeout_ms"]
            member.server_assignor = value["server_assignor"]
            member.classic = ClassicMetadata.from_value(value.get("classic_member_metadata"))
        elif kind == CURRENT_MEMBER_ASSIGNMENT:
            member.member_epoch = value["member_epoch"]
            member.previous_member_epoch = value["previous_member_epoch"]
            state = value["state"]
            member.state = (
                MemberState(state)
                if state in MemberState._value2member_map_
                else MemberState.UNKNOWN
            )
            member.assigned = assignment_from_wire(value["assigned_partitions"])
            member.pending_revocation = assignment_from_wire(value["partitions_pending_revocation"])
