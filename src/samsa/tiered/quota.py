"""Byte-rate quotas of the remote tier: Kafka's RLMQuotaManager, sans-I/O.

``remote.log.manager.copy.max.bytes.per.second`` bounds what a broker uploads
(so tiering a backlog cannot starve produce of disk and network), and
``remote.log.manager.fetch.max.bytes.per.second`` what it reads back for
consumers.  As Kafka measures them: the rate is the bytes recorded over the
last ``samples`` windows of ``window_s`` seconds (Kafka's defaults: 11 windows
of 1 s for copies, 11 of 1 s for fetches), and a caller over the quota waits
the time it takes for the rate to fall back to the bound (Kafka's
``throttleTime``: the excess over the quota divided by the quota, over the
measured span).  The copy task waits that long before each segment, then
records the segment's size; a fetch over its quota is skipped for the
remote partitions of that request, as Kafka's fetch path does.

The clock is passed in (monotonic milliseconds).  Not thread-safe: owned by
the event loop.
"""

from __future__ import annotations

from collections import deque

__all__ = ["UNLIMITED", "RateQuota"]

UNLIMITED = 2**63 - 1
"""Kafka's default for both quotas (Long.MAX_VALUE): no bound."""


class RateQuota:
    """A bound on bytes per second over a sliding set of windows."""

    def __init__(
        self, max_bytes_per_second: int, *, samples: int = 11, window_s: float = 1.0
    ) -> None:
        if samples < 2 or window_s <= 0:
            raise ValueError("a rate needs at least two windows of a positive length")
        self.max_bytes_per_second = _check(max_bytes_per_second)
        self.samples = samples
        self.window_ms = int(window_s * 1000)
        self._windows: deque[tuple[int, int]] = deque()  # (window start ms, bytes)

    def update(self, max_bytes_per_second: int) -> None:
        """A dynamic config change (Kafka's quotas are dynamic broker configs)."""
        self.max_bytes_per_second = _check(max_bytes_per_second)

    def record(self, size_bytes: int, now_ms: int) -> None:
        self._expire(now_ms)
        start = now_ms - now_ms % self.window_ms
        if self._windows and self._windows[-1][0] == start:
            _, total = self._windows[-1]
            self._windows[-1] = (start, total + size_bytes)
        else:
            self._windows.append((start, size_bytes))

    def rate(self, now_ms: int) -> float:
        """Bytes per second over the windows kept (Kafka's ``Rate``: the span is
        at least ``samples - 1`` full windows, so one burst is not a high rate)."""
        total, span_ms = self._measure(now_ms)
        return total * 1000.0 / span_ms

    def throttle_time_ms(self, now_ms: int) -> int:
        """How long to wait before the next copy or fetch (0: go ahead): the
        excess over the bound, relative to it, times the measured span."""
        if self.max_bytes_per_second >= UNLIMITED:
            return 0
        total, span_ms = self._measure(now_ms)
        excess = total * 1000.0 / span_ms - self.max_bytes_per_second
        return max(0, round(excess / self.max_bytes_per_second * span_ms))

    def _measure(self, now_ms: int) -> tuple[int, int]:
        self._expire(now_ms)
        total = sum(size for _, size in self._windows)
        first = self._windows[0][0] if self._windows else now_ms
        return total, max(now_ms - first, (self.samples - 1) * self.window_ms)

    def _expire(self, now_ms: int) -> None:
        oldest = now_ms - self.samples * self.window_ms
        while self._windows and self._windows[0][0] + self.window_ms <= oldest:
            self._windows.popleft()


def _check(max_bytes_per_second: int) -> int:
    if max_bytes_per_second < 1:
        raise ValueError(f"a byte-rate quota must be at least 1, not {max_bytes_per_second}")
    return max_bytes_per_second
