"""Failed logins slow down their client address: brute force costs time.

Each address may have one login in flight.  After a failure it waits before
its next attempt, twice as long after each further failure (``base_s``,
``2 * base_s``, ... up to ``cap_s``); an attempt inside that time is refused
at once (HTTP 429 with ``Retry-After``) without checking anything.  A success
clears the address; an address quiet for ``forget_after_s`` is forgotten, and
at most ``limit`` addresses are remembered.  This comes on top of the delay
each failed answer waits (``connection.failed.authentication.delay.ms``, as
SASL waits), which only slows one connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_ADDRESSES = 10_000


@dataclass(slots=True)
class _Address:
    failures: int = 0
    next_at: float = 0.0
    in_flight: bool = False
    last_seen: float = 0.0


class LoginBackoff:
    def __init__(
        self,
        base_s: float = 1.0,
        cap_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        forget_after_s: float = 900.0,
        limit: int = MAX_ADDRESSES,
    ) -> None:
        self.base_s = base_s
        self.cap_s = cap_s
        self._clock = clock
        self._forget_after_s = forget_after_s
        self._limit = limit
        self._addresses: dict[str, _Address] = {}

    def begin(self, address: str) -> float:
        """0 and the attempt may go on (``end`` must follow), or the seconds
        the address must still wait."""
        now = self._clock()
        state = self._addresses.get(address)
        if state is None:
            self._forget(now)
            state = self._addresses[address] = _Address()
        if state.in_flight:
            return max(state.next_at - now, self.base_s)
        if state.next_at > now:
            return state.next_at - now
        state.in_flight = True
        state.last_seen = now
        return 0.0

    def end(self, address: str, *, succeeded: bool) -> float:
        """Close the attempt; after a failure, the back-off now imposed (seconds)."""
        state = self._addresses.get(address)
        if state is None:
            return 0.0
        state.in_flight = False
        if succeeded:
            del self._addresses[address]
            return 0.0
        state.failures += 1
        wait = min(self.base_s * 2 ** (state.failures - 1), self.cap_s)
        now = self._clock()
        state.next_at = now + wait
        state.last_seen = now
        return wait

    def failures(self, address: str) -> int:
        state = self._addresses.get(address)
        return 0 if state is None else state.failures

    def _forget(self, now: float) -> None:
        if len(self._addresses) < self._limit:
            return
        stale = [
            a
            for a, s in self._addresses.items()
            if not s.in_flight and now - s.last_seen > self._forget_after_s
        ]
        for address in stale:
            del self._addresses[address]
        if len(self._addresses) >= self._limit:
            oldest = min(
                (a for a, s in self._addresses.items() if not s.in_flight),
                key=lambda a: self._addresses[a].last_seen,
                default=None,
            )
            if oldest is not None:
                del self._addresses[oldest]
