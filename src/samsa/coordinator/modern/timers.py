"""Deadlines of group members: the session and, while revoking, the rebalance timeout.

Shared because consumer, streams and share groups time their members by the
same rule (Kafka's modern groups): the session timer restarts on every
heartbeat; the revocation timer starts when the member is asked to revoke and
is *not* restarted by heartbeats, so a member that keeps heartbeating but never
gives its partitions (or tasks) up is still fenced after its rebalance timeout.
A consumer-group member speaking the classic protocol has, instead of the
revocation timer, a join deadline (told to rejoin, it must within its
rebalance timeout) and a sync deadline (joined, it must send SyncGroup as
soon).  Expiry calls ``on_expired(group_id, member_id, kind)`` on the event
loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import Enum


class Deadline(Enum):
    SESSION = "session"
    REVOCATION = "revocation"
    JOIN = "join"
    SYNC = "sync"


Key = tuple[str, str, Deadline]


class MemberTimers:
    """Timer handles by (group, member, kind); owned by the coordinator's event loop."""

    def __init__(self, on_expired: Callable[[str, str, Deadline], None]) -> None:
        self._handles: dict[Key, asyncio.TimerHandle] = {}
        self._on_expired = on_expired

    def start(self, group_id: str, member_id: str, kind: Deadline, timeout_ms: int) -> None:
        """(Re)start one deadline."""
        self.cancel(group_id, member_id, kind)
        key = (group_id, member_id, kind)
        self._handles[key] = asyncio.get_running_loop().call_later(
            timeout_ms / 1000, self._fire, key
        )

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        *,
        session_timeout_ms: int,
        revoking: bool,
        rebalance_timeout_ms: int,
    ) -> None:
        """After a heartbeat: restart the session; start the revocation deadline when the
        member must revoke (and it is not running yet), drop it once the member has.  A
        member with no rebalance timeout of its own revokes within its session timeout."""
        self.start(group_id, member_id, Deadline.SESSION, session_timeout_ms)
        if not revoking:
            self.cancel(group_id, member_id, Deadline.REVOCATION)
        elif not self.running(group_id, member_id, Deadline.REVOCATION):
            timeout_ms = rebalance_timeout_ms if rebalance_timeout_ms > 0 else session_timeout_ms
            self.start(group_id, member_id, Deadline.REVOCATION, timeout_ms)

    def start_if_absent(
        self, group_id: str, member_id: str, kind: Deadline, timeout_ms: int
    ) -> None:
        if not self.running(group_id, member_id, kind):
            self.start(group_id, member_id, kind, timeout_ms)

    def running(self, group_id: str, member_id: str, kind: Deadline) -> bool:
        return (group_id, member_id, kind) in self._handles

    def cancel(self, group_id: str, member_id: str, kind: Deadline | None = None) -> None:
        """Cancel one deadline, or all of the member's when ``kind`` is None."""
        for k in (kind,) if kind is not None else tuple(Deadline):
            handle = self._handles.pop((group_id, member_id, k), None)
            if handle is not None:
                handle.cancel()

    def cancel_group(self, group_id: str) -> None:
        for key in [k for k in self._handles if k[0] == group_id]:
            self._handles.pop(key).cancel()

    def cancel_all(self) -> None:
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()

    def _fire(self, key: Key) -> None:
        self._handles.pop(key, None)
        self._on_expired(*key)
