"""Resigned: a leader that stepped down (or restarted) and still owns its epoch."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(slots=True)
class ResignedState:
    """Tells the voters (EndQuorumEpoch) until each acknowledges, never votes in its epoch.

    A leader restarts in this state too: keeping the epoch but never appending in it
    again is what keeps (offset, epoch) unique when unflushed entries were lost.
    """

    epoch: int
    local_id: int
    election_deadline_ms: int
    preferred_successors: tuple[int, ...] = ()
    unacknowledged: set[int] = field(default_factory=set)

    name = "Resigned"

    @property
    def leader_id(self) -> int | None:
        return self.local_id

    @property
    def voted_id(self) -> int | None:
        """It led this epoch, so it voted for itself in it."""
        return self.local_id

    def can_grant_vote(
        self,
        candidate_id: int,
        candidate_directory_id: uuid.UUID | None,
        log_up_to_date: bool,
        pre_vote: bool,
    ) -> bool:
        return False
