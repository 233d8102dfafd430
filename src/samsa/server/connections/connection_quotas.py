"""Connection limits as Kafka's ConnectionQuotas applies them.

* ``max.connections.per.ip`` (with ``max.connections.per.ip.overrides``,
  ``host:count`` pairs): one count per client address across all of a node's
  listeners.  A connection over it is closed as soon as it is accepted, as
  Kafka's processor closes it (TooManyConnectionsException), with a log line.
* ``max.connections`` (broker-wide) and ``listener.name.<l>.max.connections``:
  over either, a new connection *waits* -- it is accepted but nothing is read
  from it -- until a connection closes, as Kafka's acceptor waits for a slot
  before accepting.  The inter-broker listener does not count toward the
  broker-wide limit (Kafka protects it so replication never starves).  At most
  ``MAX_WAITING`` connections wait (the listen backlog's size); more are closed.

Limits are read on every accept, so a dynamic change applies to the next
connection; the ones already open are never closed by a lowered limit.  Owned
by the node's event loop.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import Any

log = logging.getLogger("samsa.server")

MAX_WAITING = 512


class Admission(Enum):
    ACCEPT = "accept"
    REFUSE = "refuse"
    WAIT = "wait"


def parse_overrides(text: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count`` pairs, comma separated."""
    overrides = {}
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, sep, count = entry.rpartition(":")
        if not sep or not host:
            raise ValueError(f"expected host:count, got {entry!r}")
        overrides[host.strip()] = int(count)
    return overrides


class ConnectionQuotas:
    """Counts open connections by address and by listener."""

    def __init__(
        self, setting: Callable[[str], Any], listener_limits: dict[str, int] | None = None
    ) -> None:
        """``setting`` reads a current broker setting (dynamic ones included);
        ``listener_limits`` holds ``listener.name.<l>.max.connections`` by listener."""
        self._setting = setting
        self._listener_limits = {k.upper(): v for k, v in (listener_limits or {}).items()}
        self.protected_listener = ""
        """The inter-broker listener: not counted toward ``max.connections``."""
        self._per_ip: dict[str, int] = {}
        self._per_listener: dict[str, int] = {}
        self._total = 0
        self._waiting: deque[tuple[str, str, Callable[[bool], None]]] = deque()
        self._overrides_text = ""
        self._overrides: dict[str, int] = {}

    def _max_for(self, address: str) -> int:
        text = str(self._setting("max.connections.per.ip.overrides") or "")
        if text != self._overrides_text:
            try:
                self._overrides = parse_overrides(text)
            except ValueError as exc:
                log.error("max.connections.per.ip.overrides ignored: %s", exc)
                self._overrides = {}
            self._overrides_text = text
        limit = self._overrides.get(address)
        return int(self._setting("max.connections.per.ip")) if limit is None else limit

    def _has_slot(self, listener: str) -> bool:
        key = listener.upper()
        if self._per_listener.get(key, 0) >= self._listener_limits.get(key, 2**31 - 1):
            return False
        if key == self.protected_listener.upper():
            return True
        return self._total < int(self._setting("max.connections"))

    def admit(self, address: str, listener: str = "") -> bool:
        """Count a new connection from ``address``; False (not counted) over its per-ip limit."""
        count = self._per_ip.get(address, 0)
        limit = self._max_for(address)
        if count >= limit:
            log.info(
                "refusing a connection from %s: it has %d, max.connections.per.ip is %d",
                address,
                count,
                limit,
            )
            return False
        self._per_ip[address] = count + 1
        key = listener.upper()
        self._per_listener[key] = self._per_listener.get(key, 0) + 1
        if key != self.protected_listener.upper():
            self._total += 1
        return True

    def arrive(self, address: str, listener: str, on_admitted: Callable[[bool], None]) -> Admission:
        """A new connection: ACCEPT (counted), REFUSE (per-ip limit) or WAIT; a
        waiting one is told later through ``on_admitted`` (True: counted, go on;
        False: refused, close it)."""
        if not self._has_slot(listener):
            if len(self._waiting) >= MAX_WAITING:
                log.warning("refusing a connection from %s: too many waiting for a slot", address)
                return Admission.REFUSE
            log.info(
                "connection from %s on %s waits: max.connections (or the listener's) reached",
                address,
                listener,
            )
            self._waiting.append((address, listener, on_admitted))
            return Admission.WAIT
        return Admission.ACCEPT if self.admit(address, listener) else Admission.REFUSE

    def leave(self, on_admitted: Callable[[bool], None]) -> None:
        """A waiting connection closed before it got a slot."""
        self._waiting = deque(w for w in self._waiting if w[2] is not on_admitted)

    def release(self, address: str, listener: str = "") -> None:
        count = self._per_ip.get(address, 0) - 1
        if count > 0:
            self._per_ip[address] = count
        else:
            self._per_ip.pop(address, None)
        key = listener.upper()
        self._per_listener[key] = max(0, self._per_listener.get(key, 0) - 1)
        if key != self.protected_listener.upper():
            self._total = max(0, self._total - 1)
        self._admit_waiting()

    def _admit_waiting(self) -> None:
        still: deque[tuple[str, str, Callable[[bool], None]]] = deque()
        while self._waiting:
            address, listener, on_admitted = self._waiting.popleft()
            if self._has_slot(listener):
                on_admitted(self.admit(address, listener))
            else:
                still.append((address, listener, on_admitted))
        self._waiting = still
