"""Request router: api key -> handler, and the ApiVersions answer derived from it.

The advertised ApiVersions are built from the handlers actually registered, so a
version is only ever advertised when something serves it.  Kafka's rules for bad
requests: an ApiVersions request of a version we do not know is answered in v0
format with UNSUPPORTED_VERSION plus our ranges (so the client can retry); any
other unknown key, unknown version or undecodable body closes the connection.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol

from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.api import (
    API_VERSIONS_KEY,
    UnsupportedVersion,
    decode_request,
    encode_response,
    peek_header,
)
from samsa.protocol.api import RequestHeader as RequestHeader
from samsa.protocol.messages import APIS
from samsa.server.connections.socket_server import CloseConnection

if TYPE_CHECKING:
    from samsa.server.connections.client_throttling import ClientThrottling
    from samsa.server.connections.socket_server import Connection

log = logging.getLogger("samsa.server")

Body = dict[str, Any]
# What Kafka accepts as an ApiVersions v3+ client software name or version.
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
HandlerResult = Body | None | Awaitable[Body | None]


class CallerIdentity(Protocol):
    """Who sent a request, as the authorization checks ask: a Kafka
    ``Connection``, or a ``samsa.security.caller.Caller`` for a request made in
    process on a user's behalf (the web console)."""

    @property
    def principal_name(self) -> str: ...

    @property
    def host(self) -> str: ...

    @property
    def peer(self) -> str: ...


class RequestContext:
    """What a handler knows about the request besides its body.

    ``connection`` is the Kafka connection the request came on (None for a
    request made in process); ``caller`` is who sent it, which the access
    checks judge: the connection itself, or the in-process caller.  No caller
    means no one: every check refuses it.

    A plain slotted class: one is built per request, and a frozen dataclass's
    ``__init__`` costs several times as much on the commit and produce paths.
    """

    __slots__ = ("caller", "connection", "header", "version")

    def __init__(
        self,
        header: RequestHeader,
        connection: Connection | None,
        caller: CallerIdentity | None = None,
    ) -> None:
        self.header = header
        self.connection = connection
        self.caller: CallerIdentity | None = connection if caller is None else caller
        self.version = header.api_version


Handler = Callable[[RequestContext, Body], HandlerResult]
Translator = Callable[[Handler, RequestContext, Body], HandlerResult]
"""Runs around a handler and whatever wraps it (ACL checks): rewrites a request
into the form they take and the answer back (topic ids to names, topic_ids.py)."""


class RequestObserver(Protocol):
    """Told of every handled request (metrics); see server/observability/metrics.py."""

    def on_request(self, api_key: int, version: int, seconds: float, failed: bool) -> None: ...

    def on_client(self, connection: Any, software: str, version: str) -> None: ...


