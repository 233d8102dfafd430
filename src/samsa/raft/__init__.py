"""Samsa's metadata quorum: a sans-I/O KRaft state machine.

``RaftMachine`` implements Kafka's KRaft protocol for one node: leader election
with pre-vote (KIP-996), pull-based replication with divergence truncation,
snapshots, check quorum, graceful resignation, and one-at-a-time voter changes
(KIP-853).  It does no I/O: the caller (``raft/driver.py``) feeds it events with
the current time and executes the actions it returns, in order.

Public API (stable; the driver, the wire mapping and the disk log build on it):

* ``RaftMachine(node_id=, config=, log=, random_source=, election_state=None,
  directory_id=None, listeners=(), bootstrap_voters=None)``, then ``start(now_ms)``;
  ``poll``, ``receive_request``, ``receive_response``, ``request_failed``,
  ``append``, ``flushed``, ``add_voter``, ``remove_voter``, ``resign``,
  ``create_snapshot``, ``delete_before_snapshot``, ``describe_quorum``,
  ``next_deadline``, ``endpoints``; read-only ``epoch``, ``leader_id``, ``role``,
  ``high_watermark``, ``voter_set``, ``is_voter``, ``election_state()``.
* Actions (``samsa.raft.actions``): ``Send``, ``Respond``,
  ``PersistElectionState``, ``FlushLog``, ``HighWatermarkAdvanced``,
  ``LeaderChanged``, ``LoadSnapshot``.
* Messages (``samsa.raft.messages``): Vote, BeginQuorumEpoch, EndQuorumEpoch,
  Fetch, FetchSnapshot, AddRaftVoter, RemoveRaftVoter requests and responses,
  ``QuorumInfo`` for DescribeQuorum.
* The log: ``RaftLog`` (protocol), ``MemoryRaftLog``; entries ``Entry(offset,
  epoch, payload)`` with ``bytes`` or control payloads ``LeaderChange`` and
  ``Voters``.
* ``QuorumConfig`` (Kafka's ``controller.quorum.*`` settings), ``VoterSet``,
  ``ElectionState`` (Kafka's quorum-state file), ``NotLeaderError``.
"""

from __future__ import annotations

from samsa.raft.actions import (
    Action,
    FlushLog,
    HighWatermarkAdvanced,
    LeaderChanged,
    LoadSnapshot,
    PersistElectionState,
    Respond,
    Send,
)
from samsa.raft.config import QuorumConfig, parse_static_voters
from samsa.raft.election import ElectionState
from samsa.raft.errors import KRaftErrorCode, NotLeaderError, RaftInvariantError
from samsa.raft.machine import RaftMachine
from samsa.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    QuorumInfo,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    ReplicaDescription,
    VoteRequest,
    VoteResponse,
)
from samsa.raft.persistence.memory_log import MemoryRaftLog
from samsa.raft.persistence.raft_log import RaftLog, Snapshot, SnapshotChunk
from samsa.raft.records import (
    Endpoint,
    Entry,
    LeaderChange,
    OffsetAndEpoch,
    Payload,
    SnapshotId,
    Voters,
    is_control,
)
from samsa.raft.voters import VoterNode, VoterSet

__all__ = [
    "Action",
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
    "BeginQuorumEpochRequest",
    "BeginQuorumEpochResponse",
    "ElectionState",
    "EndQuorumEpochRequest",
    "EndQuorumEpochResponse",
    "Endpoint",
    "Entry",
    "FetchRequest",
    "FetchResponse",
    "FetchSnapshotRequest",
    "FetchSnapshotResponse",
    "FlushLog",
    "HighWatermarkAdvanced",
    "KRaftErrorCode",
    "LeaderChange",
    "LeaderChanged",
    "LoadSnapshot",
    "MemoryRaftLog",
    "NotLeaderError",
    "OffsetAndEpoch",
    "Payload",
    "PersistElectionState",
    "QuorumConfig",
    "QuorumInfo",
    "RaftInvariantError",
    "RaftLog",
    "RaftMachine",
    "RaftRequest",
    "RaftResponse",
    "RemoveRaftVoterRequest",
    "RemoveRaftVoterResponse",
    "ReplicaDescription",
    "Respond",
    "Send",
    "Snapshot",
    "SnapshotChunk",
    "SnapshotId",
    "VoteRequest",
    "VoteResponse",
    "VoterNode",
    "VoterSet",
    "Voters",
    "is_control",
    "parse_static_voters",
]
