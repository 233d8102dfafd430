"""ACLs through CreateAcls (30), DescribeAcls (29) and DeleteAcls (31).

Entries carry Kafka's numeric codes (resource type, pattern type, operation,
permission), as on the wire: the client depends on the protocol only, and a
tool names them for people.  Any broker answers; it forwards changes to the
active controller.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
ANY, LITERAL = 1, 3


@dataclass(frozen=True, slots=True)
class AclEntry:
    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int


@dataclass(frozen=True, slots=True)
class AclEntryFilter:
    """Which entries to list or delete; ``None`` strings and ANY (1) codes match all."""

    resource_type: int = ANY
    name: str | None = None
    pattern_type: int = ANY
    principal: str | None = None
    host: str | None = None
    operation: int = ANY
    permission: int = ANY

    def request(self) -> dict[str, Any]:
        return {
            "resource_type_filter": self.resource_type,
            "resource_name_filter": self.name,
            "pattern_type_filter": self.pattern_type,
            "principal_filter": self.principal,
            "host_filter": self.host,
            "operation": self.operation,
            "permission_type": self.permission,
        }


def create_acls(admin: AdminPlumbing, entries: Iterable[AclEntry], timeout_ms: int) -> None:
    """Create every entry; the first refused one raises (entries before it stay)."""
    creations = [
        {
            "resource_type": e.resource_type,
            "resource_name": e.name,
            "resource_pattern_type": e.pattern_type,
            "principal": e.principal,
            "host": e.host,
            "operation": e.operation,
            "permission_type": e.permission,
        }
        for e in entries
    ]
    resp = admin._call(None, CREATE_ACLS, {"creations": creations}, timeout_ms)
    for creation, result in zip(creations, resp["results"], strict=True):
        error = item_error(
            result["error_code"], result["error_message"], f"ACL on {creation['resource_name']}"
        )
        if error is not None:
            raise error


def describe_acls(
    admin: AdminPlumbing, acl_filter: AclEntryFilter, timeout_ms: int
) -> list[AclEntry]:
    resp = admin._call(None, DESCRIBE_ACLS, acl_filter.request(), timeout_ms)
    error = item_error(resp["error_code"], resp["error_message"], "describe ACLs")
    if error is not None:
        raise error
    return [
        AclEntry(
            resource["resource_type"],
            resource["resource_name"],
            resource.get("pattern_type", LITERAL),
            acl["principal"],
            acl["host"],
            acl["operation"],
            acl["permission_type"],
        )
        for resource in resp["resources"]
        for acl in resource["acls"]
    ]


def delete_acls(
    admin: AdminPlumbing, filters: Iterable[AclEntryFilter], timeout_ms: int
) -> list[AclEntry]:
    """Delete what each filter matches; the entries deleted."""
    resp = admin._call(None, DELETE_ACLS, {"filters": [f.request() for f in filters]}, timeout_ms)
    deleted = []
    for result in resp["filter_results"]:
        error = item_error(result["error_code"], result["error_message"], "delete ACLs")
        if error is not None:
            raise error
        for m in result["matching_acls"]:
            deleted.append(
                AclEntry(
                    m["resource_type"],
                    m["resource_name"],
                    m.get("pattern_type", LITERAL),
                    m["principal"],
                    m["host"],
                    m["operation"],
                    m["permission_type"],
                )
            )
    return deleted