class Router:
    def __init__(self) -> None:
        self._handlers: dict[int, Handler] = {}
        self.observer: RequestObserver | None = None
        self.features: Callable[[], Body] | None = None
        """ApiVersions v3+ feature fields (supported and finalized levels), when a
        broker serves this router; a controller-only listener reports none."""
        self.throttling: ClientThrottling | None = None
        """Client quotas, on a broker's client listeners (``client_throttling``)."""
        self.client_facing = False
        """A listener clients connect to: ApiVersions leaves out the APIs only
        controllers serve (Kafka's ``listeners`` key), as Kafka's broker
        listeners do.  A listener shared with the quorum still answers them for
        its peers, which never ask ApiVersions first."""
        self.identity: tuple[str, int] | None = None
        """(cluster id, node id), which an ApiVersions v5+ request may name: a
        client that means another cluster or node is told REBOOTSTRAP_REQUIRED."""
        self._translators: dict[int, Translator] = {}
        self.register(API_VERSIONS_KEY, self._api_versions)

    def translate(self, api_key: int, translator: Translator) -> None:
        """Run ``translator`` around ``api_key``'s handler, outside any wrapper
        registered before or after this call."""
        self._translators[api_key] = translator

    def _run(
        self, api_key: int, handler: Handler, ctx: RequestContext, body: Body
    ) -> HandlerResult:
        translator = self._translators.get(api_key)
        if translator is None:
            return handler(ctx, body)
        return translator(handler, ctx, body)

    def register(self, api_key: int, handler: Handler) -> None:
        if api_key not in APIS:
            raise ValueError(f"no schema for api key {api_key}")
        self._handlers[api_key] = handler

    def handles(self, api_key: int) -> bool:
        return api_key in self._handlers

    def handler(self, api_key: int) -> Handler | None:
        return self._handlers.get(api_key)

    def api_keys(self) -> list[int]:
        return list(self._handlers)

    def call(
        self, api_key: int, version: int, body: Body, client_id: str, *, caller: CallerIdentity
    ) -> HandlerResult:
        """Run the handler of a request built in this process, as if ``caller``
        had sent it on a Kafka connection (the web console's reads and actions,
        on behalf of its logged-in user): the same code path as a client's
        request, authorization checks included, minus the codec and the observer."""
        handler = self._handlers.get(api_key)
        if handler is None:
            raise ValueError(f"no handler for api key {api_key}")
        header = RequestHeader(api_key, version, 0, client_id)
        return self._run(api_key, handler, RequestContext(header, None, caller), body)

    def advertised(self) -> list[Body]:
        client_facing = self.client_facing
        return [
            {
                "api_key": key,
                "min_version": APIS[key].advertised_range[0],
                "max_version": APIS[key].advertised_range[1],
            }
            for key in sorted(self._handlers)
            if not client_facing or APIS[key].on_broker_listeners
        ]

    def _api_versions(self, ctx: RequestContext, body: Body) -> Body:
        """Kafka's rules: v3+ names its client software by a plain pattern
        (INVALID_REQUEST otherwise); v5+ may name the cluster and node it
        means (KIP-1242), and a mismatch asks the client to bootstrap again."""
        if ctx.version >= 3 and not (
            _SOFTWARE.fullmatch(body.get("client_software_name") or "")
            and _SOFTWARE.fullmatch(body.get("client_software_version") or "")
        ):
            return {"error_code": ErrorCode.INVALID_REQUEST, "api_keys": [], "throttle_time_ms": 0}
        wanted_cluster = body.get("cluster_id") if ctx.version >= 5 else None
        if wanted_cluster is not None and (wanted_cluster, body.get("node_id")) != self.identity:
            return {
                "error_code": ErrorCode.REBOOTSTRAP_REQUIRED,
                "api_keys": [],
                "throttle_time_ms": 0,
            }
        if self.observer is not None and ctx.version >= 3:
            self.observer.on_client(
                ctx.connection,
                body.get("client_software_name") or "",
                body.get("client_software_version") or "",
            )
        answer: Body = {"error_code": 0, "api_keys": self.advertised(), "throttle_time_ms": 0}
        if self.features is not None and ctx.version >= 3:
            answer.update(self.features())
            if ctx.version < 4:
                # KAFKA-17011: older clients refuse a supported minimum of 0.
                answer["supported_features"] = [
                    f for f in answer.get("supported_features", ()) if f["min_version"] != 0
                ]
        return answer

    def dispatch(
        self, frame: bytes | bytearray, conn: Connection | None
    ) -> list[Any] | Awaitable[list[Any] | None] | None:
        view = memoryview(frame)
        try:
            api_key, version, correlation_id = peek_header(view)
        except DecodeError as exc:
            log.debug("malformed request bytes: %s", frame[:512].hex())
            raise CloseConnection(f"malformed request header: {exc}") from None
        handler = self._handlers.get(api_key)
        if handler is None:
            raise CloseConnection(f"unsupported api key {api_key}")
        if api_key == API_VERSIONS_KEY:
            adv_low, adv_high = APIS[api_key].advertised_range
            if not adv_low <= version <= adv_high:
                body = {
                    "error_code": ErrorCode.UNSUPPORTED_VERSION,
                    "api_keys": [
                        {
                            "api_key": API_VERSIONS_KEY,
                            "min_version": adv_low,
                            "max_version": adv_high,
                        }
                    ],
                }
                return encode_response(api_key, 0, correlation_id, body)
        try:
            header, request = decode_request(view)
        except UnsupportedVersion:
            raise CloseConnection(
                f"unsupported version {version} of {APIS[api_key].name} (api key {api_key})"
            ) from None
        except DecodeError as exc:
            log.debug("malformed request bytes: %s", frame[:512].hex())
            raise CloseConnection(
                f"malformed {APIS[api_key].name} v{version} request: {exc}"
            ) from None
        observer = self.observer
        throttling = self.throttling
        if throttling is not None and (conn is None or not throttling.manager.any_enabled):
            throttling = None
        started = perf_counter() if observer is not None or throttling is not None else 0.0
        if throttling is not None:
            assert conn is not None
            request = throttling.before(api_key, header, request, conn)
        try:
            result = self._run(api_key, handler, RequestContext(header, conn), request)
        except Exception:
            if observer is not None:
                observer.on_request(api_key, version, perf_counter() - started, True)
            raise
        if isinstance(result, dict):
            if observer is not None:
                failed = bool(result.get("error_code"))
                observer.on_request(api_key, version, perf_counter() - started, failed)
            if throttling is not None:
                assert conn is not None
                throttling.after(api_key, header, request, result, conn, perf_counter() - started)
            return encode_response(api_key, version, correlation_id, result)
        if result is None:
            if observer is not None:
                observer.on_request(api_key, version, perf_counter() - started, False)
            if throttling is not None:
                assert conn is not None
                throttling.after(api_key, header, request, None, conn, perf_counter() - started)
            return None
        assert inspect.isawaitable(result)
        if throttling is not None:
            assert conn is not None
            return self._finish_throttled(
                throttling, header, request, conn, result, started, correlation_id
            )
        return self._finish(api_key, version, correlation_id, result, started)

    async def _finish_throttled(
        self,
        throttling: ClientThrottling,
        header: RequestHeader,
        request: Body,
        conn: Connection,
        pending: Awaitable[Body | None],
        started: float,
        correlation_id: int,
    ) -> list[Any] | None:
        """``_finish`` for a client with a quota: its cost is known once answered.
        (Waiting in purgatory is not handler time; only the first, inline step is.)"""
        api_key, version = header.api_key, header.api_version
        handler_seconds = perf_counter() - started

        async def answered() -> Body | None:
            body = await pending
            throttling.after(api_key, header, request, body, conn, handler_seconds)
            return body

        return await self._finish(api_key, version, correlation_id, answered(), started)

    async def _finish(
        self,
        api_key: int,
        version: int,
        correlation_id: int,
        pending: Awaitable[Body | None],
        started: float,
    ) -> list[Any] | None:
        observer = self.observer
        try:
            body = await pending
        except Exception:
            if observer is not None:
                observer.on_request(api_key, version, perf_counter() - started, True)
            raise
        if observer is not None:
            failed = body is not None and bool(body.get("error_code"))
            observer.on_request(api_key, version, perf_counter() - started, failed)
        if body is None:
            return None
        return encode_response(api_key, version, correlation_id, body)
