"""How a node handles the answers to its own requests (the client side of each RPC).

A response is applied only if it answers the request still in flight to that
node (``RequestManager``).  Every response first goes through the common
handling of its leader hint (Kafka's maybeHandleCommonResponse): an older epoch
is ignored, a newer one (or FENCED_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER) moves
this node, and an unknown leader of our own epoch is followed.
"""

from __future__ import annotations

from samsa.raft.errors import ErrorCode, KRaftErrorCode, RaftInvariantError
from samsa.raft.messages import (
    BeginQuorumEpochResponse,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftResponse,
    VoteRequest,
    VoteResponse,
)
from samsa.raft.persistence.raft_log import truncation_offset
from samsa.raft.records import Endpoint
from samsa.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    SnapshotDownload,
)
from samsa.raft.rpc.request_handlers import RequestHandlers
from samsa.raft.rpc.requests import InFlightRequest

__all__ = ["ResponseHandlers"]

_TERMINAL_VOTE_ERRORS = (ErrorCode.INCONSISTENT_VOTER_SET, KRaftErrorCode.INVALID_VOTER_KEY)


class ResponseHandlers(RequestHandlers):
    """Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot responses."""

    def _handle_response(
        self, now_ms: int, request: InFlightRequest, response: RaftResponse
    ) -> None:
        message = request.message
        if isinstance(response, VoteResponse) and isinstance(message, VoteRequest):
            self._on_vote_response(now_ms, request, message, response)
        elif isinstance(response, BeginQuorumEpochResponse):
            self._on_begin_quorum_epoch_response(now_ms, request, response)
        elif isinstance(response, EndQuorumEpochResponse):
            self._on_end_quorum_epoch_response(now_ms, request, response)
        elif isinstance(response, FetchResponse) and isinstance(message, FetchRequest):
            self._on_fetch_response(now_ms, request, message, response)
        elif isinstance(response, FetchSnapshotResponse) and isinstance(
            message, FetchSnapshotRequest
        ):
            self._on_fetch_snapshot_response(now_ms, request, message, response)
        else:
            raise TypeError(f"{type(response).__name__} does not answer {type(message).__name__}")

    def _common_response(
        self,
        now_ms: int,
        request: InFlightRequest,
        error: int,
        leader_id: int | None,
        epoch: int,
        endpoints: tuple[Endpoint, ...],
    ) -> bool:
        """True when the response was fully handled here (the caller stops)."""
        self._learn_endpoints(leader_id, endpoints)
        if error != ErrorCode.NONE:
            # Whatever happens next, do not hammer the node with the same request.
            self._requests.back_off(request.destination_id, now_ms)
        if epoch < self.epoch or error == ErrorCode.UNKNOWN_LEADER_EPOCH:
            return True
        if epoch > self.epoch or error in (
            ErrorCode.FENCED_LEADER_EPOCH,
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ):
            self._maybe_transition(now_ms, leader_id, epoch)
            return True
        if leader_id is not None and self.leader_id is None:
            self._maybe_transition(now_ms, leader_id, epoch)
            return error != ErrorCode.NONE
        return False

    # -- Vote ------------------------------------------------------------------------

    def _on_vote_response(
        self, now_ms: int, request: InFlightRequest, message: VoteRequest, response: VoteResponse
    ) -> None:
        if self._common_response(
            now_ms, request, response.error_code, response.leader_id, response.leader_epoch,
            response.leader_endpoints,
        ):  # fmt: skip
            return
        voter = request.destination_id
        state = self._state
        if (
            response.error_code != ErrorCode.NONE
            and response.error_code not in _TERMINAL_VOTE_ERRORS
        ):
            return  # retried after the backoff
        granted = response.error_code == ErrorCode.NONE and response.vote_granted
        if (
            isinstance(state, ProspectiveState)
            and message.pre_vote
            and message.replica_epoch == state.epoch
        ):
            if granted:
                state.election.record_granted(voter)
                if state.election.is_vote_granted():
                    self._to_candidate(now_ms)
            else:
                state.election.record_rejected(voter)
                if state.election.is_vote_rejected():
                    self._prospective_lost(now_ms)
        elif (
            isinstance(state, CandidateState)
            and not message.pre_vote
            and message.replica_epoch == state.epoch
        ):
            if granted:
                state.election.record_granted(voter)
                if state.election.is_vote_granted():
                    self._to_leader(now_ms)
            else:
                state.election.record_rejected(voter)
                if state.election.is_vote_rejected() and state.backoff_until_ms is None:
                    state.backoff_until_ms = now_ms + self._election_backoff_ms(state.retries)

    # -- BeginQuorumEpoch / EndQuorumEpoch -------------------------------------------

    def _on_begin_quorum_epoch_response(
        self, now_ms: int, request: InFlightRequest, response: BeginQuorumEpochResponse
    ) -> None:
        if self._common_response(
            now_ms, request, response.error_code, response.leader_id, response.leader_epoch,
            response.leader_endpoints,
        ):  # fmt: skip
            return
        state = self._state
        if response.error_code == ErrorCode.NONE and isinstance(state, LeaderState):
            state.acknowledge(request.destination_id)

    def _on_end_quorum_epoch_response(
        self, now_ms: int, request: InFlightRequest, response: EndQuorumEpochResponse
    ) -> None:
        if self._common_response(
            now_ms, request, response.error_code, response.leader_id, response.leader_epoch,
            response.leader_endpoints,
        ):  # fmt: skip
            return
        state = self._state
        if response.error_code == ErrorCode.NONE and isinstance(state, ResignedState):
            state.unacknowledged.discard(request.destination_id)

    # -- Fetch (follower side) -------------------------------------------------------

    def _on_fetch_response(
        self, now_ms: int, request: InFlightRequest, message: FetchRequest, response: FetchResponse
    ) -> None:
        state = self._state
        if (
            isinstance(state, FollowerState)
            and not self.can_stand_for_election
            and request.destination_id != state.leader_id
            and (response.leader_id, response.leader_epoch) == (state.leader_id, state.epoch)
        ):
            # An observer asked around and a voter vouches for the leader it already
            # follows: try the leader again (it may not be a bootstrap server).
            state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
        if self._common_response(
            now_ms, request, response.error_code, response.leader_id, response.leader_epoch,
            response.leader_endpoints,
        ):  # fmt: skip
            return
        state = self._state
        if (
            response.error_code != ErrorCode.NONE
            or not isinstance(state, FollowerState)
            or response.leader_epoch != state.epoch
        ):
            return
        state.last_fetch_ok_ms = now_ms
        state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
        if (
            message.fetch_offset != self._log.end_offset
            or message.last_fetched_epoch != self._log.last_fetched_epoch
        ):
            return  # our log moved since this fetch was sent: it no longer applies
        download = state.snapshot_download
        if response.snapshot_id is not None:
            if response.snapshot_id.offset < self._high_watermark:
                raise RaftInvariantError(
                    f"{self._prefix}leader offers snapshot {response.snapshot_id} "
                    "below our high watermark"
                )
            if download is None or download.snapshot_id != response.snapshot_id:
                state.snapshot_download = SnapshotDownload(response.snapshot_id)
        elif download is not None:
            return  # a fetch sent before the download started
        elif response.diverging_epoch is not None:
            self._truncate(truncation_offset(self._log, response.diverging_epoch))
        else:
            entries = response.entries
            if entries:
                if entries[0].offset != self._log.end_offset or entries[-1].epoch > state.epoch:
                    raise RaftInvariantError(f"{self._prefix}fetched entries do not fit the log")
                self._append_as_follower(entries)
            if response.high_watermark >= 0:
                self._advance_high_watermark(min(response.high_watermark, self._log.end_offset))

    def _on_fetch_snapshot_response(
        self,
        now_ms: int,
        request: InFlightRequest,
        message: FetchSnapshotRequest,
        response: FetchSnapshotResponse,
    ) -> None:
        if self._common_response(
            now_ms, request, response.error_code, response.leader_id, response.leader_epoch,
            response.leader_endpoints,
        ):  # fmt: skip
            return
        state = self._state
        if not isinstance(state, FollowerState) or state.snapshot_download is None:
            return
        download = state.snapshot_download
        if message.snapshot_id != download.snapshot_id or response.leader_epoch != state.epoch:
            return
        if response.error_code in (ErrorCode.SNAPSHOT_NOT_FOUND, ErrorCode.POSITION_OUT_OF_RANGE):
            # The leader replaced that snapshot: start over with a Fetch.
            state.snapshot_download = None
            return
        if response.error_code != ErrorCode.NONE:
            return
        if response.snapshot_id != download.snapshot_id or response.position != len(download.data):
            return
        download.data += response.chunk
        if len(download.data) > response.size or (
            not response.chunk and len(download.data) < response.size
        ):
            state.snapshot_download = None  # inconsistent chunks: start over
            return
        if len(download.data) == response.size:
            state.snapshot_download = None
            self._install_snapshot(download.snapshot_id, bytes(download.data))
        state.last_fetch_ok_ms = now_ms
        state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
