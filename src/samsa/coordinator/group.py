"""One classic group in memory: its state, members, generation and committed offsets.

This module holds data and the invariants that are purely about the group
(valid state transitions, who leads, which protocol the members agree on).  It
does no I/O and starts no timers; ``rebalance.py`` drives it.  The transition
table mirrors Kafka's ``GroupState.validPreviousStates``, so an illegal jump is
a bug that raises instead of silently corrupting a group.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.consumer_protocol import PROTOCOL_TYPE, decode_subscription


class GroupState(Enum):
    """Kafka's classic group states; the value is the name DescribeGroups/ListGroups report."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_S = GroupState
VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    _S.PREPARING_REBALANCE: frozenset({_S.STABLE, _S.COMPLETING_REBALANCE, _S.EMPTY}),
    _S.COMPLETING_REBALANCE: frozenset({_S.PREPARING_REBALANCE}),
    _S.STABLE: frozenset({_S.COMPLETING_REBALANCE}),
    _S.EMPTY: frozenset({_S.PREPARING_REBALANCE}),
    _S.DEAD: frozenset(_S),
}


@dataclass(frozen=True, slots=True)
class JoinResult:
    """What a JoinGroup caller gets back, before it is shaped for a wire version."""

    error: ErrorCode
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    members: tuple[tuple[str, str | None, bytes], ...] = ()
    """(member_id, group_instance_id, metadata) — only the leader receives them."""


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What a SyncGroup caller gets back."""

    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


class CommittedOffset(NamedTuple):
    """A committed offset as replayed from its ``__consumer_offsets`` record.

    A NamedTuple: every commit builds one, and a frozen dataclass costs
    several times as much to construct."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int


@dataclass(eq=False)
class Member:
    """A member of a classic group.

    ``join_waiter``/``sync_waiter`` are the futures a pending JoinGroup or
    SyncGroup request awaits; a member "is awaiting join" while it has one,
    which is what lets a rebalance complete as soon as everyone has rejoined.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    is_new: bool = False
    join_waiter: asyncio.Future[JoinResult] | None = None
    sync_waiter: asyncio.Future[SyncResult] | None = None
    heartbeat_timer: asyncio.TimerHandle | None = None
    # Loop time the session ends unless renewed; the timer may be set earlier
    # and re-arms itself for the rest (see Rebalancer.schedule_heartbeat).
    session_deadline: float = 0.0

    @property
    def awaiting_join(self) -> bool:
        return self.join_waiter is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_waiter is not None

    def metadata(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        """True when a rejoin carries exactly the protocols (and metadata) we already hold."""
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        """This member's preferred protocol among those every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def complete_join(self, result: JoinResult) -> None:
        waiter, self.join_waiter = self.join_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(result)

    def complete_sync(self, result: SyncResult) -> None:
        waiter, self.sync_waiter = self.sync_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(result)

    def cancel_heartbeat(self) -> None:
        if self.heartbeat_timer is not None:
            self.heartbeat_timer.cancel()
            self.heartbeat_timer = None


@dataclass(eq=False)
class Group:
    """A classic group: membership plus the offsets committed under its id."""

    group_id: str
    partition: int
    state: GroupState = GroupState.EMPTY
    state_timestamp: int = -1
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_members: dict[str, asyncio.TimerHandle | None] = field(default_factory=dict)
    """Member ids handed out with MEMBER_ID_REQUIRED, with their expiry timers."""
    static_members: dict[str, str] = field(default_factory=dict)
    """group.instance.id -> current member id."""
    pending_sync: set[str] = field(default_factory=set)
    """Members of the current generation that have not sent SyncGroup yet."""
    new_member_added: bool = False
    join_timer: asyncio.TimerHandle | None = None
    initial_delay_active: bool = False
    sync_timer: asyncio.TimerHandle | None = None
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)

    # ------------------------------------------------------------------ state

    def transition(self, new: GroupState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS[new]:
            raise RuntimeError(f"group {self.group_id}: illegal transition {self.state} -> {new}")
        self.state = new
        self.state_timestamp = now_ms

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

    @property
    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    # ---------------------------------------------------------------- members

    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        member.cancel_heartbeat()
        if (
            member.group_instance_id is not None
            and self.static_members.get(member.group_instance_id) == member_id
        ):
            del self.static_members[member.group_instance_id]
        self.pending_sync.discard(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> Member:
        """Give a static member a new member id, keeping its place, assignment and leadership."""
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        return member

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def validate_member(self, member_id: str, instance_id: str | None) -> ErrorCode | None:
        """Kafka's validateCurrentMember: the instance id (if any) maps to ``member_id``, which exists."""
        if instance_id is not None:
            current = self.static_members.get(instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    def all_members_joined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join for m in self.members.values())

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -------------------------------------------------------------- protocols

    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Whether a (re)joining member can be in this group at all."""
        names = {name for name, _ in protocols}
        if not self.members:
            return bool(protocol_type) and bool(names)
        if self.protocol_type != protocol_type:
            return False
        return bool(names & self._candidate_protocols())

    def _candidate_protocols(self) -> set[str]:
        members = iter(self.members.values())
        common = {name for name, _ in next(members).protocols}
        for m in members:
            common &= {name for name, _ in m.protocols}
        return common

    def select_protocol(self) -> str:
        """The protocol every member supports that most members prefer (first-listed wins ties)."""
        candidates = self._candidate_protocols()
        votes = Counter(m.vote(candidates) for m in self.members.values())
        return votes.most_common(1)[0][0]

    def member_metadata(self) -> tuple[tuple[str, str | None, bytes], ...]:
        """What the leader receives: every member's metadata for the selected protocol."""
        return tuple(
            (m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.members.values()
        )

    def subscribed_topics(self) -> set[str] | None:
        """Topics the consumer members subscribe to, or None when unknown (non-consumer group)."""
        if self.protocol_type != PROTOCOL_TYPE or self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for m in self.members.values():
                topics.update(decode_subscription(m.metadata(self.protocol_name)).topics)
        except (DecodeError, ValueError):
            return None
        return topics
