"""How one Fetch request uses its fetch session: what to read, what to answer.

A full request reads what it names and may open a session; an incremental one
reads the partitions it names and, given the broker's partitions, only those
its session's watch marks dirty (see fetch_sessions.py).  ``finish`` keeps
the answer to the partitions the client must hear about and remembers, per
partition read, whether reading it again could answer anything new before it
changes.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import Any, Protocol

from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.session_watch import ReadState
from samsa.server.fetch_sessions.session import (
    CachedPartition,
    FetchSession,
    PartitionKey,
    SessionStates,
)

__all__ = ["NO_SESSION", "FetchContext", "SessionSlots"]

NO_SESSION = 0


class SessionSlots(Protocol):
    """What a context needs of the session cache (``FetchSessionCache``), named
    here so the cache, which makes contexts, is imported by nothing it makes."""

    states: SessionStates | None

    def get(self, session_id: int) -> FetchSession | None: ...

    def create(
        self,
        now_ms: int,
        privileged: bool,
        partitions: dict[PartitionKey, CachedPartition],
        *,
        replica_id: int = -1,
    ) -> int: ...


class FetchContext:
    """What one Fetch request reads and how its response is shaped.

    ``topics`` is what to read first: the request's own partitions for a
    full fetch; for an incremental one, every partition of the session, or
    with ``states`` only those named or dirty.  ``reread_topics`` is what to
    read after a long poll.  ``finish`` turns the read into the response's
    session id and partitions."""

    def __init__(
        self,
        cache: SessionSlots,
        topics: list[dict[str, Any]],
        *,
        session: FetchSession | None = None,
        create: bool = False,
        privileged: bool = False,
        read_committed: bool = False,
        read: set[PartitionKey] | None = None,
        replica_id: int = -1,
    ) -> None:
        self.topics = topics
        self._cache = cache
        self._session = session
        self._create = create
        self._privileged = privileged
        self._read_committed = read_committed
        self._read = read
        self._replica_id = replica_id

    @property
    def incremental(self) -> bool:
        return self._session is not None

    def park(self, waiter: FetchWaiter) -> bool:
        """Park the long poll once for every partition of the session (O(1));
        False when it must park partition by partition instead."""
        states = self._cache.states
        if self._read is None or self._session is None or states is None:
            return False
        states.park(self._session.watch, waiter)
        return True

    def unpark(self, waiter: FetchWaiter) -> None:
        states = self._cache.states
        if self._session is not None and states is not None:
            states.unpark(self._session.watch, waiter)

    def partition_keys(self) -> Collection[PartitionKey]:
        """Every partition this fetch stands for (an incremental one: the session's)."""
        if self._session is not None:
            return self._session.partitions.keys()
        return [(t["topic"], p["partition"]) for t in self.topics for p in t["partitions"]]

    def reread_topics(self) -> list[dict[str, Any]]:
        """What to read after the long poll: what was read first and what changed since."""
        session = self._session
        if session is None or self._read is None:
            return self.topics
        self._read |= session.watch.take_dirty()
        return session.topics(self._read)

    def finish(
        self, responses: list[dict[str, Any]], now_ms: int
    ) -> tuple[int, list[dict[str, Any]]]:
        """The response's session id and topics."""
        session = self._session
        if session is not None:
            self._settle(session, responses)
            return session.id, _changed_only(session, responses)
        if not self._create:
            return NO_SESSION, responses
        partitions: dict[PartitionKey, CachedPartition] = {}
        requests = {(t["topic"], p["partition"]): p for t in self.topics for p in t["partitions"]}
        for topic in responses:
            name = topic["topic"]
            for p in topic["partitions"]:
                key = (name, p["partition_index"])
                cached = CachedPartition(requests[key], order=len(partitions))
                cached.must_answer(p)
                partitions[key] = cached
        session_id = self._cache.create(
            now_ms, self._privileged, partitions, replica_id=self._replica_id
        )
        created = self._cache.get(session_id)
        if created is not None:
            self._settle(created, responses)
        return session_id, responses

    def _settle(self, session: FetchSession, responses: list[dict[str, Any]]) -> None:
        """Remember each read partition's ReadState; the ones a new read could
        answer differently even if nothing changes stay dirty."""
        states = self._cache.states
        if states is None:
            return
        consumer = not self._privileged
        reader = -1 if consumer else session.watch.replica_id
        partitions = session.partitions
        dirty = session.watch.dirty
        for topic in responses:
            name = topic["topic"]
            for p in topic["partitions"]:
                key = (name, p["partition_index"])
                cached = partitions.get(key)
                if cached is None:
                    continue
                state = states.read_state(key, consumer=consumer)
                cached.state = state
                if not _settled(cached.request, p, state, reader, self._read_committed):
                    dirty.add(key)


def _settled(
    request: dict[str, Any],
    response: dict[str, Any],
    state: Hashable | None,
    reader: int,
    read_committed: bool,
) -> bool:
    """Whether reading the partition again answers the same until its ReadState
    changes: nothing but offsets was answered and the read reached the end of
    what this reader (a follower's id, or -1 for a consumer) may read (a read
    cut short by the byte budget did not).  A follower outside the ISR is not
    settled: each of its reads may expand the ISR (Kafka retries on every
    fetch, e.g. after an ISR change in flight held the expansion back)."""
    if not isinstance(state, ReadState) or response.get("error_code") or response.get("records"):
        return False
    diverging = response.get("diverging_epoch")
    if diverging is not None and diverging.get("epoch", -1) >= 0:
        return False
    offset = request["fetch_offset"]
    if reader >= 0:
        return bool(offset == state.log_end_offset and reader in state.in_sync_replicas)
    limit = state.last_stable_offset if read_committed else state.high_watermark
    return bool(offset >= limit)


def _changed_only(session: FetchSession, responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the partitions the client must hear about; the ones with records move
    to the end of the session, so a size-limited response does not starve the
    partitions behind them."""
    kept: list[dict[str, Any]] = []
    moved: list[PartitionKey] = []
    cached_partitions = session.partitions
    for topic in responses:
        name = topic["topic"]
        parts = []
        for p in topic["partitions"]:
            key = (name, p["partition_index"])
            cached = cached_partitions.get(key)
            if cached is None or not cached.must_answer(p):
                continue
            parts.append(p)
            if p.get("records"):
                moved.append(key)
        if parts:
            kept.append({"topic": name, "partitions": parts})
    for key in moved:
        cached = cached_partitions.pop(key)
        session.place_last(cached)
        cached_partitions[key] = cached
    return kept
