"""The machine's state and the building blocks every part of it uses.

``MachineCore`` holds what one node knows: its role (one object from
``samsa.raft.roles``), the voter set history, the requests in flight, the
high watermark it has reported, and the actions gathered during the current
call.  Log changes go through it so the voter history always matches the log:
a ``Voters`` entry counts as soon as it is appended and stops counting when it
is truncated.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Sequence

from samsa.raft.actions import (
    Action,
    FlushLog,
    HighWatermarkAdvanced,
    LeaderChanged,
    LoadSnapshot,
    Send,
)
from samsa.raft.config import QuorumConfig
from samsa.raft.election import ElectionState
from samsa.raft.errors import RaftInvariantError
from samsa.raft.messages import RaftRequest
from samsa.raft.persistence.raft_log import RaftLog
from samsa.raft.records import Endpoint, Entry, Payload, SnapshotId, Voters
from samsa.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    Role,
    UnattachedState,
)
from samsa.raft.rpc.requests import RequestManager
from samsa.raft.voters import VoterSet, VoterSetHistory

__all__ = ["MachineCore"]

logger = logging.getLogger(__name__)


class MachineCore:
    """State shared by every part of ``RaftMachine``; see ``samsa.raft.machine``."""

    def __init__(
        self,
        *,
        node_id: int,
        config: QuorumConfig,
        log: RaftLog,
        random_source: random.Random,
        election_state: ElectionState | None = None,
        directory_id: uuid.UUID | None = None,
        listeners: tuple[Endpoint, ...] = (),
        bootstrap_voters: VoterSet | None = None,
    ) -> None:
        if config.static_voters is not None and bootstrap_voters is not None:
            raise ValueError("give static voters (kraft.version 0) or bootstrap voters, not both")
        self._node_id = node_id
        self._config = config
        self._log = log
        self._random = random_source
        self._directory_id = directory_id
        self._listeners = listeners
        self._initial_election = election_state
        self._bootstrap_voters = bootstrap_voters
        self._kraft_version = 0 if config.static_voters is not None else 1
        self._requests = RequestManager(config.request_timeout_ms, config.retry_backoff_ms)
        self._voters = VoterSetHistory(self._default_voter_base())
        self._known_endpoints: dict[int, tuple[Endpoint, ...]] = {}
        self._actions: list[Action] = []
        self._state: Role = UnattachedState(0)
        self._high_watermark = 0
        self._now_ms = 0
        self._started = False
        self._announced: tuple[int | None, int] | None = None
        self._load_voter_history()
        self._prefix = f"[raft node {node_id}] "

    # -- views -----------------------------------------------------------------------

    @property
    def node_id(self) -> int:
        return self._node_id

    @property
    def epoch(self) -> int:
        return self._state.epoch

    @property
    def leader_id(self) -> int | None:
        """The leader of the current epoch if known (this node when it leads or resigned)."""
        return self._state.leader_id

    @property
    def role(self) -> str:
        """Kafka's name of the current role: Unattached, Prospective, Candidate, Leader, ..."""
        return self._state.name

    @property
    def is_leader(self) -> bool:
        return isinstance(self._state, LeaderState)

    @property
    def high_watermark(self) -> int:
        """Entries below this offset are known committed (never decreases in one incarnation)."""
        return self._high_watermark

    @property
    def voter_set(self) -> VoterSet:
        """The voter set in force: the latest one in the local log, committed or not."""
        return self._voters.latest()

    @property
    def is_voter(self) -> bool:
        return self.voter_set.is_voter(self._node_id, self._directory_id)

    @property
    def can_stand_for_election(self) -> bool:
        """A voter, or a voter whose removal is not known to be committed yet.

        A node that holds the newest log may be the only one that can win, even
        if that log's uncommitted ``Voters`` entry removes it; as in the Raft
        dissertation (4.2.2) it may then lead the new set without counting itself,
        commit the change and step down.  Observers never stand.
        """
        if self.is_voter:
            return True
        offset = self._voters.latest_offset()
        if offset is None or offset < self._high_watermark:
            return False
        return self._voters.at_offset(offset - 1).is_voter(self._node_id, self._directory_id)

    @property
    def kraft_version(self) -> int:
        """0 for static voters (``controller.quorum.voters``), 1 for a dynamic quorum."""
        return self._kraft_version

    def endpoints(self, node_id: int) -> tuple[Endpoint, ...]:
        """Listeners of ``node_id`` as far as this node knows (voter set, then leader hints)."""
        if node_id == self._node_id:
            return self._listeners
        node = self.voter_set.get(node_id)
        if node is not None and node.endpoints:
            return node.endpoints
        return self._known_endpoints.get(node_id, ())

    def election_state(self) -> ElectionState:
        """What ``PersistElectionState`` would write now."""
        state = self._state
        voted_directory = None
        if isinstance(state, (UnattachedState, ProspectiveState, FollowerState)):
            voted_directory = state.voted_directory_id
        elif isinstance(state, (CandidateState, LeaderState)):
            voted_directory = self._directory_id
        voters = self._config.static_voters.ids if self._config.static_voters is not None else None
        return ElectionState(state.epoch, state.leader_id, state.voted_id, voted_directory, voters)

    # -- building blocks -------------------------------------------------------------

    def _default_voter_base(self) -> VoterSet | None:
        if self._config.static_voters is not None:
            return self._config.static_voters
        return self._bootstrap_voters

    def _load_voter_history(self) -> None:
        """Read the voter set history from the latest snapshot and the log (on start)."""
        start = self._log.start_offset
        latest = self._log.latest_snapshot_id
        if latest is not None:
            snapshot = self._log.load_snapshot(latest)
            if snapshot is not None and snapshot.voters is not None and self._kraft_version == 1:
                self._voters.reset(snapshot.voters)
            start = max(start, latest.offset)
        for entry in self._log.control_entries(start):
            self._note_entry(entry)

    def _note_entry(self, entry: Entry) -> None:
        if isinstance(entry.payload, Voters):
            if self._kraft_version == 0:
                raise RaftInvariantError(f"Voters entry at {entry.offset} in a static quorum")
            self._voters.add(entry.offset, entry.payload.voter_set)

    def _emit(self, action: Action) -> None:
        self._actions.append(action)

    def _random_election_timeout_ms(self) -> int:
        timeout = self._config.election_timeout_ms
        return 0 if timeout == 0 else timeout + self._random.randrange(timeout)

    def _election_backoff_ms(self, retries: int) -> int:
        """Kafka's binary exponential election backoff, capped at election_backoff_max_ms."""
        base = max(1, self._config.election_backoff_max_ms // 10)
        return min(
            base * self._random.randrange(2 << min(20, retries - 1)),
            self._config.election_backoff_max_ms,
        )

    def _send(self, destination_id: int, message: RaftRequest, now_ms: int) -> None:
        request = self._requests.register(destination_id, message, now_ms)
        self._emit(Send(destination_id, request.request_id, message))

    def _leader_endpoints(self) -> tuple[Endpoint, ...]:
        leader = self.leader_id
        return () if leader is None else self.endpoints(leader)

    def _learn_endpoints(self, node_id: int | None, endpoints: tuple[Endpoint, ...]) -> None:
        if node_id is not None and node_id != self._node_id and endpoints:
            self._known_endpoints[node_id] = endpoints

    def _remote_voters(self, voters: VoterSet) -> list[int]:
        return [node_id for node_id in voters.ids if node_id != self._node_id]

    def _announce_leader(self) -> None:
        # A resigned leader still owns its epoch but takes no appends: announce no leader.
        leader = None if isinstance(self._state, ResignedState) else self.leader_id
        current = (leader, self.epoch)
        if current != self._announced:
            self._announced = current
            self._emit(LeaderChanged(current[0], current[1]))

    def _advance_high_watermark(self, offset: int) -> None:
        if offset > self._high_watermark:
            self._high_watermark = offset
            self._emit(HighWatermarkAdvanced(offset))

    # -- log changes -----------------------------------------------------------------

    def _append_as_leader(self, now_ms: int, payloads: Sequence[Payload]) -> range:
        leader = self._state
        assert isinstance(leader, LeaderState)
        offsets = self._log.append_as_leader(payloads, leader.epoch)
        for offset, payload in zip(offsets, payloads, strict=True):
            if isinstance(payload, Voters):
                self._voters.add(offset, payload.voter_set)
                leader.update_voter_set(payload.voter_set)
        self._emit(FlushLog(self._log.end_offset))
        self._after_leader_progress(now_ms, leader.maybe_update_high_watermark())
        return offsets

    def _append_as_follower(self, entries: Sequence[Entry]) -> None:
        self._log.append_as_follower(entries)
        for entry in entries:
            self._note_entry(entry)
        self._emit(FlushLog(self._log.end_offset))

    def _truncate(self, offset: int) -> None:
        if offset < self._high_watermark:
            raise RaftInvariantError(
                f"{self._prefix}asked to truncate to {offset} below the high watermark {self._high_watermark}"
            )
        self._log.truncate_to(offset)
        self._voters.truncate_new_entries(offset)

    def _install_snapshot(self, snapshot_id: SnapshotId, raw: bytes) -> None:
        if snapshot_id.offset < self._high_watermark:
            raise RaftInvariantError(
                f"{self._prefix}snapshot {snapshot_id} is below the high watermark"
            )
        self._log.install_snapshot(snapshot_id, raw)
        snapshot = self._log.load_snapshot(snapshot_id)
        voters = snapshot.voters if snapshot is not None and self._kraft_version == 1 else None
        self._voters.reset(voters if voters is not None else self._default_voter_base())
        self._emit(LoadSnapshot(snapshot_id))
        self._advance_high_watermark(snapshot_id.offset)

    def _after_leader_progress(self, now_ms: int, high_watermark_moved: bool) -> None:
        """Hook: the leader's high watermark may have advanced (see ``RaftMachine``)."""
        raise NotImplementedError

    def _answer_parked_fetches_on_leaving(self, leader: LeaderState) -> None:
        """Hook: answer the old leader's parked fetches and pending voter change."""
        raise NotImplementedError
