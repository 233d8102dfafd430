"""The broker's socket server: size-prefixed framing and in-order handling.

Kafka clients pipeline requests on one connection and expect responses in the
same order, so each connection handles one request at a time: requests that can
be answered at once (most produce and metadata calls) are answered inline from
``buffer_updated`` with no task switch; a request that must wait (a long-poll
fetch, a group join) parks the connection's queue until its response is written.

A malformed or oversized frame closes only that connection, with a log line;
every other connection carries on.  How a response's bytes and file regions
leave (sendfile) is ``response_writer``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import Any, cast

from samsa.security.principal import ANONYMOUS, KafkaPrincipal
from samsa.server.connections import eager
from samsa.server.connections.connection_quotas import Admission, ConnectionQuotas
from samsa.server.connections.framing import FrameReader, FrameTooLarge
from samsa.server.connections.response_writer import write_response

log = logging.getLogger("samsa.server")


# A handler returns output chunks, None (no response, e.g. acks=0), or an awaitable of either.
Result = list[Any] | None
Dispatch = Callable[[bytes | bytearray, "Connection"], "Result | Awaitable[Result]"]


class CloseConnection(Exception):
    """Raised by a handler when the connection must be closed (Kafka's behaviour on bad input)."""


class Connection(asyncio.BufferedProtocol):
    """One client connection (read with ``recv_into``, see ``framing``)."""

    def __init__(self, server: SocketServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        self.host = ""
        """The peer's address without the port, as ACLs name hosts."""
        self._frames = FrameReader(server.unauthenticated_request_size)
        self.principal: KafkaPrincipal = ANONYMOUS
        """Who is on the other end (a TLS client certificate, a SASL login)."""
        self._named: KafkaPrincipal | None = None
        self._principal_name = ""
        self.authenticated = not server.requires_authentication
        self.sasl: Any = None
        """The SASL exchange in progress on a SASL listener (see ``sasl_gate``)."""
        self._queue: deque[bytes | bytearray] = deque()
        self._busy = False
        self._pending_task: asyncio.Future[None] | None = None
        self._closed = False
        self._reading_paused = False
        self._muted: asyncio.TimerHandle | None = None
        self._can_write = asyncio.Event()
        self._can_write.set()
        self.last_active = time.monotonic()
        self._counted_address: str | None = None
        self._waiting_for_slot = False

    @property
    def closed(self) -> bool:
        return self._closed

    # --------------------------------------------------------------- asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.host = peer[0] if peer else ""
        quotas = self.server.quotas
        if quotas is not None and peer:
            admission = quotas.arrive(peer[0], self.server.listener_name, self._slot_granted)
            if admission is Admission.REFUSE:
                self._closed = True
                transport.close()
                return
            if admission is Admission.WAIT:
                # Accepted, but nothing is read until a connection slot frees.
                self._waiting_for_slot = True
                transport.pause_reading()
                self._reading_paused = True
            else:
                self._counted_address = peer[0]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.set_write_buffer_limits(high=4 * 1024 * 1024)
        self.server.connections.add(self)

    def _slot_granted(self, admitted: bool) -> None:
        """A waiting connection got its slot (or was refused by its per-ip limit)."""
        self._waiting_for_slot = False
        transport = self.transport
        if transport is None or self._closed:
            return
        if not admitted:
            self._closed = True
            transport.close()
            return
        self._counted_address = transport.get_extra_info("peername")[0]
        self._reading_paused = False
        transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._waiting_for_slot and self.server.quotas is not None:
            self.server.quotas.leave(self._slot_granted)
            self._waiting_for_slot = False
        if self._muted is not None:
            self._muted.cancel()
            self._muted = None
        if self._counted_address is not None and self.server.quotas is not None:
            self.server.quotas.release(self._counted_address, self.server.listener_name)
            self._counted_address = None
        self.server.connections.discard(self)
        self._can_write.set()

    def pause_writing(self) -> None:
        self._can_write.clear()

    def resume_writing(self) -> None:
        self._can_write.set()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._frames.buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active = time.monotonic()
        try:
            frames = self._frames.received(nbytes)
        except FrameTooLarge as exc:
            self.close(str(exc))
            return
        self.accept(frames)

    @property
    def principal_name(self) -> str:
        """``str(self.principal)``, formatted once: ACL checks ask on every request."""
        principal = self.principal
        if principal is not self._named:
            self._named = principal
            self._principal_name = str(principal)
        return self._principal_name

    def authenticated_as(self, principal: KafkaPrincipal) -> None:
        """SASL succeeded: requests of any size and any API from now on."""
        self.principal = principal
        self.authenticated = True
        self._frames.set_limit(self.server.max_request_size)

    def accept(self, frames: list[bytes | bytearray]) -> None:
        """Queue whole request frames and answer what can be answered now."""
        self._queue.extend(frames)
        self._process()
        # Backpressure: stop reading while many requests wait behind a slow one.
        if len(self._queue) > 64 and not self._reading_paused and self.transport is not None:
            self.transport.pause_reading()
            self._reading_paused = True

    def mute(self, throttle_ms: int) -> None:
        """Read and handle nothing more from this client for ``throttle_ms`` (KIP-219:
        the throttled response goes out first, then the channel is muted)."""
        if self._closed or self.transport is None:
            return
        loop = asyncio.get_running_loop()
        if self._muted is not None:
            if self._muted.when() >= loop.time() + throttle_ms / 1000:
                return
            self._muted.cancel()
        self._muted = loop.call_later(throttle_ms / 1000, self._unmute)
        if not self._reading_paused:
            self.transport.pause_reading()
            self._reading_paused = True

    def _unmute(self) -> None:
        self._muted = None
        self.last_active = time.monotonic()
        self._process()

    # --------------------------------------------------------------- processing
    def _process(self) -> None:
        if self._muted is not None:
            return
        while self._queue and not self._busy and not self._closed and self._muted is None:
            frame = self._queue.popleft()
            try:
                result = self.server.dispatch(frame, self)
                if isinstance(result, CoroutineType):
                    finished, value = eager.start(result)
                    result = value if finished else cast(Awaitable[Any], value)
            except CloseConnection as exc:
                self.close(str(exc))
                return
            except Exception:
                log.exception("unexpected error handling a request from %s; closing it", self.peer)
                self.close("internal error")
                return
            if isinstance(result, list):
                writing = self.write(result)
                if writing is not None:
                    self._busy = True
                    self._pending_task = asyncio.ensure_future(self._finish(writing, None))
                    return
            elif result is not None:
                self._busy = True
                self._pending_task = asyncio.ensure_future(self._finish(result))
                return
        if (
            self._reading_paused
            and len(self._queue) < 16
            and self.transport is not None
            and self._muted is None
        ):
            self._reading_paused = False
            self.transport.resume_reading()

    async def _finish(self, pending: Awaitable[Any], _unused: None = None) -> None:
        try:
            result = await pending
            if isinstance(result, list):
                writing = self.write(result)
                if writing is not None:
                    await writing
                if not self._can_write.is_set():
                    await self._can_write.wait()
        except CloseConnection as exc:
            self.close(str(exc))
            return
        except Exception:
            log.exception("unexpected error handling a request from %s; closing it", self.peer)
            self.close("internal error")
            return
        finally:
            self._busy = False
        self._process()

    def write(self, chunks: list[Any]) -> Awaitable[None] | None:
        """Write a response (``response_writer``): an awaitable while a file
        region is still being sent zero-copy, else None."""
        return write_response(self, chunks, self.server.use_sendfile)

    def close_after_failed_authentication(self, reason: str) -> None:
        """Kafka's delayed close: log now, hang up after
        ``connection.failed.authentication.delay.ms`` (an attacker pays for
        each try; nothing more is read from the connection meanwhile)."""
        delay = self.server.failed_authentication_delay_ms
        if self._closed or self.transport is None or delay <= 0:
            self.close(reason)
            return
        log.warning("closing connection from %s: %s", self.peer, reason)
        self._closed = True
        self._queue.clear()
        self.transport.pause_reading()
        asyncio.get_running_loop().call_later(delay / 1000, self.transport.close)

    def close(self, reason: str) -> None:
        if not self._closed:
            log.warning("closing connection from %s: %s", self.peer, reason)
            self._closed = True
            self._queue.clear()
            if self.transport is not None:
                self.transport.close()


class SocketServer:
    """Listens on one address and feeds frames to ``dispatch``."""

    def __init__(
        self,
        dispatch: Dispatch,
        *,
        max_request_size: int,
        idle_timeout_ms: int,
        use_sendfile: bool = True,
        quotas: ConnectionQuotas | None = None,
        connection_factory: Callable[[SocketServer], Connection] = Connection,
        requires_authentication: bool = False,
        unauthenticated_request_size: int = 0,
        failed_authentication_delay_ms: int = 0,
        listener_name: str = "",
    ) -> None:
        self.listener_name = listener_name
        self.failed_authentication_delay_ms = failed_authentication_delay_ms
        self.dispatch = dispatch
        self.quotas = quotas
        self.max_request_size = max_request_size
        self.requires_authentication = requires_authentication
        # Kafka's sasl.server.max.receive.size: an unauthenticated peer cannot
        # make the broker allocate a request-sized buffer.
        self.unauthenticated_request_size = max_request_size
        if requires_authentication and unauthenticated_request_size:
            self.unauthenticated_request_size = min(unauthenticated_request_size, max_request_size)
        self._connection_factory = connection_factory
        self.idle_timeout_s = idle_timeout_ms / 1000
        self.connections: set[Connection] = set()
        self.use_sendfile = use_sendfile
        self._server: asyncio.base_events.Server | None = None
        self._reaper: asyncio.Task[None] | None = None

    async def start(self, host: str, port: int) -> tuple[str, int]:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: self._connection_factory(self), host, port, reuse_address=True, backlog=512
        )
        sock = self._server.sockets[0]
        bound_host, bound_port = sock.getsockname()[:2]
        self._reaper = asyncio.ensure_future(self._reap_idle())
        return bound_host, bound_port

    async def _reap_idle(self) -> None:
        interval = max(0.05, min(self.idle_timeout_s / 4, 30.0))
        while True:
            await asyncio.sleep(interval)
            cutoff = time.monotonic() - self.idle_timeout_s
            for conn in list(self.connections):
                if conn.last_active < cutoff and not conn._busy:
                    conn.close("idle longer than connections.max.idle.ms")

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            if conn.transport is not None:
                conn.transport.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
