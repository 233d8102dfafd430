"""Leader: tracks every replica's progress and computes the high watermark.

Rules (Kafka's LeaderState):

* The high watermark is the largest offset that a majority of the *current*
  voter set (the latest ``Voters`` entry in the log, committed or not) has
  reached; the leader counts its own *flushed* end offset, followers count with
  the fetch offset of their last valid Fetch (they flush before fetching).
* It moves only past ``epoch_start_offset`` (where this leader's LeaderChange
  entry sits), so older epochs' entries are committed only together with an
  entry of this epoch, never by counting replicas alone; and it never decreases.
* Check quorum: without a Fetch from a majority of the voters within
  1.5 x fetch timeout the leader resigns, so a partitioned leader steps down.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from samsa.raft.messages import FetchRequest, ReplicaDescription
from samsa.raft.voters import VoterSet

__all__ = ["LeaderState", "ParkedFetch", "PendingVoterChange", "ReplicaState"]


@dataclass(slots=True)
class ReplicaState:
    """What the leader knows of one replica (voter or observer)."""

    node_id: int
    directory_id: uuid.UUID | None = None
    end_offset: int | None = None
    last_fetch_ms: int = -1
    last_fetch_leader_end_offset: int = -1
    last_caught_up_ms: int = -1
    has_acknowledged_leader: bool = False

    def update_from_fetch(self, now_ms: int, fetch_offset: int, leader_end_offset: int) -> None:
        """Kafka's caught-up rule: at the leader's end now, or at its end as of the last fetch."""
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif 0 < self.last_fetch_leader_end_offset <= fetch_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.last_fetch_leader_end_offset = leader_end_offset
        self.last_fetch_ms = max(self.last_fetch_ms, now_ms)
        self.end_offset = fetch_offset
        self.has_acknowledged_leader = True

    def describe(self) -> ReplicaDescription:
        return ReplicaDescription(
            self.node_id,
            self.directory_id,
            -1 if self.end_offset is None else self.end_offset,
            self.last_fetch_ms,
            self.last_caught_up_ms,
        )


@dataclass(slots=True)
class ParkedFetch:
    """A Fetch with nothing new to return, answered when data comes or its wait ends."""

    reply_to: object
    request: FetchRequest
    deadline_ms: int


@dataclass(slots=True)
class PendingVoterChange:
    """An AddRaftVoter/RemoveRaftVoter whose ``Voters`` entry at ``offset`` awaits commit."""

    kind: str
    voter_id: int
    reply_to: object
    offset: int
    deadline_ms: int


class LeaderState:
    """The leader's view of its epoch (see the module doc for the rules)."""

    name = "Leader"

    def __init__(
        self,
        *,
        local_id: int,
        local_directory_id: uuid.UUID | None,
        epoch: int,
        epoch_start_offset: int,
        voters: VoterSet,
        granting_voters: tuple[int, ...],
        now_ms: int,
        check_quorum_timeout_ms: int,
    ) -> None:
        self.local_id = local_id
        self.local_directory_id = local_directory_id
        self.epoch = epoch
        self.epoch_start_offset = epoch_start_offset
        self.granting_voters = granting_voters
        self.high_watermark: int | None = None
        self.voter_states: dict[int, ReplicaState] = {}
        self.observer_states: dict[int, ReplicaState] = {}
        self.check_quorum_timeout_ms = check_quorum_timeout_ms
        self.check_quorum_deadline_ms = now_ms + check_quorum_timeout_ms
        self.fetched_voters: set[int] = set()
        self.begin_quorum_epoch_deadline_ms = now_ms
        self.parked_fetches: list[ParkedFetch] = []
        self.pending_change: PendingVoterChange | None = None
        self.resign_requested = False
        self.update_voter_set(voters)
        local = self.voter_states.get(local_id)
        if local is not None:
            local.has_acknowledged_leader = True

    @property
    def leader_id(self) -> int:
        return self.local_id

    @property
    def voted_id(self) -> int:
        return self.local_id

    def can_grant_vote(
        self,
        candidate_id: int,
        candidate_directory_id: uuid.UUID | None,
        log_up_to_date: bool,
        pre_vote: bool,
    ) -> bool:
        return False

    # -- replicas --------------------------------------------------------------------

    def update_voter_set(self, voters: VoterSet) -> None:
        """Re-sort replica states after a ``Voters`` entry (or its truncation)."""
        old_voters = self.voter_states
        states: dict[int, ReplicaState] = {}
        for node in voters:
            state = old_voters.pop(node.node_id, None) or self.observer_states.pop(
                node.node_id, None
            )
            if state is None:
                state = ReplicaState(node.node_id, node.directory_id)
            states[node.node_id] = state
        for node_id, state in old_voters.items():
            self.observer_states.setdefault(node_id, state)
        self.voter_states = states
        self.fetched_voters &= set(states)

    def is_voter(self, node_id: int) -> bool:
        return node_id in self.voter_states

    def replica(self, node_id: int, directory_id: uuid.UUID | None) -> ReplicaState:
        state = self.voter_states.get(node_id)
        if state is not None:
            return state
        state = self.observer_states.get(node_id)
        if state is None:
            state = self.observer_states[node_id] = ReplicaState(node_id, directory_id)
        return state

    def update_local(self, flushed_end_offset: int) -> bool:
        """The leader's own flushed end moved; True if the high watermark advanced."""
        state = self.replica(self.local_id, self.local_directory_id)
        if state.end_offset is None or flushed_end_offset > state.end_offset:
            state.end_offset = flushed_end_offset
        return self.maybe_update_high_watermark()

    def update_replica(
        self,
        node_id: int,
        directory_id: uuid.UUID | None,
        now_ms: int,
        fetch_offset: int,
        leader_end_offset: int,
    ) -> bool:
        """A valid Fetch from ``node_id``; True if the high watermark advanced."""
        state = self.replica(node_id, directory_id)
        state.update_from_fetch(now_ms, fetch_offset, leader_end_offset)
        return node_id in self.voter_states and self.maybe_update_high_watermark()

    def maybe_update_high_watermark(self) -> bool:
        offsets = sorted(
            (
                -1 if state.end_offset is None else state.end_offset
                for state in self.voter_states.values()
            ),
            reverse=True,
        )
        if not offsets:
            return False
        candidate = offsets[len(offsets) // 2]
        if candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark is not None and candidate <= self.high_watermark:
            return False
        self.high_watermark = candidate
        return True

    def acknowledge(self, node_id: int) -> None:
        state = self.voter_states.get(node_id)
        if state is not None:
            state.has_acknowledged_leader = True

    def voters_to_announce(self, now_ms: int, begin_quorum_epoch_timeout_ms: int) -> list[int]:
        """Voters to (re)send BeginQuorumEpoch to: never acknowledged, or silent for a while.

        Kafka re-sends periodically so a voter that missed the election (and so does
        not fetch) still learns the leader.
        """
        if now_ms >= self.begin_quorum_epoch_deadline_ms:
            self.begin_quorum_epoch_deadline_ms = now_ms + begin_quorum_epoch_timeout_ms
            for node_id, state in self.voter_states.items():
                if (
                    node_id != self.local_id
                    and now_ms - state.last_fetch_ms >= begin_quorum_epoch_timeout_ms
                ):
                    state.has_acknowledged_leader = False
        return [
            node_id
            for node_id, state in sorted(self.voter_states.items())
            if node_id != self.local_id and not state.has_acknowledged_leader
        ]

    # -- check quorum ----------------------------------------------------------------

    def record_voter_fetch(self, node_id: int, now_ms: int) -> None:
        if node_id == self.local_id or node_id not in self.voter_states:
            return
        self.fetched_voters.add(node_id)
        needed = len(self.voter_states) // 2 + 1
        if self.local_id in self.voter_states:
            needed -= 1
        if len(self.fetched_voters) >= needed:
            self.fetched_voters.clear()
            self.check_quorum_deadline_ms = now_ms + self.check_quorum_timeout_ms

    def check_quorum_expired(self, now_ms: int) -> bool:
        if list(self.voter_states) == [self.local_id]:
            return False
        return now_ms >= self.check_quorum_deadline_ms

    def voters_by_descending_fetch_offset(self) -> tuple[int, ...]:
        """Other voters, most caught up first: the preferred successors on resignation."""
        others = [s for s in self.voter_states.values() if s.node_id != self.local_id]
        others.sort(key=lambda s: (-(-1 if s.end_offset is None else s.end_offset), s.node_id))
        return tuple(s.node_id for s in others)

    def is_caught_up(
        self, node_id: int, directory_id: uuid.UUID | None, now_ms: int, fetch_timeout_ms: int
    ) -> bool:
        """A would-be voter fetched lately and reached the high watermark (or the log end)."""
        state = self.observer_states.get(node_id)
        if state is None or state.end_offset is None:
            return False
        if directory_id is not None and state.directory_id not in (None, directory_id):
            return False
        if now_ms - state.last_fetch_ms > fetch_timeout_ms:
            return False
        reached_high_watermark = (
            self.high_watermark is not None and state.end_offset >= self.high_watermark
        )
        recently_caught_up = (
            state.last_caught_up_ms >= 0 and now_ms - state.last_caught_up_ms <= fetch_timeout_ms
        )
        return reached_high_watermark or recently_caught_up

    def describe(
        self, now_ms: int
    ) -> tuple[tuple[ReplicaDescription, ...], tuple[ReplicaDescription, ...]]:
        def describe_one(state: ReplicaState) -> ReplicaDescription:
            if state.node_id == self.local_id:
                offset = -1 if state.end_offset is None else state.end_offset
                return ReplicaDescription(state.node_id, state.directory_id, offset, now_ms, now_ms)
            return state.describe()

        voters = tuple(describe_one(self.voter_states[k]) for k in sorted(self.voter_states))
        observers = tuple(
            describe_one(self.observer_states[k]) for k in sorted(self.observer_states)
        )
        return voters, observers
