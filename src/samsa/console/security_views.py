"""The security page: ACLs (DescribeAcls), SCRAM users
(DescribeUserScramCredentials) and client quotas (DescribeClientQuotas), each
read through the broker's handler as ``samsa acls list``, ``samsa users
list`` and ``kafka-configs --describe --entity-type users`` ask.

Each needs what its Kafka request needs (DESCRIBE on the cluster for ACLs and
users, DESCRIBE_CONFIGS on the cluster for quotas), checked first so a
refusal names it.  A broker without an authorizer has no ACLs: the list says
``enabled: false`` (DescribeAcls answers SECURITY_DISABLED).  Nothing derived
from a password is ever shown: a user's mechanisms and iteration counts only.
"""

from __future__ import annotations

from typing import Any

from samsa.console.actions.acl_actions import described
from samsa.console.actions.common import check
from samsa.console.context import CLUSTER, CLUSTER_NAME, ConsoleContext
from samsa.console.params import page_window
from samsa.errors import ErrorCode
from samsa.http.messages import Request, Response, json_response
from samsa.protocol.acl import AclOperation, PatternType, Permission, ResourceType, binding_from
from samsa.protocol.sasl.scram import MECHANISM_NAMES

DESCRIBE_ACLS, DESCRIBE_CLIENT_QUOTAS, DESCRIBE_USER_SCRAM_CREDENTIALS = 29, 48, 50


def _page(request: Request, rows: list[Any], key: str, **extra: Any) -> Response:
    offset, limit = page_window(request, 100, 1000)
    return json_response(
        {
            **extra,
            "total": len(rows),
            "offset": offset,
            "limit": limit,
            key: rows[offset : offset + limit],
        }
    )


async def acls(ctx: ConsoleContext, request: Request) -> Response:
    ops = ctx.authorized_operations(CLUSTER, CLUSTER_NAME)
    if not ctx.broker.authorizer_on:
        return _page(request, [], "acls", enabled=False, authorized_operations=ops)
    ctx.require(AclOperation.DESCRIBE, CLUSTER, CLUSTER_NAME)
    every = {
        "resource_type_filter": int(ResourceType.ANY),
        "resource_name_filter": None,
        "pattern_type_filter": int(PatternType.ANY),
        "principal_filter": None,
        "host_filter": None,
        "operation": int(AclOperation.ANY),
        "permission_type": int(Permission.ANY),
    }
    answer = await ctx.kafka(DESCRIBE_ACLS, 3, every)
    check(answer["error_code"], answer.get("error_message"), "describe ACLs")
    rows = [
        described(
            binding_from(
                resource["resource_type"],
                resource["resource_name"],
                resource["pattern_type"],
                acl["principal"],
                acl["host"],
                acl["operation"],
                acl["permission_type"],
            )
        )
        for resource in answer["resources"]
        for acl in resource["acls"]
    ]
    rows.sort(key=lambda r: (r["resource_type"], r["resource_name"], r["principal"]))
    return _page(request, rows, "acls", enabled=True, authorized_operations=ops)


async def users(ctx: ConsoleContext, request: Request) -> Response:
    ctx.require(AclOperation.DESCRIBE, CLUSTER, CLUSTER_NAME)
    answer = await ctx.kafka(DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": None})
    check(answer["error_code"], answer.get("error_message"), "describe SCRAM users")
    rows = []
    for result in sorted(answer["results"], key=lambda r: r["user"]):
        if result["error_code"] == ErrorCode.RESOURCE_NOT_FOUND:
            continue
        check(result["error_code"], result.get("error_message"), f"user {result['user']}")
        rows.append(
            {
                "user": result["user"],
                "mechanisms": [
                    {
                        "mechanism": MECHANISM_NAMES.get(i["mechanism"], str(i["mechanism"])),
                        "iterations": i["iterations"],
                    }
                    for i in result["credential_infos"]
                ],
            }
        )
    return _page(request, rows, "users")


async def quotas(ctx: ConsoleContext, request: Request) -> Response:
    ctx.require(AclOperation.DESCRIBE_CONFIGS, CLUSTER, CLUSTER_NAME)
    answer = await ctx.kafka(DESCRIBE_CLIENT_QUOTAS, 1, {"components": [], "strict": False})
    check(answer["error_code"], answer.get("error_message"), "describe client quotas")
    rows = [
        {
            # entity type -> name; null names the type's default entity
            "entity": {e["entity_type"]: e["entity_name"] for e in entry["entity"]},
            "values": {v["key"]: v["value"] for v in entry["values"]},
        }
        for entry in answer["entries"] or []
    ]
    rows.sort(key=lambda r: sorted((k, v or "") for k, v in r["entity"].items()))
    return _page(request, rows, "quotas")
