"""Records of ``__share_group_state`` (Kafka's share coordinator, KIP-932).

Key: int16 record type (0 ShareSnapshot, 1 ShareUpdate), then GroupId, TopicId,
Partition (non-flexible v0).  Value: int16 version, then the flexible v0 value.
A snapshot holds a share partition's whole state; an update holds the batches
changed since (Samsa writes snapshots only, and reads both).  A null value is a
tombstone (DeleteShareGroupState), which compaction uses to drop the key.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.internal_records.group_records import (
    _decode_key_body,
    _decode_value,
    _encode,
    _encode_value,
)
from samsa.protocol.schema import DataSchema, F, Field

SHARE_SNAPSHOT = 0
SHARE_UPDATE = 1
_I16 = struct.Struct(">h")

_KEY: tuple[Field, ...] = (F("group_id", "string"), F("topic_id", "uuid"), F("partition", "int32"))
_STATE_BATCH = [
    F("first_offset", "int64"),
    F("last_offset", "int64"),
    F("delivery_state", "int8"),
    F("delivery_count", "int16"),
]

_SCHEMAS = {
    SHARE_SNAPSHOT: DataSchema(
        "ShareSnapshotValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("snapshot_epoch", "int32"),
            F("state_epoch", "int32"),
            F("leader_epoch", "int32"),
            F("start_offset", "int64"),
            F("create_timestamp", "int64"),
            F("write_timestamp", "int64"),
            F("state_batches", "[]struct", fields=_STATE_BATCH),
        ),
    ),
    SHARE_UPDATE: DataSchema(
        "ShareUpdateValue",
        valid=(0, 0),
        flexible=0,
        fields=(
            F("snapshot_epoch", "int32"),
            F("leader_epoch", "int32"),
            F("start_offset", "int64"),
            F("state_batches", "[]struct", fields=_STATE_BATCH),
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class ShareStateKey:
    record_type: int
    group_id: str
    topic_id: bytes
    partition: int

    def encode(self) -> bytes:
        body = {"group_id": self.group_id, "topic_id": self.topic_id, "partition": self.partition}
        return _I16.pack(self.record_type) + _encode(_KEY, 0, False, body)


def decode_share_state_key(data: bytes | memoryview) -> ShareStateKey:
    buf = memoryview(data)
    if len(buf) < 2:
        raise DecodeError("__share_group_state key is too short to hold a record type")
    (record_type,) = _I16.unpack_from(buf, 0)
    if record_type not in _SCHEMAS:
        raise DecodeError(f"unknown __share_group_state record type {record_type}")
    body = _decode_key_body(_KEY, buf)
    return ShareStateKey(record_type, body["group_id"], bytes(body["topic_id"]), body["partition"])


def encode_share_state_value(record_type: int, body: dict[str, Any]) -> bytes:
    return _encode_value(_SCHEMAS[record_type], 0, body)


def decode_share_state_value(record_type: int, data: bytes | memoryview) -> dict[str, Any]:
    _version, body = _decode_value(_SCHEMAS[record_type], data)
    return body
