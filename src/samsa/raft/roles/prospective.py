"""Prospective (KIP-996): asking for pre-votes before disturbing anyone with a new epoch."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from samsa.raft.election import EpochElection


@dataclass(slots=True)
class ProspectiveState:
    """A voter whose election or fetch timer expired, still in its current epoch.

    It becomes a Candidate (bumping the epoch) only with a majority of pre-votes,
    which voters grant only when they have no live leader: a node returning from a
    partition therefore cannot force an election on a healthy quorum.  On losing,
    it goes back to following ``leader_id`` if it had one, else to Unattached.
    Not persisted: the durable state is unchanged.
    """

    epoch: int
    leader_id: int | None
    voted_id: int | None
    voted_directory_id: uuid.UUID | None
    election: EpochElection
    election_deadline_ms: int
    retries: int = 1

    name = "Prospective"

    def can_grant_vote(
        self,
        candidate_id: int,
        candidate_directory_id: uuid.UUID | None,
        log_up_to_date: bool,
        pre_vote: bool,
    ) -> bool:
        if pre_vote or self.voted_id is None:
            return log_up_to_date
        return self.voted_id == candidate_id and (
            self.voted_directory_id is None or self.voted_directory_id == candidate_directory_id
        )
