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
from itertools import islice
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.session_watch import SessionWatch
from samsa.server.fetch_sessions.context import NO_SESSION, FetchContext
from samsa.server.fetch_sessions.session import (
    CachedPartition,
    FetchSession,
    PartitionKey,
    SessionStates,
)

__all__ = ["FetchContext", "FetchSession", "FetchSessionCache", "SessionStates"]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
EVICTION_MS = 120_000
"""Kafka's minimum age before a session may lose its slot to another."""
MAX_EPOCH = 0x7FFFFFFF
FULL_CHECK_MS = 10_000
"""How often a session compares every partition's ReadState (the backstop for
changes no hook reports: retention moving a log start, a new leader epoch on
the same leader)."""

FULL_CHECK_STEP = 1000
"""Partitions of a session compared per fetch while a full check is under way."""


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: wraps to 1, never to 0 (which opens a session)."""
    return 1 if epoch >= MAX_EPOCH else epoch + 1


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
        """Every FULL_CHECK_MS, the partitions whose ReadState moved unnoticed:
        ``FULL_CHECK_STEP`` of them per fetch until the pass has been through
        the session.  A follower's session holds thousands of partitions, and
        comparing them all in one fetch held the leader's loop 10-30 ms (over
        100 ms on a loaded machine).  A partition added or forgotten during a
        pass can shift one past the cursor: the next pass sees it."""
        states = self.states
        if states is None:
            return set()
        start = session.check_position
        if start is None:
            if now_ms - session.checked_ms < FULL_CHECK_MS:
                return set()
            session.checked_ms = now_ms
            start = 0
        end = start + FULL_CHECK_STEP
        session.check_position = end if end < len(session.partitions) else None
        consumer = not session.privileged
        return {
            key
            for key, cached in islice(session.partitions.items(), start, end)
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
