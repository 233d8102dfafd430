"""A tiny read-only HTTP server on the broker's event loop (metrics, console).

Both endpoints only ever answer GET (and HEAD): anything else is 405, an
unknown path 404, so neither can be used to change the broker.  Handlers are
plain functions that build their answer from in-memory state in well under a
millisecond, so running them on the event loop keeps the broker's requests
flowing; each HTTP connection serves one request and closes, and a slow or
silent client is cut off after ``READ_TIMEOUT`` seconds.  No framework: the
broker must not grow a web stack for two pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger("samsa.server")

READ_TIMEOUT = 10.0
MAX_HEAD = 16 * 1024
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Response]


def not_found(path: str) -> Response:
    return Response(404, f"no such page: {path}\n".encode())


class HttpEndpoint:
    """Routes exact paths, then path prefixes (longest first), to handlers."""

    def __init__(self, name: str, routes: dict[str, Handler]) -> None:
        self.name = name
        self._exact = {p: h for p, h in routes.items() if not p.endswith("/*")}
        self._prefixes = sorted(
            ((p[:-1], h) for p, h in routes.items() if p.endswith("/*")),
            key=lambda item: -len(item[0]),
        )
        self._server: asyncio.Server | None = None

    async def bind(self, host: str, port: int) -> tuple[str, int]:
        """Take the address without answering yet: a busy port is found before
        the node starts anything else, the first request waits for ``serve``."""
        self._server = await asyncio.start_server(self._serve, host, port, start_serving=False)
        bound = self._server.sockets[0].getsockname()
        return bound[0], bound[1]

    async def serve(self) -> None:
        assert self._server is not None
        await self._server.start_serving()
        bound = self._server.sockets[0].getsockname()
        log.info("%s listening on http://%s:%d/", self.name, bound[0], bound[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def route(self, request: Request) -> Response:
        handler = self._exact.get(request.path)
        if handler is None:
            for prefix, candidate in self._prefixes:
                if request.path.startswith(prefix):
                    handler = candidate
                    break
        if handler is None:
            return not_found(request.path)
        try:
            return handler(request)
        except Exception:
            log.exception("%s: %s failed", self.name, request.path)
            return Response(500, b"internal error\n")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        response, method = self._answer(head)
        body = b"" if method == "HEAD" else response.body
        lines = [
            f"HTTP/1.1 {response.status} {REASONS.get(response.status, '')}",
            f"Content-Type: {response.content_type}",
            f"Content-Length: {len(response.body)}",
            "Cache-Control: no-store",
            "X-Content-Type-Options: nosniff",
            "Connection: close",
            *(f"{k}: {v}" for k, v in response.headers.items()),
        ]
        with contextlib.suppress(OSError):
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await writer.drain()
        writer.close()

    def _answer(self, head: bytes) -> tuple[Response, str]:
        if len(head) > MAX_HEAD:
            return Response(400, b"request head too large\n"), "GET"
        try:
            method, target, _version = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        except ValueError:
            return Response(400, b"malformed request line\n"), "GET"
        if method not in ("GET", "HEAD"):
            allow = {"Allow": "GET, HEAD"}
            return Response(405, b"read-only: only GET and HEAD\n", headers=allow), method
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        return self.route(Request(method, unquote(parts.path), query)), method
