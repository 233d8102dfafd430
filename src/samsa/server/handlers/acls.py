"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31).

ACLs live in the metadata log, so creating and deleting them is the active
controller's job (forwarded, as other admin writes are); describing them reads
this node's authorizer, which holds what the image holds.  As in Kafka, all
three answer SECURITY_DISABLED when no authorizer is configured, need ALTER on
the cluster to change ACLs and DESCRIBE on the cluster to list them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from samsa.controller.security.acl_control import request_filter
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.acl import AclBinding, AclOperation, InvalidAcl
from samsa.server.access.base import can_cluster
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
_DISABLED = "No Authorizer is configured."


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE_ACLS, lambda ctx, req: describe_acls(broker, ctx, req))
    router.register(CREATE_ACLS, lambda ctx, req: change_acls(broker, CREATE_ACLS, ctx, req))
    router.register(DELETE_ACLS, lambda ctx, req: change_acls(broker, DELETE_ACLS, ctx, req))


def describe_acls(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    authorizer = broker.authorizer
    answer: Body = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": []}
    if authorizer is None:
        return {**answer, "error_code": ErrorCode.SECURITY_DISABLED, "error_message": _DISABLED}
    if not can_cluster(authorizer, ctx, AclOperation.DESCRIBE):
        return {
            **answer,
            "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            "error_message": "Cluster authorization failed.",
        }
    acl_filter = request_filter(req)
    try:
        acl_filter.validate()
    except InvalidAcl as exc:
        return {**answer, "error_code": ErrorCode.INVALID_REQUEST, "error_message": str(exc)}
    answer["resources"] = _by_resource(acl for _, acl in authorizer.acls(acl_filter))
    return answer


def _by_resource(acls: Iterable[AclBinding]) -> list[Body]:
    grouped: dict[tuple[int, str, int], list[Body]] = {}
    for acl in acls:
        grouped.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(
            {
                "principal": acl.principal,
                "host": acl.host,
                "operation": acl.operation,
                "permission_type": acl.permission,
            }
        )
    return [
        {"resource_type": rtype, "resource_name": name, "pattern_type": pattern, "acls": entries}
        for (rtype, name, pattern), entries in grouped.items()
    ]


async def change_acls(broker: BrokerApi, api_key: int, ctx: RequestContext, req: Body) -> Body:
    authorizer = broker.authorizer
    if authorizer is None:
        return _failed(api_key, req, ErrorCode.SECURITY_DISABLED, _DISABLED)
    if not can_cluster(authorizer, ctx, AclOperation.ALTER):
        return _failed(
            api_key, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        )
    try:
        return await broker.forward(api_key, ctx.version, req)
    except KafkaError as exc:
        return _failed(api_key, req, exc.code, str(exc))


def _failed(api_key: int, req: Body, code: int, message: str) -> Body:
    if api_key == CREATE_ACLS:
        results = [{"error_code": code, "error_message": message} for _ in req["creations"]]
        return {"throttle_time_ms": 0, "results": results}
    filter_results = [
        {"error_code": code, "error_message": message, "matching_acls": []} for _ in req["filters"]
    ]
    return {"throttle_time_ms": 0, "filter_results": filter_results}
