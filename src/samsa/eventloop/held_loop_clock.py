"""Milliseconds that stand still while the event loop is held.

Timeouts that measure a peer's silence (Raft's fetch timeout, a broker's
session at the controller) must not count time this process could not read:
when its loop is held (a callback of seconds at 10,000 partitions on a loaded
machine, a pause), the answers, fetches and heartbeats that came meanwhile wait
unread in its sockets, and whatever ran first after the hold saw the peer
silent past its timeout -- a follower started an election against a live
leader, the controller fenced a live broker.  Time the loop was held is not
the peers' silence, so it is taken off the clock.  The Raft driver and the
controller's broker sessions each read one.

A ticking task notices holds: a tick much later than due means the loop was
held since the tick before.  Between the two, reading the clock already counts
only the first ``tick + tolerance`` of the hold, so a reading taken before
the late tick runs sees the same time.  Holds shorter than that count in full.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["HeldLoopClock", "monotonic_ms"]

TICK_MS = 50
TOLERANCE_MS = 100
"""Lateness of a tick taken for scheduling noise, not a held loop."""


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class HeldLoopClock:
    def __init__(self, clock: Callable[[], int] = monotonic_ms) -> None:
        self._clock = clock
        self._last_tick = clock()
        self.held_ms = 0
        """Time taken off the clock so far: the loop's holds beyond the tolerance."""

    def __call__(self) -> int:
        real = self._clock()
        return real - self.held_ms - max(0, self._overdue(real))

    def _overdue(self, real: int) -> int:
        return real - self._last_tick - TICK_MS - TOLERANCE_MS

    def tick(self) -> None:
        real = self._clock()
        overdue = self._overdue(real)
        if overdue > 0:
            self.held_ms += overdue
        self._last_tick = real

    def start(self) -> asyncio.Task[None]:
        """Tick from now until the task is cancelled.  Called before the clock is
        first read: the time since it was made is no hold (nothing waited on it),
        and counted as one it left a new controller's sessions minutes in the
        past, so that the first poll fenced every broker."""
        self._last_tick = self._clock()
        return asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(TICK_MS / 1000)
            self.tick()
