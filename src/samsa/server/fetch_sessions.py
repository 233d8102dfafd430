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
from dataclasses import dataclass, field
from typing import Any

from samsa.errors import ErrorCode

__all__ = ["FetchContext", "FetchSession", "FetchSessionCache"]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NO_SESSION = 0
EVICTION_MS = 120_000
"""Kafka's minimum age before a session may lose its slot to another."""
MAX_EPOCH = 0x7FFFFFFF

PartitionKey = tuple[str, int]


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: wraps to 1, never to 0 (which opens a session)."""
    return 1 if epoch >= MAX_EPOCH else epoch + 1


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: what was last asked and last answered."""

    request: dict[str, Any]
    high_watermark: int = -1
    log_start_offset: int = -1

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

    def value(self) -> tuple[bool, int, int]:
        """Kafka's EvictableKey: which session is worth keeping (larger is worth more)."""
        return (self.privileged, len(self.partitions), self.id)

    def topics(self) -> list[dict[str, Any]]:
        """The session's partitions as a Fetch request's ``topics``."""
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, _), cached in self.partitions.items():
            by_topic.setdefault(topic, []).append(cached.request)
        return [{"topic": t, "partitions": p} for t, p in by_topic.items()]


class FetchContext:
    """What one Fetch request reads and how its response is shaped.

    ``topics`` is what to read: the request's own partitions for a full
    fetch, every partition of the session for an incremental one.
    ``finish`` turns the read into the response's session id and
    partitions."""

    def __init__(
        self,
        cache: FetchSessionCache,
        topics: list[dict[str, Any]],
        *,
        session: FetchSession | None = None,
        create: bool = False,
        privileged: bool = False,
    ) -> None:
        self.topics = topics
        self._cache = cache
        self._session = session
        self._create = create
        self._privileged = privileged

    @property
    def incremental(self) -> bool:
        return self._session is not None

    def finish(
        self, responses: list[dict[str, Any]], now_ms: int
    ) -> tuple[int, list[dict[str, Any]]]:
        """The response's session id and topics."""
        session = self._session
        if session is not None:
            return session.id, _changed_only(session, responses)
        if not self._create:
            return NO_SESSION, responses
        partitions: dict[PartitionKey, CachedPartition] = {}
        requests = {(t["topic"], p["partition"]): p for t in self.topics for p in t["partitions"]}
        for topic in responses:
            name = topic["topic"]
            for p in topic["partitions"]:
                key = (name, p["partition_index"])
                cached = CachedPartition(requests[key])
                cached.must_answer(p)
                partitions[key] = cached
        return self._cache.create(now_ms, self._privileged, partitions), responses


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
        cached_partitions[key] = cached_partitions.pop(key)
    return kept


class FetchSessionCache:
    """The broker's sessions, at most ``max_slots`` of them."""

    def __init__(
        self,
        max_slots: int = 1000,
        *,
        eviction_ms: int = EVICTION_MS,
        rng: random.Random | None = None,
    ) -> None:
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self._rng = rng or random.Random()
        self._sessions: dict[int, FetchSession] = {}
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        return self._sessions.pop(session_id, None)

    def new_context(
        self, req: dict[str, Any], now_ms: int, *, privileged: bool
    ) -> FetchContext | ErrorCode:
        """Kafka's ``FetchManager.newContext``: the context for a Fetch request, or
        the session error to answer it with (FETCH_SESSION_ID_NOT_FOUND,
        INVALID_FETCH_SESSION_EPOCH)."""
        session_id = req.get("session_id", NO_SESSION)
        epoch = req.get("session_epoch", FINAL_EPOCH)
        topics = req["topics"]
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            # A full fetch closes the session it names.
            if session_id != NO_SESSION:
                self.remove(session_id)
            create = epoch == INITIAL_EPOCH and self.max_slots > 0
            return FetchContext(self, topics, create=create, privileged=privileged)
        session = self._sessions.get(session_id)
        if session is None:
            return ErrorCode.FETCH_SESSION_ID_NOT_FOUND
        if session.epoch != epoch:
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH
        partitions = session.partitions
        for topic in topics:
            name = topic["topic"]
            for preq in topic["partitions"]:
                # Named again: answered in any case (a fresh entry knows no high
                # watermark), so a client whose last answer for it was dropped --
                # a follower whose partition changed while the fetch was out --
                # hears the high watermark again.
                partitions[(name, preq["partition"])] = CachedPartition(preq)
        for forgotten in req.get("forgotten_topics_data") or ():
            name = forgotten["topic"]
            for index in forgotten["partitions"]:
                partitions.pop((name, index), None)
        session.epoch = next_epoch(epoch)
        session.last_used_ms = now_ms
        return FetchContext(self, session.topics(), session=session)

    def create(
        self, now_ms: int, privileged: bool, partitions: dict[PartitionKey, CachedPartition]
    ) -> int:
        """A new session's id, or NO_SESSION when no slot can be had."""
        if len(self._sessions) >= self.max_slots and not self._evict_one(
            privileged, len(partitions), now_ms
        ):
            return NO_SESSION
        session_id = self._new_id()
        self._sessions[session_id] = FetchSession(
            session_id, privileged, now_ms, now_ms, partitions=partitions
        )
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
        self.evictions += 1
        return True

    def _new_id(self) -> int:
        while True:
            candidate = self._rng.randint(1, MAX_EPOCH)
            if candidate not in self._sessions:
                return candidate
