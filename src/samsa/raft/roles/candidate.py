"""Candidate: the epoch is bumped, the node voted for itself and asks for votes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from samsa.raft.election import EpochElection


@dataclass(slots=True)
class CandidateState:
    """Collects standard votes; backs off (``backoff_until_ms``) after losing, then retries
    through Prospective with an exponentially growing, randomised backoff."""

    epoch: int
    local_id: int
    election: EpochElection
    election_deadline_ms: int
    retries: int = 1
    backoff_until_ms: int | None = None

    name = "Candidate"

    @property
    def leader_id(self) -> int | None:
        return None

    @property
    def voted_id(self) -> int | None:
        return self.local_id

    def can_grant_vote(
        self,
        candidate_id: int,
        candidate_directory_id: uuid.UUID | None,
        log_up_to_date: bool,
        pre_vote: bool,
    ) -> bool:
        # It voted for itself in this epoch; pre-votes are non-binding.
        return log_up_to_date if pre_vote else candidate_id == self.local_id
