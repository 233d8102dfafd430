"""One broker-side fetch session (KIP-227): what it remembers of each partition.

The cache of sessions and how requests use them are in fetch_sessions.py;
``SessionStates`` is what a session needs of the broker's partitions to read
only what changed (see replication/session_watch.py).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.session_watch import SessionWatch

__all__ = ["CachedPartition", "FetchSession", "PartitionKey", "SessionStates"]

PartitionKey = tuple[str, int]


class SessionStates(Protocol):
    """The broker's partitions as sessions see them (replication.session_partitions)."""

    def read_state(self, key: PartitionKey, *, consumer: bool) -> Hashable | None: ...
    def watch(self, keys: Iterable[PartitionKey], watch: SessionWatch) -> None: ...
    def unwatch(self, keys: Iterable[PartitionKey], watch: SessionWatch) -> None: ...
    def release(self, keys: Collection[PartitionKey], watch: SessionWatch) -> None: ...
    def park(self, watch: SessionWatch, waiter: FetchWaiter) -> None: ...
    def unpark(self, watch: SessionWatch, waiter: FetchWaiter) -> None: ...


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: what was last asked and last answered."""

    request: dict[str, Any]
    high_watermark: int = -1
    log_start_offset: int = -1
    order: int = 0
    """Read order: partitions that answered records go behind the others."""
    state: Hashable | None = None
    """The partition's ReadState when last read."""

    def must_answer(self, response: dict[str, Any]) -> bool:
        """Kafka's ``maybeUpdateResponseData``: whether the partition goes into an
        incremental response, remembering what the client is now told."""
        answer = bool(response.get("records"))
        high_watermark = response.get("high_watermark", -1)
        if high_watermark != self.high_watermark:
            self.high_watermark = high_watermark
            answer = True
        log_start = response.get("log_start_offset", -1)
        if log_start != self.log_start_offset:
            self.log_start_offset = log_start
            answer = True
        if response.get("error_code", 0):
            # Forget the high watermark so the partition is answered again
            # once the error has gone.
            self.high_watermark = -1
            answer = True
        diverging = response.get("diverging_epoch")
        if diverging is not None and diverging.get("epoch", -1) >= 0:
            answer = True
        if response.get("preferred_read_replica", -1) >= 0:
            answer = True
        return answer


@dataclass(slots=True)
class FetchSession:
    id: int
    privileged: bool
    creation_ms: int
    last_used_ms: int
    epoch: int = 1
    partitions: dict[PartitionKey, CachedPartition] = field(default_factory=dict)
    watch: SessionWatch = field(default_factory=SessionWatch)
    checked_ms: int = 0
    check_position: int | None = None
    """Where the full check under way goes on at the next fetch (None: none is)."""
    next_order: int = 0

    def place_last(self, cached: CachedPartition) -> None:
        cached.order = self.next_order
        self.next_order += 1

    def value(self) -> tuple[bool, int, int]:
        """Kafka's EvictableKey: which session is worth keeping (larger is worth more)."""
        return (self.privileged, len(self.partitions), self.id)

    def topics(self, keys: Iterable[PartitionKey] | None = None) -> list[dict[str, Any]]:
        """The session's partitions (or those of ``keys`` it holds, in read order)
        as a Fetch request's ``topics``."""
        partitions = self.partitions
        if keys is None:
            chosen = list(partitions.items())
        else:
            held = [(key, partitions[key]) for key in keys if key in partitions]
            chosen = sorted(held, key=lambda item: item[1].order)
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, _), cached in chosen:
            by_topic.setdefault(topic, []).append(cached.request)
        return [{"topic": t, "partitions": p} for t, p in by_topic.items()]
