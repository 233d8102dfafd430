"""Incremental fetch sessions (KIP-227), the broker's side: Kafka's FetchSession and FetchSessionCache.

A consumer or follower that fetches the same partitions over and over need
not name them all in every request, nor hear about the idle ones in every
response.  A full request (epoch 0) opens a session: the broker remembers its
partitions with the fetch offsets asked for and the high watermark and log
start it last answered.  Later requests (epoch 1, 2, ...) carry only the
partitions whose fetch parameters changed and the ones to forget; the answer
carries only the partitions with records, a changed high watermark or log
start, an error or a divergence.  An idle follower of thousands of partitions
then sends and receives a few dozen bytes per fetch.

Reading only what changed (session_watch): given the broker's partitions
(``SessionStates``), an incremental fetch reads the partitions it names and
those its session's watch marks dirty -- changed since the session last
read them, or not read to their end then -- plus, every ``FULL_CHECK_MS``,
those whose ``ReadState`` differs from the one last read; its long poll parks
once for the whole session.  An idle session then costs O(changed) per fetch,
not O(partitions).  Without ``states`` (unit tests) every fetch reads every
partition of the session, as Kafka does.

Sans-I/O: the handler reads the partitions a context lists and hands the
responses back to ``finish``; time comes in as ``now_ms``.

The cache holds ``max.incremental.fetch.session.cache.slots`` sessions.  When
full, a new session takes the slot of one unused for ``eviction_ms``, or else
of the least valuable one old enough to evict -- consumer sessions before
follower ones, smaller before larger -- if the newcomer is worth at least as
much; otherwise the fetch is answered without a session (session id 0) and
the client keeps sending full requests.  Zero slots turns sessions off.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from samsa.errors import ErrorCode
from samsa.replication.fetch_waiter import FetchWaiter
from samsa.replication.session_watch import ReadState, SessionWatch

__all__ = ["FetchContext", "FetchSession", "FetchSessionCache", "SessionStates"]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NO_SESSION = 0
EVICTION_MS = 120_000
"""Kafka's minimum age before a session may lose its slot to another."""
MAX_EPOCH = 0x7FFFFFFF
FULL_CHECK_MS = 10_000
"""How often a session compares every partition's ReadState (the backstop for
changes no hook reports: retention moving a log start, a new leader epoch on
the same leader)."""

PartitionKey = tuple[str, int]


