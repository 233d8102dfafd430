"""An HTTP/1.1 server on the broker's event loop (metrics, console), on h11.

h11 parses and frames the bytes (sans-I/O); this module reads and writes
them.  Routes answer GET (and HEAD); only routes registered as ``post_routes``
take POST with a small body, anything else is 405 and an unknown path 404.
An endpoint with a ``fallback`` handler (the schema registry, which routes
its REST API itself) also takes PUT and DELETE, and hands it every request
no route matches.
Handlers build their answer from in-memory state in about a millisecond, or
await one in-process Kafka API call, so running them on the event loop keeps
the broker's requests flowing.  An HTTP/1.1 GET or HEAD without a body leaves
its connection open for the next request (a console page polls every second,
and a new connection each time cost the broker four times the CPU of the
answer itself); a POST, an HTTP/1.0 request, ``Connection: close`` or a
malformed request closes it (unless the endpoint keeps connections with
bodies open, as a REST API's clients expect).  A request's head must arrive whole within
``READ_TIMEOUT`` seconds, and its body within as long again: a slow or silent
client, or an idle kept-alive connection, is cut off.  A head over
``MAX_HEAD`` bytes is 431, a body over the endpoint's ``max_body`` (default
``MAX_BODY``) 413.

Before a handler runs: the Host header must be a name of the endpoint
(``HostCheck``; 421 otherwise), a POST whose ``Origin`` is another site is
refused (403), and the endpoint's ``Gate`` admits the request (its login
check) unless the route is public.  A handler refuses bad input by raising
``HttpError``; anything else it raises is logged and answered 500 without a
trace.  Every answer says ``Cache-Control: no-store``, ``nosniff``, that it may
not be framed, and (``Server-Timing``) how long it took inside the broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

import h11

from samsa.http.hosts import HostCheck
from samsa.http.messages import (
    REASONS,
    HttpError,
    Request,
    Response,
    error_response,
    json_response,
    not_found,
)
from samsa.http.routes import Gate, Handler, Routes

log = logging.getLogger("samsa.http")

READ_TIMEOUT = 10.0
MAX_HEAD = 16 * 1024
MAX_BODY = 64 * 1024
RECEIVE_BYTES = 64 * 1024
METHODS = ("GET", "HEAD", "POST")
BODY_METHODS = ("POST", "PUT", "DELETE")
ErrorFormat = Callable[[HttpError], Response]

__all__ = [
    "MAX_BODY",
    "MAX_HEAD",
    "READ_TIMEOUT",
    "EndpointSecurity",
    "HttpEndpoint",
    "HttpError",
    "Request",
    "Response",
    "json_response",
    "not_found",
]


@dataclass(frozen=True, slots=True)
class EndpointSecurity:
    """What guards an endpoint: TLS, the Host names it answers, its login check."""

    tls: ssl.SSLContext | None = None
    hosts: HostCheck | None = None
    gate: Gate | None = None


class _Refused(Exception):
    """The request cannot be read: answer ``response`` and close."""

    def __init__(self, response: Response) -> None:
        self.response = response


class HttpEndpoint:
    def __init__(
        self,
        name: str,
        routes: dict[str, Handler],
        post_routes: dict[str, Handler] | None = None,
        *,
        json_errors: bool = False,
        security: EndpointSecurity | None = None,
        fallback: Handler | None = None,
        error_format: ErrorFormat | None = None,
        max_body: int = MAX_BODY,
        keep_alive_bodies: bool = False,
    ) -> None:
        """``json_errors``: an HttpError is answered ``{"error": message,
        "status": code}`` (the console's API), else as plain text;
        ``error_format`` answers it in a shape of the endpoint's own.
        ``fallback`` takes any method on a path no route serves;
        ``keep_alive_bodies`` keeps a connection open after a request with a
        body (read whole, so the next request starts clean)."""
        self.name = name
        self.json_errors = json_errors
        self.routes = Routes(routes, post_routes)
        self.fallback = fallback
        self.error_format = error_format
        self.max_body = max_body
        self.keep_alive_bodies = keep_alive_bodies
        self.methods = (*METHODS, "PUT", "DELETE") if fallback is not None else METHODS
        self.security = security or EndpointSecurity()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()

    @property
    def scheme(self) -> str:
        return "https" if self.security.tls is not None else "http"

    async def bind(self, host: str, port: int) -> tuple[str, int]:
        """Take the address without answering yet: a busy port is found before
        the node starts anything else, the first request waits for ``serve``."""
        self._server = await asyncio.start_server(
            self._serve,
            host,
            port,
            start_serving=False,
            ssl=self.security.tls,
            ssl_handshake_timeout=READ_TIMEOUT if self.security.tls is not None else None,
        )
        bound = self._server.sockets[0].getsockname()
        return bound[0], bound[1]

    async def serve(self) -> None:
        assert self._server is not None
        await self._server.start_serving()
        bound = self._server.sockets[0].getsockname()
        log.info("%s listening on %s://%s:%d/", self.name, self.scheme, bound[0], bound[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._connections):
                writer.close()  # idle kept-alive connections: their reads end at once
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    # ------------------------------------------------------------------ answering
    async def answer(self, request: Request) -> Response:
        """The response to one parsed request (checks, login, handler)."""
        try:
            return await self._answer(request)
        except HttpError as exc:
            if self.error_format is not None:
                return self.error_format(exc)
            return error_response(exc, as_json=self.json_errors)
        except Exception:
            log.exception("%s: %s failed", self.name, request.path)
            if self.error_format is not None:
                return self.error_format(HttpError(500, "internal error (see the broker log)"))
            if self.json_errors:
                return json_response({"error": "internal error (see the broker log)"}, 500)
            return Response(500, b"internal error\n")

    async def _answer(self, request: Request) -> Response:
        if request.method not in self.methods:
            return _not_allowed(", ".join(self.methods))
        hosts = self.security.hosts
        if hosts is not None and not hosts.allows(request.headers.get("host")):
            raise HttpError(421, hosts.refusal(request.headers.get("host")))
        handler = self.routes.find(request.method, request.path)
        if handler is None and self.fallback is not None:
            handler = self.fallback
        if handler is None:
            if request.method == "POST" and self.routes.find("GET", request.path) is not None:
                return _not_allowed("GET, HEAD")
            return not_found(request.path)
        if request.method in BODY_METHODS:
            _refuse_cross_site(request)
        gate = self.security.gate
        if gate is not None and not gate.is_public(request):
            request = dataclasses.replace(request, principal=await gate.admit(request))
        result = handler(request)
        return await result if inspect.isawaitable(result) else result

    # ------------------------------------------------------------------ the wire
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        peer = writer.get_extra_info("peername")
        client = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else ("", 0)
        try:
            await self.converse(reader, writer, client)
        finally:
            self._connections.discard(writer)
            writer.close()

    async def converse(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client: tuple[str, int]
    ) -> None:
        """Answer requests off ``reader`` until the connection is to close."""
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        while True:
            started = time.perf_counter()
            try:
                parsed = await self._read_request(conn, reader, client)
                if parsed is None:
                    return
                request, keep_alive = parsed
                started = time.perf_counter()
                response = await self.answer(request)
            except _Refused as refused:
                request, keep_alive, response = None, False, refused.response
            except (TimeoutError, OSError, h11.RemoteProtocolError):
                return  # silent, gone, or garbled beyond an answer
            if not await self._send(conn, writer, request, response, keep_alive, started):
                return
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()

    async def _read_request(
        self, conn: h11.Connection, reader: asyncio.StreamReader, client: tuple[str, int]
    ) -> tuple[Request, bool] | None:
        """The next request and whether its connection may serve another; None
        when the client closed it (or went silent) between requests."""
        try:
            event = await _next_event(conn, reader, _deadline())
        except h11.RemoteProtocolError as exc:
            raise _Refused(_bad_request(exc)) from None
        except TimeoutError:
            return None
        if not isinstance(event, h11.Request):
            return None
        headers: dict[str, str] = {}
        for raw_name, raw_value in event.headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        declared = headers.get("content-length")
        if declared is not None and int(declared.split(",")[0]) > self.max_body:
            raise _Refused(self._too_large())
        body = await self._read_body(conn, reader)
        method = event.method.decode("ascii")
        parts = urlsplit(event.target.decode("ascii", "replace"))
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        keep_alive = (
            (method in ("GET", "HEAD") or self.keep_alive_bodies)
            and event.http_version == b"1.1"
            and headers.get("connection", "").lower() != "close"
            and (
                self.keep_alive_bodies
                or ("content-length" not in headers and "transfer-encoding" not in headers)
            )
        )
        request = Request(
            method, unquote(parts.path), query, body, content_type, headers, client,
            raw_path=parts.path,
        )  # fmt: skip
        return request, keep_alive

    async def _read_body(self, conn: h11.Connection, reader: asyncio.StreamReader) -> bytes:
        body = bytearray()
        deadline = _deadline()
        while True:
            try:
                event = await _next_event(conn, reader, deadline)
            except (h11.RemoteProtocolError, TimeoutError):
                raise _Refused(Response(400, b"incomplete request body\n")) from None
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > self.max_body:
                    raise _Refused(self._too_large())
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)
            else:
                raise _Refused(Response(400, b"incomplete request body\n"))

    def _too_large(self) -> Response:
        message = f"body over {self.max_body} bytes"
        if self.error_format is not None:
            return self.error_format(HttpError(413, message))
        return Response(413, f"{message}\n".encode())

    async def _send(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        request: Request | None,
        response: Response,
        keep_alive: bool,
        started: float,
    ) -> bool:
        """Write the response; False when the connection cannot go on."""
        if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return False
        took_ms = (time.perf_counter() - started) * 1000
        headers = [
            ("Content-Type", response.content_type),
            ("Content-Length", str(len(response.body))),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"),
            ("Content-Security-Policy", "frame-ancestors 'none'"),
            ("Connection", "keep-alive" if keep_alive else "close"),
            ("Server-Timing", f"handler;dur={took_ms:.1f}"),
            *response.headers.items(),
        ]
        try:
            out = (
                conn.send(
                    h11.Response(
                        status_code=response.status,
                        headers=headers,
                        reason=REASONS.get(response.status, "").encode(),
                    )
                )
                or b""
            )
            if request is None or request.method != "HEAD":
                out += conn.send(h11.Data(data=response.body)) or b""
            out += conn.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError:
            log.exception("%s: could not frame the answer to %s", self.name, request)
            return False
        try:
            writer.write(out)
            await writer.drain()
        except OSError:
            return False
        return True


async def _next_event(
    conn: h11.Connection, reader: asyncio.StreamReader, deadline: float
) -> object:
    """The next h11 event, read by ``deadline`` (loop time): a client sending
    a byte now and then cannot hold a connection past it."""
    loop = asyncio.get_running_loop()
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError
        data = await asyncio.wait_for(reader.read(RECEIVE_BYTES), left)
        conn.receive_data(data)


def _deadline() -> float:
    return asyncio.get_running_loop().time() + READ_TIMEOUT


def _bad_request(exc: h11.RemoteProtocolError) -> Response:
    status = exc.error_status_hint
    if status == 431:
        return Response(431, f"request head over {MAX_HEAD} bytes\n".encode())
    return Response(status, f"malformed request: {exc}\n".encode())


def _refuse_cross_site(request: Request) -> None:
    """A POST from a page of another site is refused: its Origin (sent by every
    browser with a POST) names another host than the one it is sent to.  The
    session cookie is SameSite=Strict and the APIs take JSON bodies only, which
    a form of another site cannot send either."""
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise HttpError(403, "cross-site request refused")
    origin = request.headers.get("origin")
    if origin is None:
        return
    host = request.headers.get("host", "").lower()
    _, sep, origin_host = origin.lower().partition("://")
    if not sep or origin_host.rstrip("/") != host:
        raise HttpError(403, f"cross-site request refused (Origin {origin} is not {host})")


def _not_allowed(allow: str) -> Response:
    return Response(405, f"only {allow} here\n".encode(), headers={"Allow": allow})
