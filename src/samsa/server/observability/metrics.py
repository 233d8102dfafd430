"""The broker's own counters, kept cheap enough for the request path.

Handlers and the router add to plain dicts and ints here (one dict update per
partition, a ``bisect`` per request): no locks, no ``prometheus_client``
objects on the hot path.  Everything the broker already knows as state (log
sizes, offsets, purgatory sizes, group lag, cleaner stats) is not counted at
all but read when Prometheus scrapes (metrics_collector.py), so metrics that
nobody scrapes cost nothing.  Only ``BrokerMetrics`` exists when metrics or the
console are enabled; otherwise ``broker.metrics`` is None and every hook is a
single ``is None`` test.

Records out per topic are counted as consumers' positions advance: each
connection's next fetch offset minus the one before.  The broker never decodes
the batches it sends (they go out with sendfile), so this is the exact count of
offsets delivered and moved past, one fetch behind.
"""

from __future__ import annotations

import bisect
import time
import weakref
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip


@dataclass(slots=True)
class RequestStats:
    """Requests of one API and version: count, errors, latency histogram."""

    count: int = 0
    errors: int = 0
    seconds: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))


class BrokerMetrics:
    """Counters since start; the router and handlers call the ``on_*`` hooks."""

    def __init__(self) -> None:
        self.bytes_in: defaultdict[str, int] = defaultdict(int)
        self.records_in: defaultdict[str, int] = defaultdict(int)
        self.bytes_out: defaultdict[str, int] = defaultdict(int)
        self.records_out: defaultdict[str, int] = defaultdict(int)
        self.requests: dict[tuple[int, int], RequestStats] = {}
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.started = time.time()
        # Per connection: the client software it announced, and its fetch positions.
        self._clients: weakref.WeakKeyDictionary[Any, tuple[str, str]] = weakref.WeakKeyDictionary()
        self._positions: weakref.WeakKeyDictionary[Any, dict[tuple[str, int], int]] = (
            weakref.WeakKeyDictionary()
        )

    # -- hooks (hot path) -------------------------------------------------------------

    def on_isr_change(self, before: int, after: int) -> None:
        """An ISR of a partition this broker leads changed size (Kafka's IsrShrinks /
        IsrExpands meters, as counters)."""
        if after < before:
            self.isr_shrinks += 1
        elif after > before:
            self.isr_expands += 1

    def on_request(self, api_key: int, version: int, seconds: float, failed: bool) -> None:
        stats = self.requests.get((api_key, version))
        if stats is None:
            stats = self.requests[(api_key, version)] = RequestStats()
        stats.count += 1
        stats.seconds += seconds
        stats.buckets[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        if failed:
            stats.errors += 1

    def on_produced(self, topic: str, size: int, records: int) -> None:
        self.bytes_in[topic] += size
        self.records_in[topic] += records

    def on_fetch_position(self, connection: Any, topic: str, partition: int, offset: int) -> None:
        """A consumer asked for ``offset``: what it moved past since its last fetch is out."""
        if connection is None:
            return
        positions = self._positions.get(connection)
        if positions is None:
            positions = self._positions[connection] = {}
        key = (topic, partition)
        before = positions.get(key)
        positions[key] = offset
        if before is not None and offset > before:
            self.records_out[topic] += offset - before

    def on_fetched(self, topic: str, size: int) -> None:
        self.bytes_out[topic] += size

    def on_client(self, connection: Any, software: str, version: str) -> None:
        if connection is not None:
            self._clients[connection] = (software or "unknown", version or "unknown")

    # -- reads (scrape time) -----------------------------------------------------------

    def connected_clients(self) -> dict[tuple[str, str], int]:
        """Open connections by announced client software name and version."""
        counts: defaultdict[tuple[str, str], int] = defaultdict(int)
        for connection, client in list(self._clients.items()):
            if not getattr(connection, "closed", False):
                counts[client] += 1
        return dict(counts)

    def totals(self) -> dict[str, int]:
        """Sums over topics, for the console's rate chart."""
        return {
            "records_in": sum(self.records_in.values()),
            "records_out": sum(self.records_out.values()),
            "bytes_in": sum(self.bytes_in.values()),
            "bytes_out": sum(self.bytes_out.values()),
        }
