"""Unattached: the node knows an epoch but no leader for it (it may have voted)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass(slots=True)
class UnattachedState:
    """A voter waits for its election timeout; an observer (no deadline) looks for a leader.

    A vote granted here is binding for the epoch: ``voted_id`` is persisted and the
    node grants no other standard vote in this epoch.
    """

    epoch: int
    voted_id: int | None = None
    voted_directory_id: uuid.UUID | None = None
    election_deadline_ms: int | None = None

    name = "Unattached"

    @property
    def leader_id(self) -> int | None:
        return None

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
