"""The frame that consumer-group and streams-group records share (Kafka's "modern" groups).

Shared because Kafka lays both families out the same way: a group is several
record types in ``__consumer_offsets``, told apart by the int16 that opens the
key (the coordinator-key ``apiKey``); the rest of a key is the group id, or the
group id and a member id, not flexible, version 0; a value is flexible version 0
of its record type's schema, and a newer value version is read as version 0
(KIP-915).  Only the record types and their value schemas differ, so each family
(``consumer_group_records``, ``streams_group_records``) is this frame over its
own table, and a change to the frame reaches both.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from samsa.errors import DecodeError
from samsa.protocol.internal_records.group_records import (
    _decode_key_body,
    _decode_value,
    _encode,
    _encode_value,
)
from samsa.protocol.schema import DataSchema, F, Field

_GROUP_KEY: tuple[Field, ...] = (F("group_id", "string"),)
_MEMBER_KEY: tuple[Field, ...] = (F("group_id", "string"), F("member_id", "string"))
_I16 = struct.Struct(">h")


@dataclass(frozen=True, slots=True)
class GroupRecordKey:
    """Key of a group record; ``member_id`` is None for group-wide records."""

    record_type: int
    group_id: str
    member_id: str | None = None

    def encode(self) -> bytes:
        if self.member_id is None:
            body = {"group_id": self.group_id}
            return _I16.pack(self.record_type) + _encode(_GROUP_KEY, 0, False, body)
        body = {"group_id": self.group_id, "member_id": self.member_id}
        return _I16.pack(self.record_type) + _encode(_MEMBER_KEY, 0, False, body)


K = TypeVar("K", bound=GroupRecordKey)


@dataclass(frozen=True)
class GroupRecordFamily(Generic[K]):
    """One family's record types: ``schemas`` maps each key version to its value
    schema; ``member_keys`` are the key versions whose key names a member."""

    name: str
    """As errors and logs say it: ``consumer-group``, ``streams-group``."""
    key_type: type[K]
    schemas: Mapping[int, DataSchema]
    member_keys: frozenset[int]

    @property
    def key_versions(self) -> frozenset[int]:
        return frozenset(self.schemas)

    def is_key(self, data: bytes | memoryview) -> bool:
        """Whether a ``__consumer_offsets`` key opens with one of this family's record types."""
        return len(data) >= 2 and _I16.unpack_from(data, 0)[0] in self.schemas

    def decode_key(self, data: bytes | memoryview) -> K:
        buf = memoryview(data)
        if len(buf) < 2:
            raise DecodeError("__consumer_offsets key is too short to hold a version")
        (record_type,) = _I16.unpack_from(buf, 0)
        if record_type not in self.schemas:
            raise DecodeError(f"key version {record_type} is not a {self.name} record")
        fields = _MEMBER_KEY if record_type in self.member_keys else _GROUP_KEY
        body = _decode_key_body(fields, buf)
        return self.key_type(record_type, body["group_id"], body.get("member_id"))

    def encode_value(self, record_type: int, body: dict[str, Any]) -> bytes:
        return _encode_value(self.schemas[record_type], 0, body)

    def decode_value(self, record_type: int, data: bytes | memoryview) -> dict[str, Any]:
        _version, body = _decode_value(self.schemas[record_type], data)
        return body
