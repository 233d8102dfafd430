"""AlterClientQuotas on the controller: validate each entry, write ClientQuotaRecords.

Kafka's ``ClientQuotaControlManager``.  Each entry is answered on its own: an
entry with a bad entity or a bad key/value gets INVALID_REQUEST with Kafka's
message and writes nothing, the others go ahead.  As in Kafka, values are not
range-checked (a rate of 0 or less holds the client back for the whole window).  A set writes a record only
when the value changes, a remove only when the key is set, so a repeated
command leaves the log as it was.  With ``validate_only`` the answers are the
same and no record is written.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.metadata.quotas import (
    CLIENT_KEYS,
    ENTITY_TYPES,
    IP,
    IP_KEYS,
    LONG_KEYS,
    Entity,
    make_entity,
)
from samsa.protocol.metadata_records import MetadataRecord, make_record

_EPSILON = 1e-6


class InvalidQuota(ValueError):
    """An entity, key or value Kafka refuses with INVALID_REQUEST; the text is Kafka's."""


def validate_entity(pairs: list[Mapping[str, Any]]) -> Entity:
    """The entity of a request; InvalidQuota as Kafka words it."""
    if not pairs:
        raise InvalidQuota("Invalid empty client quota entity")
    seen: dict[str, str | None] = {}
    for pair in pairs:
        entity_type, name = pair["entity_type"], pair["entity_name"]
        if entity_type not in ENTITY_TYPES:
            raise InvalidQuota(f"Unhandled client quota entity type: {entity_type}")
        if entity_type in seen:
            raise InvalidQuota(
                f"Invalid empty client quota entity, duplicate entity entry {entity_type}"
            )
        if name is not None and not name:
            raise InvalidQuota(f"Empty {entity_type} not supported")
        seen[entity_type] = name
    if IP in seen:
        if len(seen) > 1:
            # Kafka answers the combination as it answers an empty entity.
            raise InvalidQuota("Invalid empty client quota entity")
        address = seen[IP]
        if address is not None:
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise InvalidQuota(f"{address} is not a valid IP or resolvable host.") from None
    return make_entity(list(seen.items()))


def validate_value(entity: Entity, key: str, value: float) -> None:
    allowed = IP_KEYS if entity[0][0] == IP else CLIENT_KEYS
    if key not in allowed:
        raise InvalidQuota(f"Invalid configuration key {key}")
    if key in LONG_KEYS and abs(int(value + _EPSILON) - value) > _EPSILON:
        raise InvalidQuota(f"Configuration {key} must be a Long value")
    if value <= 0:
        raise InvalidQuota(f"Configuration {key} must be positive, got {value}")


def quota_record(entity: Entity, key: str, value: float, remove: bool) -> MetadataRecord:
    return make_record(
        "ClientQuotaRecord",
        entity=[{"entity_type": t, "entity_name": n} for t, n in entity],
        key=key,
        value=value,
        remove=remove,
    )


class ClientQuotaControl:
    """Reads the committed quotas from the image; writes only records."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    def alter_client_quotas(self, request: Mapping[str, Any]) -> ControllerResult:
        records: list[MetadataRecord] = []
        answers = []
        for entry in request["entries"]:
            answer: dict[str, Any] = {
                "error_code": 0,
                "error_message": None,
                "entity": entry["entity"],
            }
            try:
                records.extend(self._entry_records(entry))
            except InvalidQuota as exc:
                answer["error_code"] = ErrorCode.INVALID_REQUEST
                answer["error_message"] = str(exc)
            answers.append(answer)
        if request.get("validate_only"):
            records = []
        return ControllerResult(records, {"throttle_time_ms": 0, "entries": answers})

    def _entry_records(self, entry: Mapping[str, Any]) -> list[MetadataRecord]:
        entity = validate_entity(entry["entity"])
        current = self.image.client_quotas.get(entity, {})
        records = []
        for op in entry["ops"]:
            key = op["key"]
            if op["remove"]:  # as in Kafka, removing a key that is not set is no error
                if key in current:
                    records.append(quota_record(entity, key, 0.0, True))
                continue
            value = float(op["value"])
            validate_value(entity, key, value)
            if current.get(key) != value:
                records.append(quota_record(entity, key, value, False))
        return records


__all__ = [
    "ClientQuotaControl",
    "InvalidQuota",
    "quota_record",
    "validate_entity",
    "validate_value",
]
