"""ACLs through CreateAcls (30), DescribeAcls (29) and DeleteAcls (31).

Bindings and filters are the protocol's (``samsa.protocol.acl``), Kafka's
codes included.  Any broker answers; it forwards changes to the active
controller.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.protocol.acl import AclBinding, AclFilter, binding_from

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31


def filter_request(acl_filter: AclFilter) -> dict[str, Any]:
    return {
        "resource_type_filter": acl_filter.resource_type,
        "resource_name_filter": acl_filter.name,
        "pattern_type_filter": acl_filter.pattern_type,
        "principal_filter": acl_filter.principal,
        "host_filter": acl_filter.host,
        "operation": acl_filter.operation,
        "permission_type": acl_filter.permission,
    }


def create_acls(admin: AdminPlumbing, bindings: Iterable[AclBinding], timeout_ms: int) -> None:
    """Create every binding; the first refused one raises (those before it stay)."""
    creations = [
        {
            "resource_type": b.resource_type,
            "resource_name": b.name,
            "resource_pattern_type": b.pattern_type,
            "principal": b.principal,
            "host": b.host,
            "operation": b.operation,
            "permission_type": b.permission,
        }
        for b in bindings
    ]
    resp = admin._call(None, CREATE_ACLS, {"creations": creations}, timeout_ms)
    for creation, result in zip(creations, resp["results"], strict=True):
        error = item_error(
            result["error_code"], result["error_message"], f"ACL on {creation['resource_name']}"
        )
        if error is not None:
            raise error


def describe_acls(admin: AdminPlumbing, acl_filter: AclFilter, timeout_ms: int) -> list[AclBinding]:
    resp = admin._call(None, DESCRIBE_ACLS, filter_request(acl_filter), timeout_ms)
    error = item_error(resp["error_code"], resp["error_message"], "describe ACLs")
    if error is not None:
        raise error
    return [
        binding_from(
            resource["resource_type"],
            resource["resource_name"],
            resource["pattern_type"],
            acl["principal"],
            acl["host"],
            acl["operation"],
            acl["permission_type"],
        )
        for resource in resp["resources"]
        for acl in resource["acls"]
    ]


def delete_acls(
    admin: AdminPlumbing, filters: Iterable[AclFilter], timeout_ms: int
) -> list[AclBinding]:
    """Delete what each filter matches; the bindings deleted."""
    body = {"filters": [filter_request(f) for f in filters]}
    resp = admin._call(None, DELETE_ACLS, body, timeout_ms)
    deleted: list[AclBinding] = []
    for result in resp["filter_results"]:
        error = item_error(result["error_code"], result["error_message"], "delete ACLs")
        if error is not None:
            raise error
        deleted.extend(
            binding_from(
                m["resource_type"],
                m["resource_name"],
                m["pattern_type"],
                m["principal"],
                m["host"],
                m["operation"],
                m["permission_type"],
            )
            for m in result["matching_acls"]
        )
    return deleted
