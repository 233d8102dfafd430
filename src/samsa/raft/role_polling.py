"""Timers and sends, per role: what ``poll`` does.

Each role's poll looks at its deadlines (election, fetch, backoff, check quorum,
parked fetches, a pending voter change) and sends what the role needs that is
not already in flight: pre-votes and votes, BeginQuorumEpoch to voters that have
not acknowledged the leader, EndQuorumEpoch after resigning, Fetch or
FetchSnapshot to the leader.  ``next_deadline`` is the earliest of those times.
"""

from __future__ import annotations

from samsa.raft.election import EpochElection
from samsa.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    RaftRequest,
    VoteRequest,
)
from samsa.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    UnattachedState,
)
from samsa.raft.voter_changes import VoterChanges

__all__ = ["RolePolling"]

_MAX_CASCADE = 8


class RolePolling(VoterChanges):
    """Runs the due timers of the current role and sends what it needs."""

    def next_deadline(self) -> int | None:
        """When ``poll`` must be called next (ms), or ``None`` if only an event can wake us."""
        times: list[int] = []
        request_deadline = self._requests.next_deadline(self._now_ms)
        if request_deadline is not None:
            times.append(request_deadline)
        state = self._state
        if isinstance(state, ProspectiveState):
            times.append(state.election_deadline_ms)
        elif isinstance(state, UnattachedState):
            if state.election_deadline_ms is not None and self.can_stand_for_election:
                times.append(state.election_deadline_ms)
        elif isinstance(state, CandidateState):
            times.append(
                state.backoff_until_ms
                if state.backoff_until_ms is not None
                else state.election_deadline_ms
            )
        elif isinstance(state, FollowerState):
            if state.fetch_deadline_ms > self._now_ms or self.can_stand_for_election:
                times.append(state.fetch_deadline_ms)
        elif isinstance(state, ResignedState):
            times.append(state.election_deadline_ms)
        elif isinstance(state, LeaderState):
            if len(state.voter_states) > 1 or self._node_id not in state.voter_states:
                times.append(state.check_quorum_deadline_ms)
            if any(node_id != self._node_id for node_id in state.voter_states):
                times.append(state.begin_quorum_epoch_deadline_ms)
            times.extend(p.deadline_ms for p in state.parked_fetches)
            if state.pending_change is not None:
                times.append(state.pending_change.deadline_ms)
        return max(min(times), self._now_ms) if times else None

    def _drive(self, now_ms: int) -> None:
        """Expire requests, run due timers and send what the role needs; repeat while the
        role changes (a lone voter goes Unattached -> Prospective -> Candidate -> Leader)."""
        for _ in range(_MAX_CASCADE):
            before = self._state
            self._requests.expire(now_ms)
            if isinstance(before, LeaderState):
                self._poll_leader(now_ms, before)
            elif isinstance(before, CandidateState):
                self._poll_candidate(now_ms, before)
            elif isinstance(before, ProspectiveState):
                self._poll_prospective(now_ms, before)
            elif isinstance(before, FollowerState):
                self._poll_follower(now_ms, before)
            elif isinstance(before, UnattachedState):
                self._poll_unattached(now_ms, before)
            else:
                self._poll_resigned(now_ms, before)
            if self._state is before:
                return

    # -- timers and sends, per role --------------------------------------------------

    def _poll_leader(self, now_ms: int, leader: LeaderState) -> None:
        self._poll_voter_change(now_ms)
        if leader.resign_requested or leader.check_quorum_expired(now_ms):
            self._to_resigned(now_ms, leader.voters_by_descending_fetch_offset())
            return
        self._complete_parked_fetches(now_ms, everything=False)
        for voter_id in leader.voters_to_announce(
            now_ms, self._config.begin_quorum_epoch_timeout_ms
        ):
            if self._requests.is_ready(voter_id, now_ms):
                node = self.voter_set.get(voter_id)
                request = BeginQuorumEpochRequest(
                    self._node_id,
                    leader.epoch,
                    voter_id,
                    None if node is None else node.directory_id,
                    self._listeners,
                )
                self._send(voter_id, request, now_ms)

    def _vote_request(self, voter_id: int, epoch: int, pre_vote: bool) -> VoteRequest:
        node = self.voter_set.get(voter_id)
        return VoteRequest(
            self._node_id,
            epoch,
            self._log.last_fetched_epoch,
            self._log.end_offset,
            pre_vote,
            self._directory_id,
            voter_id,
            None if node is None else node.directory_id,
        )

    def _send_votes(self, now_ms: int, election: EpochElection, epoch: int, pre_vote: bool) -> None:
        if election.is_vote_rejected():
            return
        for voter_id in election.unrecorded_voters():
            if voter_id != self._node_id and self._requests.is_ready(voter_id, now_ms):
                self._send(voter_id, self._vote_request(voter_id, epoch, pre_vote), now_ms)

    def _poll_candidate(self, now_ms: int, candidate: CandidateState) -> None:
        if candidate.backoff_until_ms is not None:
            if now_ms >= candidate.backoff_until_ms:
                self._to_prospective(now_ms)
            return
        if now_ms >= candidate.election_deadline_ms:
            candidate.backoff_until_ms = now_ms + self._election_backoff_ms(candidate.retries)
            return
        self._send_votes(now_ms, candidate.election, candidate.epoch, pre_vote=False)

    def _poll_prospective(self, now_ms: int, prospective: ProspectiveState) -> None:
        if now_ms >= prospective.election_deadline_ms:
            self._prospective_lost(now_ms)
            return
        self._send_votes(now_ms, prospective.election, prospective.epoch, pre_vote=True)

    def _poll_unattached(self, now_ms: int, unattached: UnattachedState) -> None:
        if not self.can_stand_for_election:
            self._fetch_from_any_voter(now_ms)
            return
        if unattached.election_deadline_ms is None:
            unattached.election_deadline_ms = now_ms + self._random_election_timeout_ms()
        if now_ms >= unattached.election_deadline_ms or self.voter_set.is_only_voter(self._node_id):
            self._to_prospective(now_ms)

    def _poll_resigned(self, now_ms: int, resigned: ResignedState) -> None:
        if now_ms >= resigned.election_deadline_ms or self.voter_set.is_only_voter(self._node_id):
            self._to_unattached(now_ms, resigned.epoch + 1)
            return
        for voter_id in sorted(resigned.unacknowledged):
            if self._requests.is_ready(voter_id, now_ms):
                request = EndQuorumEpochRequest(
                    self._node_id, resigned.epoch, resigned.preferred_successors, self._listeners
                )
                self._send(voter_id, request, now_ms)

    def _poll_follower(self, now_ms: int, follower: FollowerState) -> None:
        if self.can_stand_for_election:
            if now_ms >= follower.fetch_deadline_ms:
                self._to_prospective(now_ms)
                return
        elif now_ms >= follower.fetch_deadline_ms or (
            not self._requests.has_in_flight(follower.leader_id)
            and not self._requests.is_ready(follower.leader_id, now_ms)
        ):
            # An observer that lost its leader asks the voters who leads now.
            self._fetch_from_any_voter(now_ms)
            return
        if self._log.flushed_end_offset < self._log.end_offset:
            return  # report only durable progress: fetch again once flushed
        if not self._requests.is_ready(follower.leader_id, now_ms):
            return
        download = follower.snapshot_download
        if download is not None:
            request: RaftRequest = FetchSnapshotRequest(
                self._node_id,
                follower.epoch,
                download.snapshot_id,
                len(download.data),
                self._config.fetch_snapshot_max_bytes,
                self._directory_id,
            )
        else:
            request = self._fetch_request(follower.epoch)
        self._send(follower.leader_id, request, now_ms)

    def _fetch_request(self, epoch: int) -> FetchRequest:
        return FetchRequest(
            self._node_id,
            self._log.end_offset,
            self._log.last_fetched_epoch,
            epoch,
            self._config.fetch_max_wait_ms,
            self._config.fetch_max_bytes,
            self._directory_id,
            high_watermark=self._high_watermark,
        )

    def _bootstrap_destinations(self) -> list[int]:
        if self._config.bootstrap_servers:
            return [
                self._config.bootstrap_server_id(i)
                for i in range(len(self._config.bootstrap_servers))
            ]
        return self._remote_voters(self.voter_set)

    def _fetch_from_any_voter(self, now_ms: int) -> None:
        """Kafka's maybeSendAnyVoterFetch: one discovery fetch at a time, to a random voter."""
        destinations = self._bootstrap_destinations()
        if any(self._requests.has_in_flight(d) for d in destinations):
            return
        ready = [d for d in destinations if self._requests.is_ready(d, now_ms)]
        if ready:
            if self._log.flushed_end_offset < self._log.end_offset:
                return
            self._send(self._random.choice(ready), self._fetch_request(self.epoch), now_ms)
