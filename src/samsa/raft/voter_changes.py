"""Adding and removing voters, one at a time (KIP-853), on the leader.

A change is accepted only when (Kafka's AddVoterHandler / RemoveVoterHandler):

* this node leads and has committed an entry of its own epoch (so no change of
  an earlier leader can still be pending unseen);
* the quorum is dynamic (kraft.version 1: not ``controller.quorum.voters``);
* no other change is pending and the latest ``Voters`` entry is committed, so at
  most one uncommitted change exists and two disjoint majorities never do;
* adding: the node is not a voter yet and has caught up as an observer;
  removing: the node is a voter and is not the last one.

The new set is appended as a ``Voters`` entry and counts at once (for the high
watermark, for elections) on every node whose log holds it; the request is
answered when that entry commits.  A leader that removed itself resigns once its
removal is committed.
"""

from __future__ import annotations

import uuid

from samsa.raft.errors import ErrorCode, KRaftErrorCode
from samsa.raft.messages import AddRaftVoterResponse, RemoveRaftVoterResponse
from samsa.raft.records import Endpoint, Voters
from samsa.raft.roles import LeaderState, PendingVoterChange
from samsa.raft.rpc.response_handlers import ResponseHandlers
from samsa.raft.voters import VoterNode

__all__ = ["VoterChanges"]

ADD = "add"
REMOVE = "remove"


class VoterChanges(ResponseHandlers):
    """AddRaftVoter / RemoveRaftVoter handling and completion."""

    def _voter_change_refusal(self, now_ms: int) -> tuple[int, str] | None:
        leader = self._state
        if not isinstance(leader, LeaderState) or leader.resign_requested:
            return (
                ErrorCode.NOT_LEADER_OR_FOLLOWER,
                f"leader is {self.leader_id} in epoch {self.epoch}",
            )
        if leader.pending_change is not None:
            return ErrorCode.REQUEST_TIMED_OUT, "another voter change is in progress"
        if leader.high_watermark is None:
            return (
                ErrorCode.REQUEST_TIMED_OUT,
                "the leader has not committed an entry of its epoch yet",
            )
        if self._kraft_version == 0:
            return (
                ErrorCode.UNSUPPORTED_VERSION,
                "static voters (controller.quorum.voters) cannot change",
            )
        latest_offset = self._voters.latest_offset()
        if latest_offset is not None and latest_offset >= leader.high_watermark:
            return (
                ErrorCode.REQUEST_TIMED_OUT,
                f"the voter change at offset {latest_offset} is not committed yet",
            )
        return None

    def _add_voter(
        self,
        now_ms: int,
        voter_id: int,
        directory_id: uuid.UUID | None,
        endpoints: tuple[Endpoint, ...],
        reply_to: object,
        timeout_ms: int,
    ) -> None:
        refusal = self._voter_change_refusal(now_ms)
        voters = self.voter_set
        if refusal is None and voters.get(voter_id) is not None:
            refusal = (
                KRaftErrorCode.DUPLICATE_VOTER,
                f"node {voter_id} is already a voter of {voters}",
            )
        leader = self._state
        caught_up = isinstance(leader, LeaderState) and leader.is_caught_up(
            voter_id, directory_id, now_ms, self._config.fetch_timeout_ms
        )
        if refusal is None and not caught_up:
            refusal = (
                ErrorCode.REQUEST_TIMED_OUT,
                f"node {voter_id} has not caught up with the leader's log as an observer",
            )
        if refusal is not None:
            self._respond(reply_to, AddRaftVoterResponse(refusal[0], refusal[1]))
            return
        assert isinstance(leader, LeaderState)
        new_voters = voters.with_voter(VoterNode(voter_id, directory_id, endpoints))
        offsets = self._append_as_leader(now_ms, [Voters(new_voters)])
        leader.pending_change = PendingVoterChange(
            ADD, voter_id, reply_to, offsets[-1], now_ms + self._change_timeout_ms(timeout_ms)
        )

    def _remove_voter(
        self, now_ms: int, voter_id: int, directory_id: uuid.UUID | None, reply_to: object
    ) -> None:
        refusal = self._voter_change_refusal(now_ms)
        voters = self.voter_set
        node = voters.get(voter_id)
        if refusal is None and (
            node is None or not node.matches(voter_id, directory_id or node.directory_id)
        ):
            refusal = KRaftErrorCode.VOTER_NOT_FOUND, f"node {voter_id} is not a voter of {voters}"
        if refusal is None and len(voters) == 1:
            refusal = ErrorCode.INVALID_REQUEST, "cannot remove the last voter"
        if refusal is not None:
            self._respond(reply_to, RemoveRaftVoterResponse(refusal[0], refusal[1]))
            return
        leader = self._state
        assert isinstance(leader, LeaderState)
        offsets = self._append_as_leader(now_ms, [Voters(voters.without_voter(voter_id))])
        leader.pending_change = PendingVoterChange(
            REMOVE, voter_id, reply_to, offsets[-1], now_ms + self._config.request_timeout_ms
        )

    def _change_timeout_ms(self, timeout_ms: int) -> int:
        return timeout_ms if timeout_ms > 0 else self._config.request_timeout_ms

    def _answer_change(self, change: PendingVoterChange, error: int, message: str | None) -> None:
        if change.kind == ADD:
            self._respond(change.reply_to, AddRaftVoterResponse(error, message))
        else:
            self._respond(change.reply_to, RemoveRaftVoterResponse(error, message))

    def _poll_voter_change(self, now_ms: int) -> None:
        """Answer a committed or timed-out change; resign once our own removal is committed."""
        leader = self._state
        if not isinstance(leader, LeaderState):
            return
        change = leader.pending_change
        hw = leader.high_watermark
        if change is not None:
            if hw is not None and hw > change.offset:
                leader.pending_change = None
                self._answer_change(change, ErrorCode.NONE, None)
            elif now_ms >= change.deadline_ms:
                leader.pending_change = None
                self._answer_change(
                    change, ErrorCode.REQUEST_TIMED_OUT, "the voter change did not commit in time"
                )
        latest_offset = self._voters.latest_offset()
        committed = latest_offset is None or (hw is not None and hw > latest_offset)
        if committed and not self.is_voter:
            leader.resign_requested = True