class SessionStates(Protocol):
    """The broker's partitions as sessions see them (replication.session_partitions)."""

    def read_state(self, key: PartitionKey, *, consumer: bool) -> Hashable | None: ...
    def watch(self, keys: Iterable[PartitionKey], watch: SessionWatch) -> None: ...
    def unwatch(self, keys: Iterable[PartitionKey], watch: SessionWatch) -> None: ...
    def release(self, keys: Collection[PartitionKey], watch: SessionWatch) -> None: ...
    def park(self, watch: SessionWatch, waiter: FetchWaiter) -> None: ...
    def unpark(self, watch: SessionWatch, waiter: FetchWaiter) -> None: ...


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: wraps to 1, never to 0 (which opens a session)."""
    return 1 if epoch >= MAX_EPOCH else epoch + 1


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


class FetchContext:
    """What one Fetch request reads and how its response is shaped.

    ``topics`` is what to read first: the request's own partitions for a
    full fetch; for an incremental one, every partition of the session, or
    with ``states`` only those named or dirty.  ``reread_topics`` is what to
    read after a long poll.  ``finish`` turns the read into the response's
    session id and partitions."""

    def __init__(
        self,
        cache: FetchSessionCache,
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
                if not _settled(cached.request, p, state, consumer, self._read_committed):
                    dirty.add(key)


def _settled(
    request: dict[str, Any],
    response: dict[str, Any],
    state: Hashable | None,
    consumer: bool,
    read_committed: bool,
) -> bool:
    """Whether reading the partition again answers the same until its ReadState
    changes: nothing but offsets was answered and the read reached the end of
    what this reader may read (a read cut short by the byte budget did not)."""
    if not isinstance(state, ReadState) or response.get("error_code") or response.get("records"):
        return False
    diverging = response.get("diverging_epoch")
    if diverging is not None and diverging.get("epoch", -1) >= 0:
        return False
    offset = request["fetch_offset"]
    if not consumer:
        return bool(offset == state.log_end_offset)
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


class FetchSessionCache:
    """The broker's sessions, at most ``max_slots`` of them."""

    def __init__(
        self,
        max_slots: int = 1000,
        *,
        eviction_ms: int = EVICTION_MS,
        rng: random.Random | None = None,
        states: SessionStates | None = None,
    ) -> None:
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self.states = states
        self._rng = rng or random.Random()
        self._sessions: dict[int, FetchSession] = {}
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._released(session)
        return session

    def _released(self, session: FetchSession) -> None:
        if self.states is not None:
            self.states.release(session.partitions.keys(), session.watch)

    def new_context(
        self, req: dict[str, Any], now_ms: int, *, privileged: bool, replica_id: int = -1
    ) -> FetchContext | ErrorCode:
        """Kafka's ``FetchManager.newContext``: the context for a Fetch request, or
        the session error to answer it with (FETCH_SESSION_ID_NOT_FOUND,
        INVALID_FETCH_SESSION_EPOCH)."""
        session_id = req.get("session_id", NO_SESSION)
        epoch = req.get("session_epoch", FINAL_EPOCH)
        topics = req["topics"]
        read_committed = req.get("isolation_level", 0) == 1
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            # A full fetch closes the session it names.
            if session_id != NO_SESSION:
                self.remove(session_id)
            create = epoch == INITIAL_EPOCH and self.max_slots > 0
            return FetchContext(
                self,
                topics,
                create=create,
                privileged=privileged,
                read_committed=read_committed,
                replica_id=replica_id,
            )
        session = self._sessions.get(session_id)
        if session is None:
            return ErrorCode.FETCH_SESSION_ID_NOT_FOUND
        if session.epoch != epoch:
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH
        named = self._update(session, req)
        session.epoch = next_epoch(epoch)
        session.last_used_ms = now_ms
        if self.states is None:
            return FetchContext(self, session.topics(), session=session, privileged=privileged)
        watch = session.watch
        watch.proven_ms = now_ms
        read = named | watch.take_dirty() | self._full_check(session, now_ms)
        return FetchContext(
            self,
            session.topics(read),
            session=session,
            privileged=privileged,
            read_committed=read_committed,
            read=read,
        )

    def _update(self, session: FetchSession, req: dict[str, Any]) -> set[PartitionKey]:
        """Apply an incremental request's named and forgotten partitions; the named ones."""
        partitions = session.partitions
        named: set[PartitionKey] = set()
        added: list[PartitionKey] = []
        for topic in req["topics"]:
            name = topic["topic"]
            for preq in topic["partitions"]:
                # Named again: answered in any case (a fresh entry knows no high
                # watermark), so a client whose last answer for it was dropped --
                # a follower whose partition changed while the fetch was out --
                # hears the high watermark again.
                key = (name, preq["partition"])
                old = partitions.get(key)
                cached = CachedPartition(preq)
                if old is None:
                    session.place_last(cached)
                    added.append(key)
                else:
                    cached.order = old.order
                partitions[key] = cached
                named.add(key)
        forgotten: list[PartitionKey] = []
        for topic in req.get("forgotten_topics_data") or ():
            name = topic["topic"]
            for index in topic["partitions"]:
                if partitions.pop((name, index), None) is not None:
                    forgotten.append((name, index))
        if self.states is not None:
            self.states.watch(added, session.watch)
            self.states.unwatch(forgotten, session.watch)
        return named

    def _full_check(self, session: FetchSession, now_ms: int) -> set[PartitionKey]:
        """Every FULL_CHECK_MS, the partitions whose ReadState moved unnoticed."""
        states = self.states
        if states is None or now_ms - session.checked_ms < FULL_CHECK_MS:
            return set()
        session.checked_ms = now_ms
        consumer = not session.privileged
        return {
            key
            for key, cached in session.partitions.items()
            if states.read_state(key, consumer=consumer) != cached.state
        }

    def create(
        self,
        now_ms: int,
        privileged: bool,
        partitions: dict[PartitionKey, CachedPartition],
        *,
        replica_id: int = -1,
    ) -> int:
        """A new session's id, or NO_SESSION when no slot can be had."""
        if len(self._sessions) >= self.max_slots and not self._evict_one(
            privileged, len(partitions), now_ms
        ):
            return NO_SESSION
        session_id = self._new_id()
        watch = SessionWatch(replica_id)
        watch.proven_ms = now_ms
        self._sessions[session_id] = FetchSession(
            session_id,
            privileged,
            now_ms,
            now_ms,
            partitions=partitions,
            watch=watch,
            checked_ms=now_ms,
            next_order=len(partitions),
        )
        if self.states is not None:
            self.states.watch(partitions.keys(), watch)
        return session_id

    def _evict_one(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Kafka's ``tryEvict``: a stale session first, else the least valuable one
        old enough to evict, if the newcomer is worth at least as much."""
        if not self._sessions:
            return False
        stalest = min(self._sessions.values(), key=lambda s: s.last_used_ms)
        if now_ms - stalest.last_used_ms > self.eviction_ms:
            return self._evict(stalest)
        old_enough = [
            s
            for s in self._sessions.values()
            if now_ms - s.creation_ms > self.eviction_ms or (privileged and not s.privileged)
        ]
        if not old_enough:
            return False
        cheapest = min(old_enough, key=FetchSession.value)
        if (privileged, size, 0) < cheapest.value():
            return False
        return self._evict(cheapest)

    def _evict(self, session: FetchSession) -> bool:
        del self._sessions[session.id]
        self._released(session)
        self.evictions += 1
        return True

    def _new_id(self) -> int:
        while True:
            candidate = self._rng.randint(1, MAX_EPOCH)
            if candidate not in self._sessions:
                return candidate
