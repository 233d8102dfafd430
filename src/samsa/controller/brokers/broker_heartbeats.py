"""Broker sessions and the broker lifecycle decided from heartbeats.

Kafka's ``BrokerHeartbeatManager``.  Heartbeats are frequent and carry no
durable news, so they are kept in memory only, on the active controller: when
each broker last made contact, the metadata offset it has replayed to, and the
offset at which it entered controlled shutdown.  A controller that takes over
starts every registered broker with a fresh session (``touch`` at its first
``poll``), as Kafka's ``activate`` does.

The lifecycle (Kafka's ``BrokerControlState``):

    FENCED --caught up to its registration, no shutdown wanted--> UNFENCED
    UNFENCED --wants shutdown, still leads partitions--> CONTROLLED_SHUTDOWN
    UNFENCED --wants shutdown, leads nothing--> SHUTDOWN_NOW
    CONTROLLED_SHUTDOWN --leads nothing, the others have replayed past its
                          shutdown records--> SHUTDOWN_NOW
    FENCED --wants shutdown--> SHUTDOWN_NOW
    UNFENCED --wants to be fenced--> FENCED

``next_state`` is pure given the session table; the caller turns a change of
state into records.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum

log = logging.getLogger(__name__)


class BrokerControlState(Enum):
    """(fenced, in controlled shutdown, should shut down), as Kafka's enum."""

    FENCED = (True, False, False)
    UNFENCED = (False, False, False)
    CONTROLLED_SHUTDOWN = (False, True, False)
    SHUTDOWN_NOW = (True, False, True)

    @property
    def fenced(self) -> bool:
        return self.value[0]

    @property
    def in_controlled_shutdown(self) -> bool:
        return self.value[1]

    @property
    def should_shut_down(self) -> bool:
        return self.value[2]


@dataclass(slots=True)
class BrokerSession:
    last_contact_ms: int
    metadata_offset: int = -1
    controlled_shutdown_offset: int | None = None
    heard: bool = True
    """False for a session a new controller gave a broker it has not heard from."""


class BrokerHeartbeatManager:
    """In-memory sessions of registered brokers; owned by the active controller."""

    def __init__(self, session_timeout_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.sessions: dict[int, BrokerSession] = {}

    def touch(
        self, broker_id: int, now_ms: int, metadata_offset: int = -1, *, heard: bool = True
    ) -> None:
        """Record contact from ``broker_id`` (``heard`` False: a session given, not earned)."""
        session = self.sessions.get(broker_id)
        if session is None:
            self.sessions[broker_id] = BrokerSession(now_ms, metadata_offset, heard=heard)
        else:
            session.last_contact_ms = now_ms
            session.heard = session.heard or heard
            if metadata_offset >= 0:
                session.metadata_offset = metadata_offset

    def ensure(self, broker_id: int, now_ms: int) -> None:
        """Give a registered broker without a session (a new controller) a fresh one."""
        if broker_id not in self.sessions:
            self.sessions[broker_id] = BrokerSession(now_ms)

    def remove(self, broker_id: int) -> None:
        self.sessions.pop(broker_id, None)

    def has_valid_session(self, broker_id: int, now_ms: int) -> bool:
        session = self.sessions.get(broker_id)
        return session is not None and now_ms - session.last_contact_ms <= self.session_timeout_ms

    def is_heard_alive(self, broker_id: int, now_ms: int) -> bool:
        """A valid session that the broker itself renewed with this controller: proof
        that incarnation runs (a session given at activation proves nothing)."""
        session = self.sessions.get(broker_id)
        return session is not None and session.heard and self.has_valid_session(broker_id, now_ms)

    def is_stale(self, broker_id: int, now_ms: int) -> bool:
        session = self.sessions.get(broker_id)
        return session is not None and now_ms - session.last_contact_ms > self.session_timeout_ms

    def note_controlled_shutdown(self, broker_id: int, offset: int) -> None:
        """Remember the first offset by which ``broker_id``'s shutdown records are committed."""
        session = self.sessions.get(broker_id)
        if session is not None and session.controlled_shutdown_offset is None:
            session.controlled_shutdown_offset = offset

    def lowest_active_offset(self, active_brokers: list[int], excluding: int) -> int | None:
        """The smallest metadata offset other active brokers reported; None if none."""
        offsets = [
            self.sessions[b].metadata_offset
            for b in active_brokers
            if b != excluding and b in self.sessions
        ]
        return min(offsets) if offsets else None

    def next_state(
        self,
        broker_id: int,
        current: BrokerControlState,
        *,
        want_fence: bool,
        want_shut_down: bool,
        metadata_offset: int,
        registration_offset: int,
        has_leaderships: bool,
        lowest_active_offset: int | None,
    ) -> BrokerControlState:
        """Where a heartbeat takes ``broker_id`` from ``current`` (Kafka's
        ``calculateNextBrokerState``)."""
        s = BrokerControlState
        if current is s.FENCED:
            if want_shut_down:
                log.info("fenced broker %d asked to shut down: granted at once", broker_id)
                return s.SHUTDOWN_NOW
            if not want_fence and metadata_offset >= registration_offset:
                log.info(
                    "unfencing broker %d: it has replayed to %d, past its registration at %d",
                    broker_id,
                    metadata_offset,
                    registration_offset,
                )
                return s.UNFENCED
            return s.FENCED
        if current is s.UNFENCED:
            if want_fence:
                return s.SHUTDOWN_NOW if want_shut_down else s.FENCED
            if want_shut_down:
                if has_leaderships:
                    log.info("broker %d starts a controlled shutdown", broker_id)
                    return s.CONTROLLED_SHUTDOWN
                log.info("broker %d leads nothing: shutdown granted at once", broker_id)
                return s.SHUTDOWN_NOW
            return s.UNFENCED
        if current is s.CONTROLLED_SHUTDOWN:
            if has_leaderships:
                return s.CONTROLLED_SHUTDOWN
            session = self.sessions.get(broker_id)
            shutdown_offset = None if session is None else session.controlled_shutdown_offset
            if shutdown_offset is None:
                return s.CONTROLLED_SHUTDOWN
            if lowest_active_offset is None or lowest_active_offset >= shutdown_offset:
                log.info(
                    "broker %d may shut down: the other brokers have replayed past %d",
                    broker_id,
                    shutdown_offset,
                )
                return s.SHUTDOWN_NOW
            return s.CONTROLLED_SHUTDOWN
        return s.SHUTDOWN_NOW
