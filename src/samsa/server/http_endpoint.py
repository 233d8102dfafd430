"""A tiny HTTP server on the broker's event loop (metrics, console).

Routes answer GET (and HEAD); only routes registered as ``post_routes`` (the
console's actions, which check their own permission) take POST with a small
JSON body, anything else is 405 and an unknown path 404.  Handlers build their
answer from in-memory state in about a millisecond, or await one in-process
Kafka API call, so running them on the event loop keeps the broker's requests
flowing.  An HTTP/1.1 GET or HEAD leaves its connection open for the next
request (a console page polls every second, and a new connection each time
cost the broker four times the CPU of the answer itself); a POST, an HTTP/1.0
request, ``Connection: close`` or a malformed request closes it.  A slow or
silent client, or an idle kept-alive connection, is cut off after
``READ_TIMEOUT`` seconds.  A handler refuses
bad input by raising ``HttpError`` (status and one-line message); anything
else it raises is logged and answered 500 without a trace.  ``Server-Timing``
says how long the answer took inside the broker.  No framework: the
broker must not grow a web stack for a few pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger("samsa.server")

READ_TIMEOUT = 10.0
MAX_HEAD = 16 * 1024
MAX_BODY = 64 * 1024
REASONS = {
    200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
    409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type",
    500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: bytes = b""
    content_type: str = ""


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Response | Awaitable[Response]]


class HttpError(Exception):
    """Bad input or a refused request: answered with ``status`` and the message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def not_found(path: str) -> Response:
    return Response(404, f"no such page: {path}\n".encode())


def json_response(value: object, status: int = 200) -> Response:
    return Response(status, json.dumps(value).encode(), "application/json")


class HttpEndpoint:
    """Routes exact paths, then path prefixes (longest first), to handlers."""

    def __init__(
        self,
        name: str,
        routes: dict[str, Handler],
        post_routes: dict[str, Handler] | None = None,
        *,
        json_errors: bool = False,
    ) -> None:
        """``json_errors``: an HttpError is answered ``{"error": message}`` (the
        console's API), else as plain text."""
        self.name = name
        self.json_errors = json_errors
        self._routes = {"GET": _table(routes), "POST": _table(post_routes or {})}
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()

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
            for writer in list(self._connections):
                writer.close()  # idle kept-alive connections: their reads end at once
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def find(self, method: str, path: str) -> Handler | None:
        exact, prefixes = self._routes["POST" if method == "POST" else "GET"]
        handler = exact.get(path)
        if handler is None:
            for prefix, candidate in prefixes:
                if path.startswith(prefix):
                    return candidate
        return handler

    async def route(self, request: Request) -> Response:
        handler = self.find(request.method, request.path)
        if handler is None:
            if request.method == "POST" and self.find("GET", request.path) is not None:
                return _not_allowed("GET, HEAD")
            return not_found(request.path)
        try:
            result = handler(request)
            return await result if inspect.isawaitable(result) else result
        except HttpError as exc:
            if self.json_errors:
                return json_response({"error": exc.message, "status": exc.status}, exc.status)
            return Response(exc.status, f"{exc.message}\n".encode())
        except Exception:
            log.exception("%s: %s failed", self.name, request.path)
            if self.json_errors:
                return json_response({"error": "internal error (see the broker log)"}, 500)
            return Response(500, b"internal error\n")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            keep_alive = True
            while keep_alive:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):  # fmt: skip
                    return
                started = time.perf_counter()
                response, method, keep_alive = await self._answer(head, reader)
                took_ms = (time.perf_counter() - started) * 1000
                body = b"" if method == "HEAD" else response.body
                lines = [
                    f"HTTP/1.1 {response.status} {REASONS.get(response.status, '')}",
                    f"Content-Type: {response.content_type}",
                    f"Content-Length: {len(response.body)}",
                    "Cache-Control: no-store",
                    "X-Content-Type-Options: nosniff",
                    "Connection: keep-alive" if keep_alive else "Connection: close",
                    f"Server-Timing: handler;dur={took_ms:.1f}",
                    *(f"{k}: {v}" for k, v in response.headers.items()),
                ]
                try:
                    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
                    await writer.drain()
                except OSError:
                    return
        finally:
            self._connections.discard(writer)
            writer.close()

    async def _answer(
        self, head: bytes, reader: asyncio.StreamReader
    ) -> tuple[Response, str, bool]:
        """The response, the request's method, and whether the connection may
        serve another request (an HTTP/1.1 GET or HEAD without a body that
        did not ask to close)."""
        if len(head) > MAX_HEAD:
            return Response(400, b"request head too large\n"), "GET", False
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ")
        except ValueError:
            return Response(400, b"malformed request line\n"), "GET", False
        if method not in ("GET", "HEAD", "POST"):
            return _not_allowed("GET, HEAD, POST"), method, False
        parts = urlsplit(target)
        path = unquote(parts.path)
        if method == "POST" and self.find("POST", path) is None:
            if self.find("GET", path) is None:
                return not_found(path), method, False
            return _not_allowed("GET, HEAD"), method, False
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:] if line)
        }
        keep_alive = (
            method != "POST"
            and version == "HTTP/1.1"
            and headers.get("connection", "").lower() != "close"
            and "content-length" not in headers
            and "transfer-encoding" not in headers
        )
        body = b""
        if method == "POST":
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                return Response(400, b"malformed Content-Length\n"), method, False
            if not 0 <= length <= MAX_BODY:
                return Response(413, f"body over {MAX_BODY} bytes\n".encode()), method, False
            try:
                body = await asyncio.wait_for(reader.readexactly(length), READ_TIMEOUT)
            except (asyncio.IncompleteReadError, TimeoutError, OSError):
                return Response(400, b"incomplete request body\n"), method, False
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        request = Request(method, path, query, body, content_type)
        return await self.route(request), method, keep_alive


def _table(routes: dict[str, Handler]) -> tuple[dict[str, Handler], list[tuple[str, Handler]]]:
    """Exact paths, and path prefixes (``/x/*``) longest first."""
    exact = {p: h for p, h in routes.items() if not p.endswith("/*")}
    prefixes = sorted(
        ((p[:-1], h) for p, h in routes.items() if p.endswith("/*")), key=lambda item: -len(item[0])
    )
    return exact, prefixes


def _not_allowed(allow: str) -> Response:
    return Response(405, f"only {allow} here\n".encode(), headers={"Allow": allow})
