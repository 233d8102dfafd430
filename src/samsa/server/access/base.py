"""What the authorization wrappers share: the question, the wrapping, the merge."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.connections.router import Body, Handler, HandlerResult, RequestContext, Router

Check = Callable[[StandardAuthorizer, RequestContext, Body, Handler], HandlerResult]

CLUSTER_NAME = "kafka-cluster"
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID


def can(
    auth: StandardAuthorizer,
    ctx: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
) -> bool:
    caller = ctx.caller
    if caller is None:  # no one sent it: nothing is allowed (fail closed)
        return False
    return auth.authorize(caller.principal_name, caller.host, operation, resource_type, name)


def can_cluster(auth: StandardAuthorizer, ctx: RequestContext, operation: AclOperation) -> bool:
    return can(auth, ctx, operation, CLUSTER, CLUSTER_NAME)


def guard(router: Router, api_key: int, auth: StandardAuthorizer, check: Check) -> None:
    """Put ``check`` in front of the handler of ``api_key``, if there is one."""
    inner = router.handler(api_key)
    if inner is None:
        return
    router.register(api_key, lambda ctx, req: check(auth, ctx, req, inner))


def then(result: HandlerResult, finish: Callable[[Body | None], Body | None]) -> HandlerResult:
    """``finish`` the handler's answer, now or once it is ready."""
    if result is None or isinstance(result, dict):
        return finish(result)
    assert inspect.isawaitable(result)

    async def later(pending: Awaitable[Body | None]) -> Body | None:
        return finish(await pending)

    return later(result)


def append_entries(result: HandlerResult, field: str, entries: list[Body]) -> HandlerResult:
    """The handler's answer with the refused ``entries`` added to its ``field`` list."""

    def finish(body: Body | None) -> Body | None:
        if body is not None:
            body[field] = list(body.get(field) or []) + entries
        return body

    return then(result, finish)


def visible_only(
    auth: StandardAuthorizer,
    ctx: RequestContext,
    result: HandlerResult,
    field: str,
    key: str,
    resource_type: ResourceType,
) -> HandlerResult:
    """A listing (ListGroups, ListTransactions) without what the caller may not DESCRIBE."""

    def finish(body: Body | None) -> Body | None:
        if body is not None:
            body[field] = [
                item
                for item in body.get(field) or []
                if can(auth, ctx, AclOperation.DESCRIBE, resource_type, item[key])
            ]
        return body

    return then(result, finish)


def whole(code: int, **fields: Any) -> Body:
    """A response refusing the whole request (absent fields take their defaults)."""
    return {"throttle_time_ms": 0, "error_code": code, **fields}


def cluster_check(operation: AclOperation, code: int) -> Check:
    """The whole request needs ``operation`` on the cluster."""

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        if not can_cluster(auth, ctx, operation):
            return whole(code, error_message="Cluster authorization failed.")
        return inner(ctx, req)

    return check


def names_check(
    operation: AclOperation,
    resource_type: ResourceType,
    code: int,
    request_field: str,
    response_field: str,
    response_key: str,
) -> Check:
    """A request naming resources in a list of strings, answered one entry each
    (DescribeGroups, DeleteGroups, DescribeTransactions, ...): denied names are
    answered ``code`` and the handler sees the rest."""

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        names = req.get(request_field) or []
        denied = [n for n in names if not can(auth, ctx, operation, resource_type, n)]
        if not denied:
            return inner(ctx, req)
        refused = set(denied)
        kept = [n for n in names if n not in refused]
        entries = [{response_key: n, "error_code": code, "error_message": None} for n in denied]
        return append_entries(inner(ctx, {**req, request_field: kept}), response_field, entries)

    return check


def one_check(operation: AclOperation, resource_type: ResourceType, field: str, code: int) -> Check:
    """The whole request needs ``operation`` on the resource named by ``req[field]``."""

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        if not can(auth, ctx, operation, resource_type, req[field]):
            return whole(code)
        return inner(ctx, req)

    return check
