"""Connections per client address: ``max.connections.per.ip`` (Kafka's ConnectionQuotas).

One count per IP address across all of a node's listeners.  A connection that
would exceed the limit is closed as soon as it is accepted, as Kafka's acceptor
closes it (TooManyConnectionsException); the ones already open are not
touched when the limit is lowered.  The limit is read on every accept, so a
dynamic change applies to the next connection without a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("samsa.server")


class ConnectionQuotas:
    """Counts open connections by address; owned by the node's event loop."""

    def __init__(self, max_per_ip: Callable[[], int]) -> None:
        self._max_per_ip = max_per_ip
        self._counts: dict[str, int] = {}

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) over the limit."""
        count = self._counts.get(address, 0)
        limit = self._max_per_ip()
        if count >= limit:
            log.info(
                "refusing a connection from %s: it has %d, max.connections.per.ip is %d",
                address,
                count,
                limit,
            )
            return False
        self._counts[address] = count + 1
        return True

    def release(self, address: str) -> None:
        count = self._counts.get(address, 0) - 1
        if count > 0:
            self._counts[address] = count
        else:
            self._counts.pop(address, None)
