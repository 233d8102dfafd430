"""One class per role of a node in the quorum (Kafka's EpochState family).

Each role holds only its own timers and tallies and answers "may I grant this
vote?"; the transitions between roles live in ``samsa.raft.core``.  Roles are
plain mutable objects, replaced (never reused) on every transition.
"""

from __future__ import annotations

from typing import Union

from samsa.raft.roles.candidate import CandidateState
from samsa.raft.roles.follower import FollowerState, SnapshotDownload
from samsa.raft.roles.leader import LeaderState, ParkedFetch, PendingVoterChange, ReplicaState
from samsa.raft.roles.prospective import ProspectiveState
from samsa.raft.roles.resigned import ResignedState
from samsa.raft.roles.unattached import UnattachedState

__all__ = [
    "CandidateState",
    "FollowerState",
    "LeaderState",
    "ParkedFetch",
    "PendingVoterChange",
    "ProspectiveState",
    "ReplicaState",
    "ResignedState",
    "Role",
    "SnapshotDownload",
    "UnattachedState",
]

Role = Union[  # noqa: UP007
    UnattachedState, ProspectiveState, CandidateState, LeaderState, FollowerState, ResignedState
]
