"""Raft's RPCs as frozen dataclasses, field for field after Kafka's JSON schemas.

Only the fields that carry meaning for one metadata partition are here: the
wire layer (``raft/rpc/wire.py``) adds the cluster id, topic and partition framing
and turns ``entries`` into RecordBatches.  Names are the snake_case of Kafka's
(VoteRequest v2: ``ReplicaEpoch``, ``LastOffsetEpoch``, ``PreVote``; FetchRequest:
``CurrentLeaderEpoch``, ``FetchOffset``, ``LastFetchedEpoch``; ...).  A leader id
is ``None`` where Kafka writes -1; a high watermark is -1 where Kafka writes -1.

Every response carries a leader hint (``leader_id``, ``leader_epoch``): the
responder's view of the current epoch and its leader, which is how nodes learn of
elections they missed (Kafka's CurrentLeader / LeaderId+LeaderEpoch fields).
``leader_endpoints`` are the leader's listeners when the responder knows them
(Kafka's NodeEndpoints / LeaderEndpoints), so a node can reach a leader that is
not in its own, possibly stale, voter set.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Union

from samsa.raft.records import Endpoint, Entry, OffsetAndEpoch, SnapshotId

HIGH_WATERMARK_NOT_SENT = 2**63 - 1
"""Kafka's default for FetchRequest's HighWatermark: the replica did not say."""

__all__ = [
    "HIGH_WATERMARK_NOT_SENT",
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
    "BeginQuorumEpochRequest",
    "BeginQuorumEpochResponse",
    "EndQuorumEpochRequest",
    "EndQuorumEpochResponse",
    "FetchRequest",
    "FetchResponse",
    "FetchSnapshotRequest",
    "FetchSnapshotResponse",
    "QuorumInfo",
    "RaftRequest",
    "RaftResponse",
    "RemoveRaftVoterRequest",
    "RemoveRaftVoterResponse",
    "ReplicaDescription",
    "VoteRequest",
    "VoteResponse",
]


@dataclass(frozen=True, slots=True)
class VoteRequest:
    """Vote (api key 52) and, with ``pre_vote``, KIP-996's PreVote.

    ``replica_epoch`` is the candidate's epoch; a prospective (pre-vote) sends its
    current epoch without bumping it, as Kafka does.  ``voter_id`` is the node the
    request is meant for (-1: any).
    """

    replica_id: int
    replica_epoch: int
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool = False
    replica_directory_id: uuid.UUID | None = None
    voter_id: int = -1
    voter_directory_id: uuid.UUID | None = None


@dataclass(frozen=True, slots=True)
class VoteResponse:
    error_code: int
    leader_id: int | None
    leader_epoch: int
    vote_granted: bool
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest:
    """Sent by a new leader to the voters until each acknowledges (api key 53)."""

    leader_id: int
    leader_epoch: int
    voter_id: int = -1
    voter_directory_id: uuid.UUID | None = None
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse:
    error_code: int
    leader_id: int | None
    leader_epoch: int
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest:
    """Sent by a resigning leader (api key 54).

    ``preferred_successors`` lists the other voters by descending fetch offset; a
    receiver shortens its election timeout by its position in it.
    """

    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...] = ()
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse:
    error_code: int
    leader_id: int | None
    leader_epoch: int
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """A follower's or observer's pull of the metadata log (Fetch, api key 1).

    The leader checks (``fetch_offset``, ``last_fetched_epoch``) against its log;
    ``fetch_offset`` is also how it learns the replica's (flushed) log end.
    ``high_watermark`` is the one the replica knows (KIP-1166, FetchRequest v18's
    tagged ``HighWatermark``): the leader answers at once, rather than parking the
    fetch, when its own is higher.  The default, as in Kafka, means "not sent":
    never answer early for it.
    """

    replica_id: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    max_wait_ms: int
    max_bytes: int
    replica_directory_id: uuid.UUID | None = None
    replica_epoch: int = -1
    high_watermark: int = HIGH_WATERMARK_NOT_SENT


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """Entries from the fetch offset, or where to truncate to, or which snapshot to fetch.

    At most one of ``entries``, ``diverging_epoch`` (Kafka's DivergingEpoch: the
    leader's end offset for the largest epoch <= the follower's last fetched epoch)
    and ``snapshot_id`` is set.
    """

    error_code: int
    leader_id: int | None
    leader_epoch: int
    high_watermark: int = -1
    log_start_offset: int = 0
    entries: tuple[Entry, ...] = ()
    diverging_epoch: OffsetAndEpoch | None = None
    snapshot_id: SnapshotId | None = None
    leader_endpoints: tuple[Endpoint, ...] = ()
    raw_records: bytes | None = field(default=None, compare=False)
    """The stored batches holding exactly ``entries``, when the log had them: sent
    as they are (see entry_codec.ReadEntries).  Not compared: the same entries."""


@dataclass(frozen=True, slots=True)
class FetchSnapshotRequest:
    """One chunk of a snapshot, from byte ``position`` (FetchSnapshot, api key 59)."""

    replica_id: int
    current_leader_epoch: int
    snapshot_id: SnapshotId
    position: int
    max_bytes: int
    replica_directory_id: uuid.UUID | None = None


@dataclass(frozen=True, slots=True)
class FetchSnapshotResponse:
    error_code: int
    leader_id: int | None
    leader_epoch: int
    snapshot_id: SnapshotId | None = None
    size: int = -1
    position: int = -1
    chunk: bytes = b""
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class AddRaftVoterRequest:
    """KIP-853 AddRaftVoter (api key 80), as handled by the leader."""

    voter_id: int
    voter_directory_id: uuid.UUID | None
    listeners: tuple[Endpoint, ...] = ()
    timeout_ms: int = -1


@dataclass(frozen=True, slots=True)
class AddRaftVoterResponse:
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class RemoveRaftVoterRequest:
    """KIP-853 RemoveRaftVoter (api key 81), as handled by the leader."""

    voter_id: int
    voter_directory_id: uuid.UUID | None


@dataclass(frozen=True, slots=True)
class RemoveRaftVoterResponse:
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class ReplicaDescription:
    """One replica in DescribeQuorum: its log end and when it last fetched / was caught up."""

    replica_id: int
    replica_directory_id: uuid.UUID | None
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int


@dataclass(frozen=True, slots=True)
class QuorumInfo:
    """What DescribeQuorum returns (api key 55) for the metadata partition.

    A node that is not the leader answers NOT_LEADER_OR_FOLLOWER with its hint and
    no replica states.
    """

    error_code: int
    leader_id: int | None
    leader_epoch: int
    high_watermark: int
    current_voters: tuple[ReplicaDescription, ...] = ()
    observers: tuple[ReplicaDescription, ...] = ()


RaftRequest = Union[  # noqa: UP007
    VoteRequest,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    AddRaftVoterRequest,
    RemoveRaftVoterRequest,
]

RaftResponse = Union[  # noqa: UP007
    VoteResponse,
    BeginQuorumEpochResponse,
    EndQuorumEpochResponse,
    FetchResponse,
    FetchSnapshotResponse,
    AddRaftVoterResponse,
    RemoveRaftVoterResponse,
]
