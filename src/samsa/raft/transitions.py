"""The transitions between roles (Kafka's QuorumState).

Transitions and what they persist:

==============  ===========================================  =========
to              from / why                                    persisted
==============  ===========================================  =========
Unattached      a higher epoch seen; Prospective lost with    yes
                no leader (same epoch); Resigned timed out
                (epoch + 1); a standard vote granted
Prospective     election timeout (Unattached), fetch timeout  no
                (Follower), backoff over (Candidate)
Candidate       majority of pre-votes (epoch + 1, votes self)  yes
Leader          majority of votes                             yes
Follower        a leader learnt for an epoch >= ours           yes
Resigned        graceful resign, check quorum, removed self   no
==============  ===========================================  =========

Every transition drops the requests in flight (their answers are ignored), so a
response is only ever applied to the role that sent the request.  An epoch never
decreases; a node never votes twice in an epoch (the vote is persisted before the
response is sent); a node never follows itself.
"""

from __future__ import annotations

import logging
import uuid

from samsa.raft.actions import PersistElectionState, Respond
from samsa.raft.core import MachineCore
from samsa.raft.election import EpochElection
from samsa.raft.errors import ErrorCode, RaftInvariantError
from samsa.raft.messages import FetchResponse, RaftResponse
from samsa.raft.records import Endpoint, LeaderChange, Payload, Voters
from samsa.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    Role,
    UnattachedState,
)

__all__ = ["Transitions"]

logger = logging.getLogger(__name__)


