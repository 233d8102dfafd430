"""One asyncio connection to another node, with pipelined requests.

Requests are written in the order they are made and Kafka answers a
connection's requests in order, but matching by correlation id (not by
position) keeps a late or duplicated answer from being given to the wrong
caller.  A request that is not answered within its timeout fails on its own;
the connection is then closed (its later answers would be out of step), which
fails every other request still waiting on it.  The next request reconnects,
so a peer that restarts is reached again without any caller doing more than
retrying.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import struct
from dataclasses import dataclass
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.api import decode_response, encode_request, encode_request_parts
from samsa.protocol.sasl.exchange import SaslClientExchange

log = logging.getLogger("samsa.net")

_SIZE = struct.Struct(">i")
MAX_RESPONSE_BYTES = 256 * 1024 * 1024


class Traffic:
    """Bytes a set of channels sent and received (frames with their size
    prefix): what replica fetching costs the network, for /metrics and benches."""

    __slots__ = ("bytes_received", "bytes_sent")

    def __init__(self) -> None:
        self.bytes_sent = 0
        self.bytes_received = 0


class ChannelError(Exception):
    """The peer could not be reached, hung up, timed out or answered garbage."""


@dataclass(frozen=True)
class ChannelSecurity:
    """How a node reaches a secured listener of another: TLS and/or a SASL login."""

    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str = ""
    username: str = ""
    password: str = ""


_SASL_HANDSHAKE, _SASL_AUTHENTICATE = 17, 36


class NodeChannel:
    """Requests to one peer over one connection (see module doc)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str = "samsa-node",
        connect_timeout_ms: int = 2000,
        request_timeout_ms: int = 30000,
        security: ChannelSecurity | None = None,
        traffic: Traffic | None = None,
    ) -> None:
        self.security = security or ChannelSecurity()
        self.host = host
        self.traffic = traffic or Traffic()
        self.port = port
        self.client_id = client_id
        self.connect_timeout_ms = connect_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._connecting: asyncio.Future[None] | None = None
        self._pending: dict[int, tuple[int, int, asyncio.Future[dict[str, Any]]]] = {}
        self._correlation = itertools.count(1)
        self._read_task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def connected(self) -> bool:
        return self._writer is not None and not self._writer.is_closing()

    async def request(
        self, api_key: int, version: int, body: dict[str, Any], *, timeout_ms: int | None = None
    ) -> dict[str, Any]:
        """Send one request and return the decoded response body.

        Raises ChannelError when the peer cannot be reached or does not answer
        within ``timeout_ms`` (default: the channel's request timeout).
        """
        if self._closed:
            raise ChannelError(f"channel to {self.address} is closed")
        await self._ensure_connected()
        writer = self._writer
        assert writer is not None
        correlation_id = next(self._correlation) & 0x7FFFFFFF
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[correlation_id] = (api_key, version, future)
        try:
            parts = encode_request_parts(api_key, version, correlation_id, self.client_id, body)
            writer.writelines(parts)
            self.traffic.bytes_sent += sum(len(part) for part in parts)
        except Exception as exc:
            self._pending.pop(correlation_id, None)
            self._drop_connection(f"write failed: {exc}")
            raise ChannelError(f"{self.address}: {exc}") from None
        timeout = (self.request_timeout_ms if timeout_ms is None else timeout_ms) / 1000
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.CancelledError:
            # The caller gave up (a fetcher stopping, a leader that moved): its
            # answer, if it ever comes, is dropped by the read loop.
            self._pending.pop(correlation_id, None)
            raise
        except TimeoutError:
            self._pending.pop(correlation_id, None)
            self._drop_connection("request timed out")
            raise ChannelError(
                f"{self.address}: no answer to api key {api_key} within {timeout:.3f}s"
            ) from None

    async def _ensure_connected(self) -> None:
        if self.connected:
            return
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect())
            # Every waiter may give up (a broker stopping while it registers):
            # a connection that then fails must not log "Task exception was
            # never retrieved"; those still waiting get the error all the same.
            self._connecting.add_done_callback(_retrieve_error)
        connecting = self._connecting
        try:
            await asyncio.shield(connecting)
        finally:
            if connecting.done() and self._connecting is connecting:
                self._connecting = None

    async def _connect(self) -> None:
        try:
            reader, writer = await asyncio.wait_for(self._open(), self.connect_timeout_ms / 1000)
        except (TimeoutError, OSError, DecodeError, asyncio.IncompleteReadError) as exc:
            raise ChannelError(f"cannot connect to {self.address}: {exc or 'timed out'}") from None
        self._reader, self._writer = reader, writer
        self._read_task = asyncio.ensure_future(self._read_loop(reader, writer))

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        security = self.security
        reader, writer = await asyncio.open_connection(
            self.host, self.port, ssl=security.ssl_context
        )
        if security.sasl_mechanism:
            try:
                await self._login(reader, writer)
            except BaseException:
                writer.close()
                raise
        return reader, writer

    async def _login(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """SaslHandshake v1, then SaslAuthenticate until the mechanism is done."""
        security = self.security

        async def call(api_key: int, body: dict[str, Any]) -> dict[str, Any]:
            writer.write(encode_request(api_key, 1, 0, self.client_id, body))
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            if not 4 <= size <= 1024 * 1024:
                raise DecodeError(f"bad SASL response size {size}")
            return decode_response(api_key, 1, memoryview(await reader.readexactly(size)))[1]

        answer = await call(_SASL_HANDSHAKE, {"mechanism": security.sasl_mechanism})
        if answer["error_code"]:
            offered = ", ".join(answer["mechanisms"])
            raise DecodeError(f"{security.sasl_mechanism} not offered (offered: {offered})")
        exchange = SaslClientExchange(security.sasl_mechanism, security.username, security.password)
        token: bytes | None = exchange.first()
        while token is not None:
            answer = await call(_SASL_AUTHENTICATE, {"auth_bytes": token})
            if answer["error_code"]:
                raise DecodeError(f"SASL login refused: {answer['error_message']}")
            token = exchange.next(bytes(answer["auth_bytes"]))

    async def _read_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reason = "connection closed by peer"
        try:
            while True:
                size_bytes = await reader.readexactly(4)
                (size,) = _SIZE.unpack(size_bytes)
                if not 4 <= size <= MAX_RESPONSE_BYTES:
                    reason = f"bad response size {size}"
                    break
                frame = await reader.readexactly(size)
                self.traffic.bytes_received += 4 + size
                (correlation_id,) = _SIZE.unpack_from(frame, 0)
                entry = self._pending.pop(correlation_id, None)
                if entry is None:
                    continue  # the caller gave up on it (timeout)
                api_key, version, future = entry
                try:
                    _, body = decode_response(api_key, version, memoryview(frame))
                except DecodeError as exc:
                    if not future.done():
                        future.set_exception(ChannelError(f"{self.address}: {exc}"))
                    reason = f"undecodable response: {exc}"
                    break
                if not future.done():
                    future.set_result(body)
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            reason = f"connection lost: {exc}"
        except asyncio.CancelledError:
            reason = "channel closed"
        if self._writer is writer:
            self._drop_connection(reason)

    def _drop_connection(self, reason: str) -> None:
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.close()
        task, self._read_task = self._read_task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        pending, self._pending = self._pending, {}
        for _, _, future in pending.values():
            if not future.done():
                future.set_exception(ChannelError(f"{self.address}: {reason}"))
        if pending:
            log.debug(
                "channel to %s dropped (%s); %d requests failed", self.address, reason, len(pending)
            )

    async def close(self) -> None:
        self._closed = True
        task = self._read_task
        self._drop_connection("channel closed")
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _retrieve_error(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
