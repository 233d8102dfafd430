"""The Raft driver's clock: monotonic milliseconds that stand still while the
event loop is held.

Raft's timeouts measure a peer's silence.  When this node's own loop is held (a
callback of seconds at 10,000 partitions on a loaded machine, a pause), the
leader's fetch answers and the followers' fetches that came meanwhile wait
unread in the sockets; whatever touched the machine first after the hold (the
fetch timer, a BeginQuorumEpoch read before the answer) saw the fetch timeout
expired and started an election against a live leader.  Time the loop was held
is not the peers' silence, so it is taken off the clock, as the controller
forgives its own late polls (``BrokerHeartbeatManager.forgive``).

A ticking task notices holds: a tick much later than due means the loop was
held since the tick before.  Between the two, reading the clock already counts
only the first ``tick + tolerance`` of the hold, so a machine call made before
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

    async def run(self) -> None:
        """Tick until cancelled (the driver's lifetime)."""
        self._last_tick = self._clock()
        while True:
            await asyncio.sleep(TICK_MS / 1000)
            self.tick()
