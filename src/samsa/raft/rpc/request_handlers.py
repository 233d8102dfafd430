"""How a node answers Raft requests (the server side of each RPC).

Validation order follows Kafka: malformed -> INVALID_REQUEST; an epoch older than
ours -> FENCED_LEADER_EPOCH; then the request's leader hint moves us (a newer
epoch, a leader we did not know); then the request itself.  Requests meant only
for the leader (Fetch, FetchSnapshot) answer FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER with our leader hint otherwise.
"""

from __future__ import annotations

from samsa.raft.errors import ErrorCode, KRaftErrorCode
from samsa.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    VoteRequest,
    VoteResponse,
)
from samsa.raft.persistence.raft_log import ValidationKind, validate_offset_and_epoch
from samsa.raft.records import Entry, OffsetAndEpoch
from samsa.raft.roles import (
    FollowerState,
    LeaderState,
    ParkedFetch,
    ProspectiveState,
    UnattachedState,
)
from samsa.raft.transitions import Transitions

__all__ = ["RequestHandlers"]


class RequestHandlers(Transitions):
    """Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot, as the receiver."""

    # -- Vote ------------------------------------------------------------------------

    def _vote_response(self, error: int, granted: bool) -> VoteResponse:
        leader_id, epoch, endpoints = self._hint()
        return VoteResponse(error, leader_id, epoch, granted, endpoints)

    def _handle_vote_request(self, now_ms: int, request: VoteRequest) -> VoteResponse:
        """Grant (pre-)votes by Raft's rules; a granted standard vote is persisted first."""
        illegal_epoch = (
            request.last_offset_epoch > request.replica_epoch
            if request.pre_vote
            else request.last_offset_epoch >= request.replica_epoch
        )
        if (
            request.last_offset < 0
            or request.last_offset_epoch < 0
            or illegal_epoch
            or request.replica_id < 0
        ):
            return self._vote_response(ErrorCode.INVALID_REQUEST, False)
        if request.replica_epoch < self.epoch:
            return self._vote_response(ErrorCode.FENCED_LEADER_EPOCH, False)
        if request.voter_id >= 0 and (
            request.voter_id != self._node_id
            or (
                request.voter_directory_id is not None
                and self._directory_id is not None
                and request.voter_directory_id != self._directory_id
            )
        ):
            return self._vote_response(KRaftErrorCode.INVALID_VOTER_KEY, False)
        if self._kraft_version == 0 and not (
            self.voter_set.is_voter(request.replica_id) and self.is_voter
        ):
            # A static quorum cannot change: a vote between non-voters is a
            # configuration error.  A dynamic quorum votes regardless of its own,
            # possibly stale, voter set (Raft dissertation 4.1): the candidate's
            # log decides who the voters are, and one vote per epoch keeps it safe.
            return self._vote_response(ErrorCode.INCONSISTENT_VOTER_SET, False)
        if request.replica_epoch > self.epoch:
            self._to_unattached(now_ms, request.replica_epoch)
        candidate_end = OffsetAndEpoch(request.last_offset, request.last_offset_epoch)
        log_end = OffsetAndEpoch(self._log.end_offset, self._log.last_fetched_epoch)
        up_to_date = candidate_end.is_at_least(log_end)
        state = self._state
        if isinstance(state, FollowerState):
            live = state.has_live_leader(now_ms, self._config.fetch_timeout_ms)
            granted = state.can_grant_vote(
                request.replica_id, request.replica_directory_id, up_to_date, request.pre_vote, live
            )
        else:
            granted = state.can_grant_vote(
                request.replica_id, request.replica_directory_id, up_to_date, request.pre_vote
            )
        if granted and not request.pre_vote and state.voted_id is None:
            if isinstance(state, UnattachedState):
                self._to_unattached_voted(now_ms, request.replica_id, request.replica_directory_id)
            elif isinstance(state, ProspectiveState):
                self._prospective_add_voted(
                    now_ms, request.replica_id, request.replica_directory_id
                )
        return self._vote_response(ErrorCode.NONE, granted)

    # -- BeginQuorumEpoch / EndQuorumEpoch -------------------------------------------

    def _begin_response(self, error: int) -> BeginQuorumEpochResponse:
        leader_id, epoch, endpoints = self._hint()
        return BeginQuorumEpochResponse(error, leader_id, epoch, endpoints)

    def _handle_begin_quorum_epoch_request(
        self, now_ms: int, request: BeginQuorumEpochRequest
    ) -> BeginQuorumEpochResponse:
        if request.leader_id < 0:
            return self._begin_response(ErrorCode.INVALID_REQUEST)
        if request.leader_epoch < self.epoch:
            return self._begin_response(ErrorCode.FENCED_LEADER_EPOCH)
        if self._kraft_version == 0 and not self.voter_set.is_voter(request.leader_id):
            return self._begin_response(ErrorCode.INCONSISTENT_VOTER_SET)
        self._learn_endpoints(request.leader_id, request.leader_endpoints)
        self._maybe_transition(now_ms, request.leader_id, request.leader_epoch)
        if request.voter_id >= 0 and request.voter_id != self._node_id:
            return self._begin_response(KRaftErrorCode.INVALID_VOTER_KEY)
        return self._begin_response(ErrorCode.NONE)

    def _end_response(self, error: int) -> EndQuorumEpochResponse:
        leader_id, epoch, endpoints = self._hint()
        return EndQuorumEpochResponse(error, leader_id, epoch, endpoints)

    def _handle_end_quorum_epoch_request(
        self, now_ms: int, request: EndQuorumEpochRequest
    ) -> EndQuorumEpochResponse:
        if request.leader_id < 0:
            return self._end_response(ErrorCode.INVALID_REQUEST)
        if request.leader_epoch < self.epoch:
            return self._end_response(ErrorCode.FENCED_LEADER_EPOCH)
        self._learn_endpoints(request.leader_id, request.leader_endpoints)
        self._maybe_transition(now_ms, request.leader_id, request.leader_epoch)
        state = self._state
        if isinstance(state, FollowerState) and state.leader_id == request.leader_id:
            backoff = self._end_epoch_election_backoff_ms(request.preferred_successors)
            state.fetch_deadline_ms = min(state.fetch_deadline_ms, now_ms + backoff)
            state.last_fetch_ok_ms = None  # the leader is going: it is no longer live
        return self._end_response(ErrorCode.NONE)

    def _end_epoch_election_backoff_ms(self, successors: tuple[int, ...]) -> int:
        """First preferred successor: at once; the others wait longer the further down they are."""
        maximum = self._config.election_backoff_max_ms
        if self._node_id not in successors:
            return maximum
        position = successors.index(self._node_id)
        if position == 0:
            return 0
        base = maximum >> (len(successors) - 1)
        return min(maximum, base << (position - 1))

    # -- Fetch (leader side) ---------------------------------------------------------

    def _leader_only_error(self, request_epoch: int) -> int | None:
        if request_epoch < self.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if request_epoch > self.epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        if not isinstance(self._state, LeaderState):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return None

    def _handle_fetch_request(
        self, now_ms: int, request: FetchRequest, reply_to: object
    ) -> FetchResponse | None:
        """Answer now, or park the fetch until there is something new (``None``)."""
        if (
            request.max_wait_ms < 0
            or request.fetch_offset < 0
            or request.last_fetched_epoch < 0
            or request.last_fetched_epoch > request.current_leader_epoch
        ):
            return self._fetch_error(ErrorCode.INVALID_REQUEST)
        error = self._leader_only_error(request.current_leader_epoch)
        if error is not None:
            return self._fetch_error(ErrorCode(error))
        leader = self._state
        assert isinstance(leader, LeaderState)
        self._answer_older_parked_fetches(now_ms, leader, request.replica_id)
        response = self._try_complete_fetch(now_ms, request)
        if (
            response.entries
            or request.max_wait_ms == 0
            or response.diverging_epoch is not None
            or response.snapshot_id is not None
            or response.high_watermark > request.high_watermark
        ):
            return response
        wait_ms = min(request.max_wait_ms, self._config.fetch_max_wait_ms)
        leader.parked_fetches.append(ParkedFetch(reply_to, request, now_ms + wait_ms))
        return None

    def _try_complete_fetch(self, now_ms: int, request: FetchRequest) -> FetchResponse:
        leader = self._state
        assert isinstance(leader, LeaderState)
        if request.replica_id >= 0:
            leader.record_voter_fetch(request.replica_id, now_ms)
        verdict = validate_offset_and_epoch(
            self._log, request.fetch_offset, request.last_fetched_epoch
        )
        leader_id, epoch, endpoints = self._hint()
        start = self._log.start_offset
        if verdict.kind is ValidationKind.DIVERGING:
            hw = -1 if leader.high_watermark is None else leader.high_watermark
            return FetchResponse(
                ErrorCode.NONE, leader_id, epoch, hw, start,
                diverging_epoch=verdict.offset_and_epoch, leader_endpoints=endpoints,
            )  # fmt: skip
        if verdict.kind is ValidationKind.SNAPSHOT:
            hw = -1 if leader.high_watermark is None else leader.high_watermark
            return FetchResponse(
                ErrorCode.NONE, leader_id, epoch, hw, start,
                snapshot_id=verdict.offset_and_epoch, leader_endpoints=endpoints,
            )  # fmt: skip
        if request.replica_id >= 0 and request.replica_id != self._node_id:
            moved = leader.update_replica(
                request.replica_id,
                request.replica_directory_id,
                now_ms,
                request.fetch_offset,
                self._log.end_offset,
            )
            self._after_leader_progress(now_ms, moved)
        entries: tuple[Entry, ...] = ()
        raw = None
        if request.fetch_offset < self._log.end_offset:
            max_bytes = min(request.max_bytes, self._config.fetch_max_bytes)
            read = self._log.read(request.fetch_offset, self._config.fetch_max_entries, max_bytes)
            entries = tuple(read)
            raw = getattr(read, "raw", None)
        hw = -1 if leader.high_watermark is None else leader.high_watermark
        return FetchResponse(
            ErrorCode.NONE, leader_id, epoch, hw, start, entries,
            leader_endpoints=endpoints, raw_records=raw,
        )  # fmt: skip

    def _answer_older_parked_fetches(
        self, now_ms: int, leader: LeaderState, replica_id: int
    ) -> None:
        """A replica has one fetch in flight; an older parked one from it is stale: answer it."""
        stale = [p for p in leader.parked_fetches if p.request.replica_id == replica_id]
        if stale:
            leader.parked_fetches = [
                p for p in leader.parked_fetches if p.request.replica_id != replica_id
            ]
            for parked in stale:
                leader_id, epoch, endpoints = self._hint()
                hw = -1 if leader.high_watermark is None else leader.high_watermark
                response = FetchResponse(
                    ErrorCode.NONE,
                    leader_id,
                    epoch,
                    hw,
                    self._log.start_offset,
                    leader_endpoints=endpoints,
                )
                self._respond(parked.reply_to, response)

    def _complete_parked_fetches(self, now_ms: int, *, everything: bool) -> None:
        """Answer parked fetches that now have entries (or all of them, e.g. a new high watermark)."""
        leader = self._state
        if not isinstance(leader, LeaderState) or not leader.parked_fetches:
            return
        end = self._log.end_offset
        hw = -1 if leader.high_watermark is None else leader.high_watermark
        ready = [
            p
            for p in leader.parked_fetches
            if p.deadline_ms <= now_ms
            or p.request.fetch_offset < end
            or p.request.high_watermark < hw
            or everything
        ]
        if not ready:
            return
        answered = {id(p) for p in ready}
        leader.parked_fetches = [p for p in leader.parked_fetches if id(p) not in answered]
        for parked in ready:
            self._respond(parked.reply_to, self._try_complete_fetch(now_ms, parked.request))

    # -- FetchSnapshot (leader side) -------------------------------------------------

    def _handle_fetch_snapshot_request(
        self, now_ms: int, request: FetchSnapshotRequest
    ) -> FetchSnapshotResponse:
        leader_id, epoch, endpoints = self._hint()
        error = self._leader_only_error(request.current_leader_epoch)
        if error is None and request.position < 0:
            error = ErrorCode.POSITION_OUT_OF_RANGE
        if error is not None:
            return FetchSnapshotResponse(error, leader_id, epoch, leader_endpoints=endpoints)
        max_bytes = min(request.max_bytes, self._config.fetch_snapshot_max_bytes)
        chunk = self._log.read_snapshot(request.snapshot_id, request.position, max_bytes)
        if chunk is None:
            return FetchSnapshotResponse(
                ErrorCode.SNAPSHOT_NOT_FOUND, leader_id, epoch, leader_endpoints=endpoints
            )
        if request.position >= chunk.size:
            return FetchSnapshotResponse(
                ErrorCode.POSITION_OUT_OF_RANGE, leader_id, epoch, leader_endpoints=endpoints
            )
        leader = self._state
        assert isinstance(leader, LeaderState)
        if request.replica_id >= 0:
            leader.record_voter_fetch(request.replica_id, now_ms)
        return FetchSnapshotResponse(
            ErrorCode.NONE,
            leader_id,
            epoch,
            request.snapshot_id,
            chunk.size,
            request.position,
            chunk.data,
            endpoints,
        )
