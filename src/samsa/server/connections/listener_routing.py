"""Which router answers each listener, and the requests that wait for one.

A node binds its listeners before it can answer clients: their real ports
must be known to the quorum, and the quorum's own RPCs (Vote, the metadata
Fetch...) have to flow while the broker catches up, or it never would.  A
client that connects in that window (a container health check, a
``wait-for-it`` script, librdkafka the instant the port opens) must not be
disconnected, as Kafka does not disconnect it either: its requests wait until
the listener's complete router is installed, then are answered in order.

Invariants:

* A listener is *complete* once its router answers everything it ever will
  (the client APIs on a broker listener, the quorum's on a controller one);
  until then only requests its current router handles are answered at once,
  except ApiVersions, whose answer a client keeps for the whole connection
  (answered early, it would list the quorum's APIs only).
* A held request keeps its connection busy, so the connection's later
  requests queue behind it (and reading pauses past the connection's own
  bound): responses stay in request order.
* Holding is bounded: at most ``max_held`` requests wait at once, none longer
  than ``hold_limit_ms``; past either bound the connection is closed, as
  before, and the client reconnects later.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from samsa.protocol.api import API_VERSIONS_KEY
from samsa.server.connections.router import Router
from samsa.server.connections.socket_server import CloseConnection, Connection, Dispatch

# Longer than any start we expect (a cluster node waits for a quorum of its
# peers); librdkafka gives up on an ApiVersions answer after 10 s by itself.
HOLD_LIMIT_MS = 30_000
MAX_HELD = 1024


def peek_api_key(frame: bytes | bytearray) -> int:
    return int.from_bytes(frame[0:2], "big", signed=True) if len(frame) >= 2 else -1


class ListenerRouting:
    """The routers of one node's listeners; owned by the node's event loop."""

    def __init__(self, *, hold_limit_ms: int = HOLD_LIMIT_MS, max_held: int = MAX_HELD) -> None:
        self.hold_limit_ms = hold_limit_ms
        self.max_held = max_held
        self._routers: dict[str, Router] = {}
        self._complete: set[str] = set()
        self._changed = asyncio.Event()
        self._held = 0

    def install(self, name: str, router: Router, *, complete: bool) -> None:
        """Answer ``name``'s requests with ``router`` from now on; held requests
        that it (or a complete listener) can answer go on."""
        self._routers[name] = router
        if complete:
            self._complete.add(name)
        else:
            self._complete.discard(name)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def dispatcher(self, name: str) -> Dispatch:
        def dispatch(frame: bytes | bytearray, conn: Connection) -> Any:
            router = self._answering(name, frame)
            if router is None:
                return self._hold(name, frame, conn)
            return router.dispatch(frame, conn)

        return dispatch

    def _answering(self, name: str, frame: bytes | bytearray) -> Router | None:
        """The router that answers ``frame`` now, or None while it must wait."""
        router = self._routers.get(name)
        if router is None or name in self._complete:
            return router
        api_key = peek_api_key(frame)
        return router if api_key != API_VERSIONS_KEY and router.handles(api_key) else None

    async def _hold(self, name: str, frame: bytes | bytearray, conn: Connection) -> Any:
        if self._held >= self.max_held:
            raise CloseConnection(
                f"the node is still starting and {self._held} requests already wait for it"
            )
        self._held += 1
        try:
            router = await self._wait_until(lambda: self._answering(name, frame))
        finally:
            self._held -= 1
        result = router.dispatch(frame, conn)
        return await result if inspect.isawaitable(result) else result

    async def wait_complete(self, name: str) -> Router:
        """``name``'s complete router, once installed (bounded like a held request)."""
        return await self._wait_until(
            lambda: self._routers[name] if name in self._complete else None
        )

    async def _wait_until(self, ready: Callable[[], Router | None]) -> Router:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.hold_limit_ms / 1000
        while True:
            changed = self._changed
            router = ready()
            if router is not None:
                return router
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise CloseConnection(
                    f"the node did not finish starting within {self.hold_limit_ms} ms"
                )
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except TimeoutError:
                pass
