"""Forwarding a write to the primary's URL, as Confluent Schema Registry's followers do.

The request goes out as it came in (method, path still percent-encoded,
query, body, and the client's ``Authorization``, ``Content-Type`` and
``Accept``), over HTTP/1.1 on the event loop (h11 frames it), HTTPS when the
primary's URL says so, checked against ``registry.ssl.truststore.location``
(else the system's CAs).  The primary's answer goes back to the client as it
is.  ``FORWARDED_HEADER`` marks a forwarded request: a node that is no
longer primary when one reaches it answers 50004 instead of forwarding it
again, so a request never circles between nodes that disagree for a moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from urllib.parse import urlencode, urlsplit

import h11

from samsa.registry.api_http import CONTENT_TYPE, Request, Response

FORWARDED_HEADER = "x-samsa-registry-forwarded"
PASSED_HEADERS = ("authorization", "content-type", "accept")
MAX_RESPONSE = 16 * 1024 * 1024
READ_BYTES = 64 * 1024


class ForwardingError(Exception):
    """The primary could not be reached, or answered what is not HTTP."""


def client_context(truststore: str) -> ssl.SSLContext:
    """The context for HTTPS to other nodes: their certificates checked, host names too."""
    context = ssl.create_default_context(cafile=truststore or None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


async def forward(
    url: str,
    request: Request,
    *,
    node_id: int,
    context: ssl.SSLContext | None,
    timeout: float,
) -> Response:
    """The primary's answer to ``request``; ForwardingError when there is none."""
    try:
        return await asyncio.wait_for(_exchange(url, request, node_id, context), timeout)
    except TimeoutError:
        raise ForwardingError(f"{url} did not answer within {timeout:g} s") from None
    except (OSError, h11.ProtocolError, ssl.SSLError) as exc:
        raise ForwardingError(f"{url}: {exc}") from None


async def _exchange(
    url: str, request: Request, node_id: int, context: ssl.SSLContext | None
) -> Response:
    parts = urlsplit(url)
    https = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if https else 80)
    reader, writer = await asyncio.open_connection(
        host,
        port,
        ssl=(context or client_context("")) if https else None,
        server_hostname=host if https else None,
    )
    try:
        conn = h11.Connection(h11.CLIENT)
        query = urlencode(request.query)
        target = request.path + (f"?{query}" if query else "")
        headers = [
            ("Host", parts.netloc),
            ("Content-Length", str(len(request.body))),
            ("Connection", "close"),
            (FORWARDED_HEADER, str(node_id)),
        ]
        headers += [
            (name, request.headers[name]) for name in PASSED_HEADERS if name in request.headers
        ]
        out = conn.send(h11.Request(method=request.method, target=target, headers=headers)) or b""
        if request.body:
            out += conn.send(h11.Data(data=request.body)) or b""
        out += conn.send(h11.EndOfMessage()) or b""
        writer.write(out)
        await writer.drain()
        return await _read_response(conn, reader)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _read_response(conn: h11.Connection, reader: asyncio.StreamReader) -> Response:
    status, content_type, body = 0, CONTENT_TYPE, bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(READ_BYTES)
            conn.receive_data(data)
            if not data and conn.their_state is not h11.DONE:
                raise ForwardingError("the primary closed the connection mid-answer")
            continue
        if isinstance(event, h11.Response):
            status = event.status_code
            for name, value in event.headers:
                if name == b"content-type":
                    content_type = value.decode("latin-1")
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_RESPONSE:
                raise ForwardingError(f"the primary's answer is over {MAX_RESPONSE} bytes")
        elif isinstance(event, h11.EndOfMessage):
            return Response(status, content_type, bytes(body))
        elif isinstance(event, h11.ConnectionClosed):
            raise ForwardingError("the primary closed the connection mid-answer")
