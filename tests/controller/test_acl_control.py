"""CreateAcls and DeleteAcls as metadata records, replayed, snapshotted and encoded."""

from __future__ import annotations

import random

from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.security.acl_control import AclControl
from samsa.controller.snapshot_records import image_from_records, snapshot_records
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import decode_metadata_record, encode_metadata_record


def creation(name: str, operation: int = 3, pattern: int = 3, principal: str = "User:a") -> dict:
    return {
        "resource_type": 2,
        "resource_name": name,
        "resource_pattern_type": pattern,
        "principal": principal,
        "host": "*",
        "operation": operation,
        "permission_type": 3,
    }


def delete_filter(name: str | None, pattern: int = 1) -> dict:
    return {
        "resource_type_filter": 1,
        "resource_name_filter": name,
        "pattern_type_filter": pattern,
        "principal_filter": None,
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }


def apply(image: MetadataImage, records: list) -> None:
    for record in records:
        # Through the wire format, as every node reads them from the log.
        image.replay(decode_metadata_record(encode_metadata_record(record)))


def test_create_replay_snapshot_delete() -> None:
    image = MetadataImage()
    control = AclControl(image, random.Random(7))
    result = control.create_acls(
        {"creations": [creation("orders"), creation("fin-", 4, pattern=4), creation("orders")]}
    )
    assert [r["error_code"] for r in result.response["results"]] == [0, 0, 0]
    assert len(result.records) == 2  # the duplicate in the same request is written once
    apply(image, result.records)
    assert {a.name for a in image.acls.values()} == {"orders", "fin-"}

    again = control.create_acls({"creations": [creation("orders")]})
    assert again.records == [] and again.response["results"][0]["error_code"] == 0

    restored = image_from_records(snapshot_records(image))
    assert restored == image and restored.acls == image.acls

    deleted = control.delete_acls({"filters": [delete_filter("orders"), delete_filter("nope")]})
    first, second = deleted.response["filter_results"]
    assert [m["resource_name"] for m in first["matching_acls"]] == ["orders"]
    assert second["matching_acls"] == []
    apply(image, deleted.records)
    assert {a.name for a in image.acls.values()} == {"fin-"}


def test_invalid_creation_is_refused_without_records() -> None:
    control = AclControl(MetadataImage(), random.Random(1))
    result = control.create_acls({"creations": [creation("t", operation=1), creation("t", 99)]})
    assert result.records == []
    codes = [r["error_code"] for r in result.response["results"]]
    assert codes == [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]
