"""Faults in front of a real S3 server: a loopback TCP proxy that can answer errors or stall.

S3Proxy has no switch to answer 5xx, and a paused server (SIGSTOP) only
shows one kind of failure.  ``S3FaultProxy`` sits between a client and the
real server (``samsa.testing.object_store.S3Server``) and forwards bytes
unchanged until told otherwise:

* ``fail_with(503)``: every request gets that status with an S3 error body
  (``SlowDown`` for 503, ``InternalError`` for 500), as a throttling or broken
  store answers; the request never reaches the server.
* ``delay(seconds)``: requests are forwarded after a pause (a slow store).
* ``pass_through()``: back to normal.

Changing the mode closes the connections open at that moment, so a client's
pooled keep-alive connections cannot bypass the new mode; an in-flight request
then fails as on a dropped connection, which is also what a real failing
store does.  The proxy runs on its own thread and event loop; nothing about
the server or the bytes is simulated.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass

__all__ = ["S3FaultProxy"]

_REASONS = {500: ("Internal Server Error", "InternalError"), 503: ("Slow Down", "SlowDown")}


@dataclass(frozen=True)
class _Mode:
    status: int | None = None
    delay_s: float = 0.0


class S3FaultProxy:
    """A proxy on ``<host>:<port>`` in front of ``127.0.0.1:<upstream_port>``.

    ``host`` is loopback unless brokers in network namespaces must reach the
    store: then the root namespace's address on their bridge."""

    def __init__(self, upstream_port: int, host: str = "127.0.0.1") -> None:
        self.upstream_port = upstream_port
        self.host = host
        self.port = 0
        self.failed_requests = 0
        self._mode = _Mode()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> S3FaultProxy:
        self._thread.start()
        self._call(self._start())
        return self

    def fail_with(self, status: int = 503) -> None:
        self._set(_Mode(status=status))

    def delay(self, seconds: float) -> None:
        self._set(_Mode(delay_s=seconds))

    def pass_through(self) -> None:
        self._set(_Mode())

    def close(self) -> None:
        if self._thread.is_alive():
            self._call(self._stop())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> S3FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop's side --------------------------------------------------

    def _call(self, coroutine: object) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)  # type: ignore[arg-type]

    def _set(self, mode: _Mode) -> None:
        async def switch() -> None:
            self._mode = mode
            for writer in list(self._open):
                writer.close()

        self._call(switch())

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._open):
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            mode = self._mode
            if mode.status is not None:
                await self._answer_error(reader, writer, mode.status)
                return
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.upstream_port
            )
            self._open.add(upstream_writer)
            try:
                await asyncio.gather(
                    self._pipe(reader, upstream_writer, mode.delay_s),
                    self._pipe(upstream_reader, writer, 0.0),
                )
            finally:
                self._open.discard(upstream_writer)
                upstream_writer.close()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._open.discard(writer)
            writer.close()

    async def _answer_error(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int
    ) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                await reader.readexactly(int(value.strip()))
        reason, code = _REASONS.get(status, ("Error", "InternalError"))
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
            f"<Message>injected by the test's fault proxy</Message></Error>"
        ).encode()
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        self.failed_requests += 1
        with contextlib.suppress(OSError):
            await writer.drain()

    @staticmethod
    async def _pipe(
        source: asyncio.StreamReader, sink: asyncio.StreamWriter, delay_s: float
    ) -> None:
        try:
            while chunk := await source.read(256 * 1024):
                if delay_s:
                    await asyncio.sleep(delay_s)
                sink.write(chunk)
                await sink.drain()
        finally:
            with contextlib.suppress(OSError):
                sink.close()
