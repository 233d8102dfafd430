"""What the machine asks its caller to do.

Every machine call returns a list of actions that the caller executes **in list
order**.  The order is part of the contract:

* ``PersistElectionState`` must be durable before the next action runs: a vote
  is answered (``Respond``) only after the vote is on disk, so a crash cannot
  make a node vote twice in one epoch.
* ``FlushLog`` may complete asynchronously; the caller reports completion with
  ``RaftMachine.flushed``.  The machine counts only flushed entries towards the
  high watermark (leader) and fetches again only once its log is flushed
  (followers), so acknowledged progress is always durable.
* ``LoadSnapshot`` comes before the ``HighWatermarkAdvanced`` that needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from samsa.raft.election import ElectionState
from samsa.raft.messages import RaftRequest, RaftResponse
from samsa.raft.records import SnapshotId

__all__ = [
    "Action",
    "FlushLog",
    "HighWatermarkAdvanced",
    "LeaderChanged",
    "LoadSnapshot",
    "PersistElectionState",
    "Respond",
    "Send",
]


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``message`` to ``destination_id``; give its response back with ``request_id``.

    A negative ``destination_id`` names a bootstrap server (see
    ``QuorumConfig.bootstrap_server_id``); otherwise resolve the node's address with
    ``RaftMachine.endpoints``.  The machine times requests out by itself after
    ``request_timeout_ms``; call ``request_failed`` early if the connection breaks.
    """

    destination_id: int
    request_id: int
    message: RaftRequest


@dataclass(frozen=True, slots=True)
class Respond:
    """Answer the request that arrived with the opaque token ``reply_to``."""

    reply_to: object
    message: RaftResponse


@dataclass(frozen=True, slots=True)
class PersistElectionState:
    """Write Kafka's ``quorum-state`` file durably before executing the next action."""

    election: ElectionState


@dataclass(frozen=True, slots=True)
class FlushLog:
    """Make the log durable up to ``up_to_offset`` (exclusive), then call ``flushed``."""

    up_to_offset: int


@dataclass(frozen=True, slots=True)
class HighWatermarkAdvanced:
    """Entries below ``offset`` are committed; the state machine may apply them."""

    offset: int


@dataclass(frozen=True, slots=True)
class LeaderChanged:
    """The node's view of (leader, epoch) changed; ``leader_id`` is ``None`` while unknown."""

    leader_id: int | None
    epoch: int


@dataclass(frozen=True, slots=True)
class LoadSnapshot:
    """Replace the state machine's state by this snapshot (``RaftLog.load_snapshot``).

    Emitted on start when a snapshot exists and when a follower installed one it
    fetched; the state then continues from ``snapshot_id.offset``.
    """

    snapshot_id: SnapshotId


Action = Union[  # noqa: UP007
    Send,
    Respond,
    PersistElectionState,
    FlushLog,
    HighWatermarkAdvanced,
    LeaderChanged,
    LoadSnapshot,
]
