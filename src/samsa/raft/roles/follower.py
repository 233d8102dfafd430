"""Follower: fetches from the epoch's leader (voters and observers alike)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from samsa.raft.records import SnapshotId


@dataclass(slots=True)
class SnapshotDownload:
    """A snapshot being fetched chunk by chunk; ``data`` grows to the snapshot's size."""

    snapshot_id: SnapshotId
    data: bytearray = field(default_factory=bytearray)


@dataclass(slots=True)
class FollowerState:
    """Knows the leader of ``epoch``.

    ``fetch_deadline_ms`` is pushed forward by every successful fetch; when it
    passes, a voter starts a pre-vote and an observer asks other voters who leads.
    ``last_fetch_ok_ms`` is how a voter decides it has a live leader and so refuses
    pre-votes (KIP-996).
    """

    epoch: int
    leader_id: int
    voted_id: int | None
    voted_directory_id: uuid.UUID | None
    fetch_deadline_ms: int
    last_fetch_ok_ms: int | None = None
    snapshot_download: SnapshotDownload | None = None

    name = "Follower"

    def has_live_leader(self, now_ms: int, fetch_timeout_ms: int) -> bool:
        return (
            self.last_fetch_ok_ms is not None and now_ms - self.last_fetch_ok_ms < fetch_timeout_ms
        )

    def can_grant_vote(
        self,
        candidate_id: int,
        candidate_directory_id: uuid.UUID | None,
        log_up_to_date: bool,
        pre_vote: bool,
        has_live_leader: bool,
    ) -> bool:
        # A standard vote in an epoch that has a leader is never granted.
        return pre_vote and log_up_to_date and not has_live_leader
