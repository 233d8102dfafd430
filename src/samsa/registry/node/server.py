"""The registry on one node: its HTTP endpoint (``samsa.http``) in front of its service.

The endpoint binds with the broker's other HTTP endpoints (a busy port stops
the start early) but answers only once the service has replayed ``_schemas``
(``start``, after the broker is ready): its "listening" log line means
ready.  Every request goes to the registry's own routing (the endpoint's
fallback, any method), with the raw, percent-encoded path (a subject may hold
an encoded ``/``); HEAD is answered as GET without a body.  Bodies up to
``MAX_BODY`` (the largest record ``_schemas`` takes by default); connections
stay open across requests with bodies, as REST clients expect.

Security comes from ``EndpointSecurity`` (TLS, Host names, the HTTP Basic
gate against the broker's SASL users); with an authorizer, each request is
then checked against the caller's ACLs (``access``) and listings are
filtered.  Refusals are answered in Confluent's error shape
(``{"error_code": ..., "message": ...}``).
"""

from __future__ import annotations

import asyncio
import logging

from samsa.eventloop.cancellation import cancel_and_wait
from samsa.http.endpoint import EndpointSecurity, HttpEndpoint
from samsa.http.messages import HttpError
from samsa.http.messages import Request as HttpRequest
from samsa.http.messages import Response as HttpResponse
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.registry import errors
from samsa.registry.api_http import Request, Response, error_response, json_response
from samsa.registry.node.access import Allowed, RegistryAccess
from samsa.registry.node.broker_port import RegistryBroker
from samsa.registry.node.service import RegistryService
from samsa.registry.node.settings import RegistrySettings
from samsa.registry.node.view import RegistryView

log = logging.getLogger("samsa.registry")

NAME = "schema registry"
MAX_BODY = 1024 * 1024


class RegistryServer:
    def __init__(self, broker: RegistryBroker, security: EndpointSecurity) -> None:
        self.broker = broker
        self.security = security
        self.endpoint = HttpEndpoint(
            NAME,
            {},
            fallback=self._answer,
            error_format=_error_format,
            max_body=MAX_BODY,
            keep_alive_bodies=True,
            security=security,
        )
        self.service: RegistryService | None = None
        self.access: RegistryAccess | None = None
        self._starting: asyncio.Task[None] | None = None

    @property
    def view(self) -> RegistryView | None:
        return None if self.service is None else self.service.view

    async def bind(self, host: str, port: int) -> tuple[str, int]:
        bound = await self.endpoint.bind(host, port)
        settings = RegistrySettings.read(self.broker, host, bound[1], self.security.tls is not None)
        self.service = RegistryService(self.broker, settings)
        if self.broker.authorizer_on:
            self.access = RegistryAccess(self.service.state)
        return bound

    def begin(self) -> None:
        """Start in the background (the broker is ready): replay, join, then answer."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())

    async def _start(self) -> None:
        assert self.service is not None
        try:
            await self.service.start()
            await self.endpoint.serve()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("the schema registry could not start: %s", exc)
            return
        log.info("schema registry: this node is %s", self.service.settings.url)

    async def stop(self) -> None:
        if self._starting is not None:
            await cancel_and_wait([self._starting])
        await self.endpoint.stop()
        if self.service is not None:
            await self.service.stop()

    async def _answer(self, request: HttpRequest) -> HttpResponse:
        service = self.service
        if service is None:
            raise HttpError(503, "the schema registry is starting")
        head = request.method == "HEAD"
        call = Request(
            "GET" if head else request.method,
            request.raw_path or request.path,
            request.query,
            request.headers,
            request.body,
        )
        allowed = self._allowed(request)
        access = self.access
        if access is not None and allowed is not None:
            lacking = access.lacking(call, allowed)
            if lacking is not None:
                return _to_http(
                    error_response(
                        errors.forbidden(f"{request.principal} is not allowed {lacking.describe()}")
                    )
                )
        answer = await service.handle(call)
        if access is not None and allowed is not None:
            answer = access.filtered(call, answer, allowed)
        return _to_http(answer)

    def _allowed(self, request: HttpRequest) -> Allowed | None:
        principal = request.principal
        if principal is None:
            return None
        name, host, broker = str(principal), request.client_host, self.broker

        def allowed(operation: AclOperation, resource_type: ResourceType, resource: str) -> bool:
            return broker.authorizes(name, host, operation, resource_type, resource)

        return allowed


def _to_http(answer: Response) -> HttpResponse:
    return HttpResponse(answer.status, answer.body, answer.content_type)


def _error_format(error: HttpError) -> HttpResponse:
    """Refusals before the registry (login, Host, size) in Confluent's error shape."""
    answer = json_response({"error_code": error.status, "message": error.message}, error.status)
    return HttpResponse(answer.status, answer.body, answer.content_type, dict(error.headers))
