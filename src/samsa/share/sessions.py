"""Share sessions (KIP-932): the partitions a share consumer fetches from this leader.

A session is keyed by (group, member).  Epoch 0 opens it (replacing any older
one of the member) with the request's partitions; each later request carries
the next epoch and names only partitions to add (``topics``) or drop
(``forgotten_topics_data``); epoch -1 closes it after its acknowledgements,
and the member's acquired records are released at once rather than when their
locks run out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from samsa.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1

SessionKey = tuple[str, str]
PartitionKey = tuple[bytes, int]


@dataclass(slots=True)
class ShareSession:
    group_id: str
    member_id: str
    epoch: int = 1
    partitions: set[PartitionKey] = field(default_factory=set)
    last_used_ms: int = 0


class ShareSessionError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class ShareSessionCache:
    def __init__(self) -> None:
        self.sessions: dict[SessionKey, ShareSession] = {}

    def open_or_advance(
        self, group_id: str, member_id: str, epoch: int, now_ms: int = 0
    ) -> ShareSession:
        """The session a request at ``epoch`` works in (a new one at epoch 0);
        raises SHARE_SESSION_NOT_FOUND or INVALID_SHARE_SESSION_EPOCH."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            opened = ShareSession(group_id, member_id, last_used_ms=now_ms)
            self.sessions[key] = opened
            return opened
        session = self.sessions.get(key)
        if session is None:
            raise ShareSessionError(
                ErrorCode.SHARE_SESSION_NOT_FOUND,
                f"no share session for member {member_id} of group {group_id}",
            )
        if epoch == FINAL_EPOCH:
            return session
        if epoch != session.epoch:
            raise ShareSessionError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                f"share session epoch {epoch}, expected {session.epoch}",
            )
        session.epoch += 1
        session.last_used_ms = now_ms
        return session

    def evict_idle(self, now_ms: int, idle_ms: int) -> list[ShareSession]:
        """Drop sessions unused for ``idle_ms`` (their consumer died without closing
        them); the caller releases what they had acquired."""
        idle = [s for s in self.sessions.values() if now_ms - s.last_used_ms > idle_ms]
        for session in idle:
            del self.sessions[(session.group_id, session.member_id)]
        return idle

    def close(self, group_id: str, member_id: str) -> None:
        self.sessions.pop((group_id, member_id), None)
