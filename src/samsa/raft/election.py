"""Election state: what survives a restart, and the tally of one election.

``ElectionState`` mirrors Kafka's ``quorum-state`` file: the epoch, the leader
if known, the candidate this node voted for in that epoch.  Persisting it before
answering a vote is what makes "one vote per epoch" hold across crashes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from samsa.raft.voters import VoterSet

__all__ = ["ElectionState", "EpochElection"]


@dataclass(frozen=True, slots=True)
class ElectionState:
    """Kafka's quorum-state: ``leaderEpoch``, ``leaderId``, ``votedId``, ``votedDirectoryId``.

    ``voters`` is only set for a static quorum (kraft.version 0), as Kafka's
    ``currentVoters``; a dynamic quorum keeps its voters in the log.
    """

    epoch: int
    leader_id: int | None = None
    voted_id: int | None = None
    voted_directory_id: uuid.UUID | None = None
    voters: tuple[int, ...] | None = None


@dataclass(slots=True)
class EpochElection:
    """Votes collected in one (pre-)election, counted against a fixed voter set.

    The set is the candidate's latest voter set when the election starts; grants
    from nodes outside it do not count.
    """

    voters: VoterSet
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)

    def record_granted(self, node_id: int) -> None:
        # By id: the answer comes from the node the request went to, and a voter
        # known with its directory id must count as much as one known without.
        if node_id in self.voters.ids and node_id not in self.rejected:
            self.granted.add(node_id)

    def record_rejected(self, node_id: int) -> None:
        if node_id in self.voters.ids and node_id not in self.granted:
            self.rejected.add(node_id)

    def is_vote_granted(self) -> bool:
        return len(self.granted) >= self.voters.majority

    def is_vote_rejected(self) -> bool:
        """True once a majority can no longer be reached."""
        return len(self.voters) - len(self.rejected) < self.voters.majority

    def unrecorded_voters(self) -> list[int]:
        """Voters that have answered neither way, in id order."""
        return [
            node_id
            for node_id in self.voters.ids
            if node_id not in self.granted and node_id not in self.rejected
        ]