class Transitions(MachineCore):
    """Moves between roles; each move persists what Kafka persists (see the module doc)."""

    # -- transitions -----------------------------------------------------------------

    def _set_state(self, state: Role, *, persist: bool) -> None:
        old = self._state
        self._state = state
        self._requests.reset_all()
        if persist:
            self._emit(PersistElectionState(self.election_state()))
        # An election starting is worth an operator's attention; the rest is detail.
        starts_election = isinstance(state, (ProspectiveState, CandidateState)) and not isinstance(
            old, (ProspectiveState, CandidateState)
        )
        logger.log(
            logging.INFO if starts_election else logging.DEBUG,
            "%s%s -> %s in epoch %d",
            self._prefix,
            old.name,
            state.name,
            state.epoch,
        )
        if isinstance(old, LeaderState) and old is not state:
            self._answer_parked_fetches_on_leaving(old)
        self._announce_leader()

    def _to_unattached(self, now_ms: int, epoch: int) -> None:
        """A higher epoch without a known leader, or a lost pre-vote in the same epoch."""
        old = self._state
        same_epoch = epoch == old.epoch
        if epoch < old.epoch or (same_epoch and not isinstance(old, ProspectiveState)):
            raise RaftInvariantError(
                f"{self._prefix}cannot go Unattached in {epoch} from {old.name} {old.epoch}"
            )
        deadline: int | None = None
        if self.can_stand_for_election:
            deadline = now_ms + self._random_election_timeout_ms()
            if isinstance(old, (CandidateState, UnattachedState, ResignedState)):
                deadline = (
                    old.election_deadline_ms if old.election_deadline_ms is not None else deadline
                )
            elif isinstance(old, ProspectiveState) and not old.election.is_vote_rejected():
                deadline = old.election_deadline_ms
            deadline = max(deadline, now_ms)
        voted_id = old.voted_id if same_epoch else None
        voted_directory = (
            old.voted_directory_id if same_epoch and isinstance(old, ProspectiveState) else None
        )
        self._set_state(UnattachedState(epoch, voted_id, voted_directory, deadline), persist=True)

    def _to_unattached_voted(
        self, now_ms: int, candidate_id: int, directory_id: uuid.UUID | None
    ) -> None:
        old = self._state
        assert isinstance(old, UnattachedState) and old.voted_id is None
        deadline = now_ms + self._random_election_timeout_ms()
        self._set_state(
            UnattachedState(old.epoch, candidate_id, directory_id, deadline), persist=True
        )

    def _prospective_add_voted(
        self, now_ms: int, candidate_id: int, directory_id: uuid.UUID | None
    ) -> None:
        old = self._state
        assert isinstance(old, ProspectiveState) and old.voted_id is None
        old.voted_id = candidate_id
        old.voted_directory_id = directory_id
        old.election_deadline_ms = now_ms + self._random_election_timeout_ms()
        self._emit(PersistElectionState(self.election_state()))

    def _to_follower(self, now_ms: int, epoch: int, leader_id: int) -> None:
        old = self._state
        if leader_id == self._node_id:
            raise RaftInvariantError(f"{self._prefix}told to follow itself in epoch {epoch}")
        if epoch < old.epoch or (
            epoch == old.epoch and isinstance(old, (FollowerState, LeaderState, ResignedState))
        ):
            raise RaftInvariantError(
                f"{self._prefix}cannot follow {leader_id} in {epoch} from {old.name} {old.epoch}"
            )
        voted_id = old.voted_id if epoch == old.epoch else None
        voted_directory = None
        if epoch == old.epoch and isinstance(old, (UnattachedState, ProspectiveState)):
            voted_directory = old.voted_directory_id
        state = FollowerState(
            epoch, leader_id, voted_id, voted_directory, now_ms + self._config.fetch_timeout_ms
        )
        self._set_state(state, persist=True)

    def _to_prospective(self, now_ms: int) -> None:
        old = self._state
        if not self.can_stand_for_election or isinstance(old, (LeaderState, ProspectiveState)):
            raise RaftInvariantError(f"{self._prefix}cannot become Prospective from {old.name}")
        retries = old.retries + 1 if isinstance(old, CandidateState) else 1
        election = EpochElection(self.voter_set)
        election.record_granted(self._node_id)
        if isinstance(old, (UnattachedState, FollowerState)):
            voted_directory = old.voted_directory_id
        else:  # a Candidate or a resigned leader voted for itself in this epoch
            voted_directory = self._directory_id
        leader_id = old.leader_id if isinstance(old, FollowerState) else None
        voted_id = old.voted_id
        state = ProspectiveState(
            old.epoch,
            leader_id,
            voted_id,
            voted_directory,
            election,
            now_ms + self._random_election_timeout_ms(),
            retries,
        )
        self._set_state(state, persist=False)
        if election.is_vote_granted():
            self._to_candidate(now_ms)

    def _prospective_lost(self, now_ms: int) -> None:
        """Kafka: back to following the last known leader, or Unattached in the same epoch."""
        state = self._state
        assert isinstance(state, ProspectiveState)
        if state.leader_id is not None:
            self._to_follower(now_ms, state.epoch, state.leader_id)
        else:
            self._to_unattached(now_ms, state.epoch)

    def _to_candidate(self, now_ms: int) -> None:
        old = self._state
        if not isinstance(old, ProspectiveState) or not self.can_stand_for_election:
            raise RaftInvariantError(f"{self._prefix}cannot become Candidate from {old.name}")
        election = EpochElection(self.voter_set)
        election.record_granted(self._node_id)
        state = CandidateState(
            old.epoch + 1,
            self._node_id,
            election,
            now_ms + self._random_election_timeout_ms(),
            old.retries,
        )
        self._set_state(state, persist=True)
        if election.is_vote_granted():
            self._to_leader(now_ms)

    def _to_leader(self, now_ms: int) -> None:
        candidate = self._state
        if not isinstance(candidate, CandidateState) or not candidate.election.is_vote_granted():
            raise RaftInvariantError(f"{self._prefix}cannot become Leader from {candidate.name}")
        voters = self.voter_set
        leader = LeaderState(
            local_id=self._node_id,
            local_directory_id=self._directory_id,
            epoch=candidate.epoch,
            epoch_start_offset=self._log.end_offset,
            voters=voters,
            granting_voters=tuple(sorted(candidate.election.granted)),
            now_ms=now_ms,
            check_quorum_timeout_ms=self._config.check_quorum_timeout_ms,
        )
        self._set_state(leader, persist=True)
        payloads: list[Payload] = [LeaderChange(self._node_id, voters.ids, leader.granting_voters)]
        if (
            self._kraft_version == 1
            and self._voters.latest_offset() is None
            and self._log.latest_snapshot_id is None
        ):
            # The voter set came from the bootstrap config: write it into the log so
            # that every replica (and every later leader) learns it (as Kafka does).
            payloads.append(Voters(voters))
        leader.update_local(self._log.flushed_end_offset)
        self._append_as_leader(now_ms, payloads)

    def _to_resigned(self, now_ms: int, preferred_successors: tuple[int, ...]) -> None:
        old = self._state
        if not isinstance(old, LeaderState):
            raise RaftInvariantError(f"{self._prefix}cannot resign from {old.name}")
        state = ResignedState(
            old.epoch,
            self._node_id,
            now_ms + self._random_election_timeout_ms(),
            preferred_successors,
            set(self._remote_voters(self.voter_set)),
        )
        self._set_state(state, persist=False)

    def _maybe_transition(self, now_ms: int, leader_id: int | None, epoch: int) -> None:
        """Follow a leader hint from a request or response (Kafka's maybeTransition)."""
        current = self._state
        if leader_id == self._node_id:
            if epoch == current.epoch and isinstance(current, (LeaderState, ResignedState)):
                return
            raise RaftInvariantError(
                f"{self._prefix}a peer says this node leads epoch {epoch}; it is {current.name} in {current.epoch}"
            )
        if epoch > current.epoch:
            if leader_id is None:
                self._to_unattached(now_ms, epoch)
            else:
                self._to_follower(now_ms, epoch, leader_id)
        elif epoch == current.epoch and leader_id is not None:
            known = current.leader_id
            if known is None:
                self._to_follower(now_ms, epoch, leader_id)
            elif known != leader_id:
                raise RaftInvariantError(
                    f"{self._prefix}two leaders in epoch {epoch}: {known} and {leader_id}"
                )

    # -- common replies --------------------------------------------------------------

    def _hint(self) -> tuple[int | None, int, tuple[Endpoint, ...]]:
        return self.leader_id, self.epoch, self._leader_endpoints()

    def _fetch_error(self, error: ErrorCode) -> FetchResponse:
        leader_id, epoch, endpoints = self._hint()
        return FetchResponse(
            error, leader_id, epoch, -1, self._log.start_offset, leader_endpoints=endpoints
        )

    def _respond(self, reply_to: object, message: RaftResponse) -> None:
        self._emit(Respond(reply_to, message))
