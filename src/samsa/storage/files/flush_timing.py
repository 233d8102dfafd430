"""How long fsyncs take, for the broker's metrics.

A slow disk shows first as slow fsyncs, so operators want their latency as a
histogram.  Flushes are rare (a rolled segment, ``flush.ms``, shutdown), so a
process-wide recorder with a lock costs nothing that matters; it keeps plain
numbers and knows nothing of Prometheus.
"""

from __future__ import annotations

import bisect
import threading

BUCKETS_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class FlushTimings:
    """A cumulative histogram of fsync durations (seconds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts = [0] * (len(BUCKETS_SECONDS) + 1)  # last: above every bucket
        self.total_seconds = 0.0

    def observe(self, seconds: float) -> None:
        with self._lock:
            self.counts[bisect.bisect_left(BUCKETS_SECONDS, seconds)] += 1
            self.total_seconds += seconds

    def snapshot(self) -> tuple[list[int], float]:
        with self._lock:
            return list(self.counts), self.total_seconds


FLUSH_TIMINGS = FlushTimings()
