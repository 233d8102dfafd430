"""Actions on ACLs: create one binding (CreateAcls) or delete exactly one
(DeleteAcls with a filter naming every field), as ``samsa acls create`` and
``samsa acls delete`` send them.  Both need ALTER on the cluster; on a broker
without an authorizer Kafka answers SECURITY_DISABLED (409 here)."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from samsa.console.actions.common import check, field
from samsa.console.context import CLUSTER, CLUSTER_NAME, ConsoleContext
from samsa.http.messages import HttpError
from samsa.protocol.acl import (
    AclBinding,
    AclOperation,
    InvalidAcl,
    PatternType,
    Permission,
    ResourceType,
)

CREATE_ACLS, DELETE_ACLS = 30, 31


def _enum(body: dict[str, Any], name: str, enum: type[IntEnum], default: str | None) -> Any:
    raw = field(body, name, str, default)
    try:
        return enum[raw.upper().replace("-", "_")]
    except KeyError:
        choices = ", ".join(m.name for m in enum if m.name not in ("UNKNOWN", "ANY", "MATCH"))
        raise HttpError(400, f"{name} must be one of {choices}, not {raw!r}") from None


def binding(body: dict[str, Any]) -> AclBinding:
    """The binding the body names (``resource_type``, ``resource_name``,
    ``pattern_type`` LITERAL, ``principal``, ``host`` ``*``, ``operation``,
    ``permission`` ALLOW), checked as the controller checks a new one."""
    acl = AclBinding(
        resource_type=_enum(body, "resource_type", ResourceType, None),
        name=field(body, "resource_name", str),
        pattern_type=_enum(body, "pattern_type", PatternType, "LITERAL"),
        principal=field(body, "principal", str),
        host=field(body, "host", str, "*"),
        operation=_enum(body, "operation", AclOperation, None),
        permission=_enum(body, "permission", Permission, "ALLOW"),
    )
    try:
        acl.validate()
    except InvalidAcl as exc:
        raise HttpError(400, f"invalid ACL: {exc}") from None
    return acl


def described(acl: AclBinding) -> dict[str, Any]:
    return {
        "resource_type": acl.resource_type.name,
        "resource_name": acl.name,
        "pattern_type": acl.pattern_type.name,
        "principal": acl.principal,
        "host": acl.host,
        "operation": acl.operation.name,
        "permission": acl.permission.name,
    }


async def create_acl(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    acl = binding(body)
    ctx.require(AclOperation.ALTER, CLUSTER, CLUSTER_NAME)
    creation = {
        "resource_type": int(acl.resource_type),
        "resource_name": acl.name,
        "resource_pattern_type": int(acl.pattern_type),
        "principal": acl.principal,
        "host": acl.host,
        "operation": int(acl.operation),
        "permission_type": int(acl.permission),
    }
    result = (await ctx.kafka(CREATE_ACLS, 3, {"creations": [creation]}))["results"][0]
    check(result["error_code"], result.get("error_message"), "create ACL")
    return {"created": described(acl)}


async def delete_acl(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    acl = binding(body)
    ctx.require(AclOperation.ALTER, CLUSTER, CLUSTER_NAME)
    exact = {
        "resource_type_filter": int(acl.resource_type),
        "resource_name_filter": acl.name,
        "pattern_type_filter": int(acl.pattern_type),
        "principal_filter": acl.principal,
        "host_filter": acl.host,
        "operation": int(acl.operation),
        "permission_type": int(acl.permission),
    }
    result = (await ctx.kafka(DELETE_ACLS, 3, {"filters": [exact]}))["filter_results"][0]
    check(result["error_code"], result.get("error_message"), "delete ACL")
    if not result["matching_acls"]:
        raise HttpError(404, "no such ACL: nothing was deleted")
    return {"deleted": described(acl)}
