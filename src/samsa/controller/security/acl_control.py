"""CreateAcls and DeleteAcls on the controller: ACL changes as metadata records.

Kafka's ``AclControlManager``.  A new ACL gets a random uuid and becomes an
AccessControlEntryRecord; an ACL matched by a delete filter becomes a
RemoveAccessControlEntryRecord naming that id.  Creating an ACL that already
exists is a success without a record (Kafka skips duplicates too), so a
retried CreateAcls never doubles an entry.  An invalid binding or filter is
answered with INVALID_REQUEST and changes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.acl import (
    AclBinding,
    AclFilter,
    InvalidAcl,
    binding_from,
    filter_from,
)
from samsa.protocol.metadata_records import MetadataRecord, make_record

Request = Mapping[str, Any]


def acl_record(acl_id: bytes, acl: AclBinding) -> MetadataRecord:
    return make_record(
        "AccessControlEntryRecord",
        id=acl_id,
        resource_type=acl.resource_type,
        resource_name=acl.name,
        pattern_type=acl.pattern_type,
        principal=acl.principal,
        host=acl.host,
        operation=acl.operation,
        permission_type=acl.permission,
    )


def creation_binding(entry: Mapping[str, Any]) -> AclBinding:
    """A CreateAcls ``creations`` entry."""
    return binding_from(
        entry["resource_type"],
        entry["resource_name"],
        entry["resource_pattern_type"],
        entry["principal"],
        entry["host"],
        entry["operation"],
        entry["permission_type"],
    )


def request_filter(entry: Mapping[str, Any]) -> AclFilter:
    """A DescribeAcls request or DeleteAcls ``filters`` entry as a filter."""
    return filter_from(
        entry["resource_type_filter"],
        entry["resource_name_filter"],
        entry["pattern_type_filter"],
        entry["principal_filter"],
        entry["host_filter"],
        entry["operation"],
        entry["permission_type"],
    )


class AclControl:
    def __init__(self, image: MetadataImage, rng: random.Random) -> None:
        self.image = image
        self.rng = rng

    def create_acls(self, request: Request) -> ControllerResult:
        records: list[MetadataRecord] = []
        results: list[dict[str, Any]] = []
        existing = set(self.image.acls.values())
        for entry in request.get("creations", []):
            acl = creation_binding(entry)
            try:
                acl.validate()
            except InvalidAcl as exc:
                results.append({"error_code": ErrorCode.INVALID_REQUEST, "error_message": str(exc)})
                continue
            if acl not in existing:
                existing.add(acl)
                records.append(acl_record(self.rng.randbytes(16), acl))
            results.append({"error_code": 0, "error_message": None})
        return ControllerResult(records, {"throttle_time_ms": 0, "results": results})

    def delete_acls(self, request: Request) -> ControllerResult:
        records: list[MetadataRecord] = []
        results: list[dict[str, Any]] = []
        removed: set[bytes] = set()
        for entry in request.get("filters", []):
            acl_filter = request_filter(entry)
            try:
                acl_filter.validate()
            except InvalidAcl as exc:
                results.append(
                    {
                        "error_code": ErrorCode.INVALID_REQUEST,
                        "error_message": str(exc),
                        "matching_acls": [],
                    }
                )
                continue
            matching = []
            for acl_id, acl in self.image.acls.items():
                if acl_filter.matches(acl):
                    matching.append(matching_acl(acl))
                    if acl_id not in removed:
                        removed.add(acl_id)
                        records.append(make_record("RemoveAccessControlEntryRecord", id=acl_id))
            results.append({"error_code": 0, "error_message": None, "matching_acls": matching})
        return ControllerResult(records, {"throttle_time_ms": 0, "filter_results": results})


def matching_acl(acl: AclBinding) -> dict[str, Any]:
    return {
        "error_code": 0,
        "error_message": None,
        "resource_type": acl.resource_type,
        "resource_name": acl.name,
        "pattern_type": acl.pattern_type,
        "principal": acl.principal,
        "host": acl.host,
        "operation": acl.operation,
        "permission_type": acl.permission,
    }
