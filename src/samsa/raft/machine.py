"""``RaftMachine``: the sans-I/O KRaft state machine of one node.

The machine never reads a clock, opens a socket or touches a file.  Each call
takes ``now_ms`` (non-decreasing) and an event, and returns the actions to run
**in order** (see ``samsa.raft.actions``).  Between calls the caller waits until
``next_deadline()`` or the next event, whichever comes first, then calls ``poll``.

Lifecycle::

    machine = RaftMachine(node_id=1, config=QuorumConfig(...), log=log,
                          random_source=random.Random(), election_state=stored)
    actions = machine.start(now_ms)             # first call, exactly once
    actions = machine.poll(now_ms)              # timers
    actions = machine.receive_request(now_ms, source_id, request, reply_to)
    actions = machine.receive_response(now_ms, request_id, response)
    actions = machine.request_failed(now_ms, request_id)
    offset, actions = machine.append(now_ms, [b"payload", ...])   # leader only
    actions = machine.flushed(now_ms, offset)  # after a FlushLog action completed

One class per concern, stacked in this order: ``MachineCore`` (state, log
changes), ``Transitions`` (roles), ``RequestHandlers`` (answering RPCs),
``ResponseHandlers`` (handling answers), ``VoterChanges`` (KIP-853),
``RolePolling`` (timers and sends), and this module (the public calls).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from samsa.raft.actions import Action, FlushLog, LoadSnapshot
from samsa.raft.election import ElectionState, EpochElection
from samsa.raft.errors import ErrorCode, NotLeaderError, RaftInvariantError
from samsa.raft.messages import (
    AddRaftVoterRequest,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    QuorumInfo,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    VoteRequest,
)
from samsa.raft.records import Endpoint, OffsetAndEpoch, SnapshotId
from samsa.raft.role_polling import RolePolling
from samsa.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ParkedFetch,
    ResignedState,
    UnattachedState,
)

__all__ = ["RaftMachine"]


class RaftMachine(RolePolling):
    """One node of the metadata quorum, voter or observer (see the module doc).

    Not thread safe: the driver calls it from one task.
    """

    # -- lifecycle -------------------------------------------------------------------

    def start(self, now_ms: int) -> list[Action]:
        """Enter the role the stored election state implies (Kafka's QuorumState.initialize).

        A restarted leader comes back Resigned in its epoch; a node that voted for
        itself comes back Candidate; one that knew a leader follows it.  A node that
        is the only voter elects itself at once.  Emits ``LoadSnapshot`` for the
        newest snapshot, so the state machine starts from it.
        """
        if self._started:
            raise RuntimeError("start() was already called")
        self._started = True
        self._now_ms = now_ms
        self._actions = []
        election = self._initial_election or ElectionState(0)
        latest = self._log.latest_snapshot_id
        if latest is not None:
            if latest.offset > self._log.end_offset:
                raise RaftInvariantError(
                    f"the log ends at {self._log.end_offset}, before its latest snapshot "
                    f"{latest}: its recovery must make it start at the snapshot"
                )
            self._high_watermark = latest.offset
        static = self._config.static_voters
        if (
            static is not None
            and election.voters is not None
            and set(election.voters) != set(static.ids)
        ):
            raise RaftInvariantError(
                f"configured voters {static} differ from the stored ones {election.voters}"
            )
        log_epoch = self._log.last_fetched_epoch
        timeout = now_ms + self._random_election_timeout_ms()
        deadline = timeout if self.can_stand_for_election else None
        if election.epoch < log_epoch:
            self._set_state(UnattachedState(log_epoch, None, None, deadline), persist=True)
        elif election.leader_id == self._node_id:
            others = set(self._remote_voters(self.voter_set))
            self._set_state(
                ResignedState(election.epoch, self._node_id, timeout, (), others), persist=False
            )
            if not others and self.is_voter:
                # A lone voter has nobody to hand over to: start the next epoch now.
                self._to_unattached(now_ms, election.epoch + 1)
        elif election.voted_id == self._node_id and self.can_stand_for_election:
            voting = EpochElection(self.voter_set)
            voting.record_granted(self._node_id)
            self._set_state(
                CandidateState(election.epoch, self._node_id, voting, timeout), persist=False
            )
        elif election.leader_id is not None:
            follower = FollowerState(
                election.epoch,
                election.leader_id,
                election.voted_id,
                election.voted_directory_id,
                now_ms + self._config.fetch_timeout_ms,
            )
            self._set_state(follower, persist=False)
        else:
            unattached = UnattachedState(
                election.epoch, election.voted_id, election.voted_directory_id, deadline
            )
            self._set_state(unattached, persist=False)
        if latest is not None:
            self._emit(LoadSnapshot(latest))
        if self._log.flushed_end_offset < self._log.end_offset:
            self._emit(FlushLog(self._log.end_offset))
        self._drive(now_ms)
        return self._take_actions()

    # -- events ----------------------------------------------------------------------

    def poll(self, now_ms: int) -> list[Action]:
        """Run the timers that are due and send what the role needs to send."""
        self._begin(now_ms)
        self._drive(now_ms)
        return self._take_actions()

    def receive_request(
        self, now_ms: int, source_id: int, request: RaftRequest, reply_to: object
    ) -> list[Action]:
        """Handle a request from ``source_id``; the answer comes as ``Respond(reply_to, ...)``.

        A Fetch with nothing new may be parked (answered by a later call) for up to
        ``fetch_max_wait_ms``.  ``source_id`` is informational: the request carries
        the sender's identity where Kafka's does.
        """
        self._begin(now_ms)
        if isinstance(request, VoteRequest):
            self._respond(reply_to, self._handle_vote_request(now_ms, request))
        elif isinstance(request, BeginQuorumEpochRequest):
            self._respond(reply_to, self._handle_begin_quorum_epoch_request(now_ms, request))
        elif isinstance(request, EndQuorumEpochRequest):
            self._respond(reply_to, self._handle_end_quorum_epoch_request(now_ms, request))
        elif isinstance(request, FetchRequest):
            response = self._handle_fetch_request(now_ms, request, reply_to)
            if response is not None:
                self._respond(reply_to, response)
        elif isinstance(request, FetchSnapshotRequest):
            self._respond(reply_to, self._handle_fetch_snapshot_request(now_ms, request))
        elif isinstance(request, AddRaftVoterRequest):
            self._add_voter(
                now_ms, request.voter_id, request.voter_directory_id, request.listeners, reply_to,
                request.timeout_ms,
            )  # fmt: skip
        elif isinstance(request, RemoveRaftVoterRequest):
            self._remove_voter(now_ms, request.voter_id, request.voter_directory_id, reply_to)
        else:
            raise TypeError(f"not a Raft request: {type(request).__name__}")
        self._drive(now_ms)
        return self._take_actions()

    def receive_response(
        self, now_ms: int, request_id: int, response: RaftResponse
    ) -> list[Action]:
        """Handle the answer to ``Send(..., request_id, ...)``; stale answers are ignored."""
        self._begin(now_ms)
        request = self._requests.complete(request_id)
        if request is not None:
            self._handle_response(now_ms, request, response)
        self._drive(now_ms)
        return self._take_actions()

    def request_failed(self, now_ms: int, request_id: int) -> list[Action]:
        """The request could not be delivered or its connection broke: retry after a backoff."""
        self._begin(now_ms)
        self._requests.fail(request_id, now_ms)
        self._drive(now_ms)
        return self._take_actions()

    def append(self, now_ms: int, payloads: Sequence[bytes]) -> tuple[int, list[Action]]:
        """Append data entries as the leader; returns the offset of the last one.

        Raises ``NotLeaderError`` (with the leader hint) on any other node.  The
        entries are committed once ``HighWatermarkAdvanced`` passes the offset; a
        leader change before that may drop them.
        """
        self._begin(now_ms)
        leader = self._state
        if not isinstance(leader, LeaderState) or leader.resign_requested:
            self._actions = []
            hint = None if isinstance(leader, (LeaderState, ResignedState)) else self.leader_id
            raise NotLeaderError(hint, self.epoch)
        for payload in payloads:
            if not isinstance(payload, bytes):
                raise TypeError("append takes bytes payloads; control entries belong to Raft")
        last = self._log.end_offset - 1
        if payloads:
            last = self._append_as_leader(now_ms, list(payloads))[-1]
        self._drive(now_ms)
        return last, self._take_actions()

    def flushed(self, now_ms: int, offset: int) -> list[Action]:
        """A ``FlushLog`` finished; the log's ``flushed_end_offset`` is the truth."""
        self._begin(now_ms)
        leader = self._state
        if isinstance(leader, LeaderState):
            self._after_leader_progress(now_ms, leader.update_local(self._log.flushed_end_offset))
        self._drive(now_ms)
        return self._take_actions()

    def add_voter(
        self,
        now_ms: int,
        voter_id: int,
        directory_id: uuid.UUID | None,
        endpoints: tuple[Endpoint, ...],
        reply_to: object,
        timeout_ms: int = -1,
    ) -> list[Action]:
        """KIP-853 AddRaftVoter; the answer is ``Respond(reply_to, AddRaftVoterResponse)``."""
        self._begin(now_ms)
        self._add_voter(now_ms, voter_id, directory_id, endpoints, reply_to, timeout_ms)
        self._drive(now_ms)
        return self._take_actions()

    def remove_voter(
        self, now_ms: int, voter_id: int, directory_id: uuid.UUID | None, reply_to: object
    ) -> list[Action]:
        """KIP-853 RemoveRaftVoter; the answer is ``Respond(reply_to, RemoveRaftVoterResponse)``."""
        self._begin(now_ms)
        self._remove_voter(now_ms, voter_id, directory_id, reply_to)
        self._drive(now_ms)
        return self._take_actions()

    def resign(self, now_ms: int) -> list[Action]:
        """Graceful shutdown: a leader hands over (EndQuorumEpoch); others do nothing."""
        self._begin(now_ms)
        leader = self._state
        if isinstance(leader, LeaderState):
            leader.resign_requested = True
        self._drive(now_ms)
        return self._take_actions()

    def create_snapshot(self, end_offset: int, data: bytes) -> SnapshotId:
        """Record the owner's state of every entry below ``end_offset`` (<= high watermark).

        The snapshot also stores the voter set in force there.  The log keeps its
        entries until ``delete_before_snapshot``.
        """
        if not self._log.start_offset < end_offset <= self._high_watermark:
            raise ValueError(
                f"snapshot end {end_offset} must be in ({self._log.start_offset}, {self._high_watermark}]"
            )
        epoch = self._log.read(end_offset - 1, 1)[0].epoch
        snapshot_id = OffsetAndEpoch(end_offset, epoch)
        voters = self._voters.at_offset(end_offset - 1) if self._kraft_version == 1 else None
        self._log.create_snapshot(snapshot_id, voters, data)
        return snapshot_id

    def delete_before_snapshot(self) -> None:
        """Drop the log prefix covered by the latest snapshot (lagging replicas will fetch it)."""
        latest = self._log.latest_snapshot_id
        if latest is None:
            return
        self._log.delete_before_snapshot(latest)
        self._voters.truncate_old_entries(self._log.start_offset)

    def describe_quorum(self, now_ms: int) -> QuorumInfo:
        """Kafka's DescribeQuorum: the leader's view of every replica."""
        leader = self._state
        if not isinstance(leader, LeaderState):
            return QuorumInfo(ErrorCode.NOT_LEADER_OR_FOLLOWER, self.leader_id, self.epoch, -1)
        voters, observers = leader.describe(now_ms)
        hw = -1 if leader.high_watermark is None else leader.high_watermark
        return QuorumInfo(ErrorCode.NONE, self._node_id, leader.epoch, hw, voters, observers)

    # -- plumbing --------------------------------------------------------------------

    def _begin(self, now_ms: int) -> None:
        if not self._started:
            raise RuntimeError("call start() first")
        if now_ms < self._now_ms:
            raise ValueError(f"time went backwards: {now_ms} < {self._now_ms}")
        self._now_ms = now_ms
        self._actions = []

    def _take_actions(self) -> list[Action]:
        actions, self._actions = self._actions, []
        return actions

    # -- hooks from the core ---------------------------------------------------------

    def _after_leader_progress(self, now_ms: int, high_watermark_moved: bool) -> None:
        leader = self._state
        if not isinstance(leader, LeaderState):
            return
        if high_watermark_moved and leader.high_watermark is not None:
            self._advance_high_watermark(leader.high_watermark)
            self._poll_voter_change(now_ms)
        self._complete_parked_fetches(now_ms, everything=False)

    def _answer_parked_fetches_on_leaving(self, leader: LeaderState) -> None:
        parked: list[ParkedFetch] = leader.parked_fetches
        leader.parked_fetches = []
        for fetch in parked:
            self._respond(fetch.reply_to, self._fetch_error(ErrorCode.NOT_LEADER_OR_FOLLOWER))
        change = leader.pending_change
        if change is not None:
            leader.pending_change = None
            self._answer_change(change, ErrorCode.NOT_LEADER_OR_FOLLOWER, "leadership changed")
