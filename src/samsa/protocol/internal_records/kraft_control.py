"""KRaft control records: the keys and values Kafka puts in control batches.

A control record's key is ``int16 version (0), int16 type`` (Kafka's
``ControlRecordType``); its value is one message whose layout depends on the
type.  Kafka reads and writes every KRaft control value at version 0
(``ControlRecordUtils.*_CURRENT_VERSION``), whatever the schema's newest version
(LeaderChangeMessage v1 exists but is never written), and each such message
starts with its own ``version`` int16 field.  Transaction markers (ABORT and
COMMIT) hold an EndTxnMarker: ``int16 version, int32 coordinator_epoch``.

As Kafka does, a key whose version is not 0 is read with the version 0 layout,
and bytes after a value are ignored: newer writers may only append.  A type this
module does not know raises :class:`UnknownControlRecordType`, which a reader
should skip, as Kafka's readers skip ``ControlRecordType.UNKNOWN``.

:func:`control_batch` builds a whole control batch (the batch attribute's
control bit set, no producer id) with ``samsa.protocol.batches.record_builder``.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.batches.record_batch import NO_PARTITION_LEADER_EPOCH
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.compiler import Decoder, Encoder, decoder_for, encoder_for
from samsa.protocol.schema import DataSchema, F

__all__ = [
    "CONTROL_SCHEMAS",
    "ControlRecordType",
    "UnknownControlRecordType",
    "control_batch",
    "decode_control_record",
    "encode_control_record",
]


class ControlRecordType(IntEnum):
    """Kafka's ``ControlRecordType`` codes (the ``type`` of a control record key)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


_VOTER = [F("voter_id", "int32"), F("voter_directory_id", "uuid", "1+")]

LEADER_CHANGE_MESSAGE = DataSchema(
    "LeaderChangeMessage",
    valid=(0, 1),
    flexible=0,
    fields=(
        F("version", "int16"),
        F("leader_id", "int32"),
        F("voters", "[]struct", fields=_VOTER),
        F("granting_voters", "[]struct", fields=_VOTER),
    ),
)

SNAPSHOT_HEADER_RECORD = DataSchema(
    "SnapshotHeaderRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("version", "int16"), F("last_contained_log_timestamp", "int64")),
)

SNAPSHOT_FOOTER_RECORD = DataSchema(
    "SnapshotFooterRecord", valid=(0, 0), flexible=0, fields=(F("version", "int16"),)
)

KRAFT_VERSION_RECORD = DataSchema(
    "KRaftVersionRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("version", "int16"), F("kraft_version", "int16")),
)

VOTERS_RECORD = DataSchema(
    "VotersRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F("version", "int16"),
        F(
            "voters",
            "[]struct",
            fields=[
                F("voter_id", "int32"),
                F("voter_directory_id", "uuid"),
                F(
                    "endpoints",
                    "[]struct",
                    fields=[F("name", "string"), F("host", "string"), F("port", "uint16")],
                ),
                F(
                    "kraft_version_feature",
                    "struct",
                    fields=[
                        F("min_supported_version", "int16"),
                        F("max_supported_version", "int16"),
                    ],
                ),
            ],
        ),
    ),
)

END_TXN_MARKER = DataSchema(
    "EndTxnMarker",
    valid=(0, 0),
    flexible=None,
    fields=(F("version", "int16"), F("coordinator_epoch", "int32")),
)

CONTROL_SCHEMAS: dict[ControlRecordType, DataSchema] = {
    ControlRecordType.ABORT: END_TXN_MARKER,
    ControlRecordType.COMMIT: END_TXN_MARKER,
    ControlRecordType.LEADER_CHANGE: LEADER_CHANGE_MESSAGE,
    ControlRecordType.SNAPSHOT_HEADER: SNAPSHOT_HEADER_RECORD,
    ControlRecordType.SNAPSHOT_FOOTER: SNAPSHOT_FOOTER_RECORD,
    ControlRecordType.KRAFT_VERSION: KRAFT_VERSION_RECORD,
    ControlRecordType.KRAFT_VOTERS: VOTERS_RECORD,
}
"""The value schema of each control record type."""

_VALUE_VERSION = 0  # the version Kafka writes and reads every control value at
_KEY = struct.Struct(">hh")  # version, type


class UnknownControlRecordType(DecodeError):
    """A control record whose type Samsa does not know; readers skip it."""

    def __init__(self, type_id: int) -> None:
        self.type_id = type_id
        super().__init__(f"unknown control record type {type_id}")


def _codecs() -> dict[ControlRecordType, tuple[Encoder, Decoder]]:
    out = {}
    for kind, schema in CONTROL_SCHEMAS.items():
        flexible = schema.flexible is not None
        out[kind] = (
            encoder_for(schema.fields, _VALUE_VERSION, flexible),
            decoder_for(schema.fields, _VALUE_VERSION, flexible),
        )
    return out


_CODECS = _codecs()


def _parse_type(type_name: str | int) -> ControlRecordType:
    try:
        if isinstance(type_name, str):
            return ControlRecordType[type_name]
        return ControlRecordType(type_name)
    except (KeyError, ValueError):
        raise ValueError(f"unknown control record type {type_name!r}") from None


def encode_control_record(type_name: str | int, body: dict[str, Any]) -> tuple[bytes, bytes]:
    """``(key, value)`` of a control record, e.g. ``("LEADER_CHANGE", {...})``.

    ``type_name`` is a ``ControlRecordType`` name (or code).  Fields missing from
    ``body`` are written with their defaults, so ``version`` may be left out.
    """
    kind = _parse_type(type_name)
    encode, _decode = _CODECS[kind]
    chunks: list[Any] = []
    encode(body, chunks)
    return _KEY.pack(0, kind), b"".join(chunks)


def decode_control_record(
    key: bytes | bytearray | memoryview | None, value: bytes | bytearray | memoryview | None
) -> tuple[str, dict[str, Any]]:
    """``(type name, body)`` of a control record; raises DecodeError on bad bytes.

    Raises :class:`UnknownControlRecordType` (a DecodeError) for a type this
    module does not know, which callers should skip.
    """
    if key is None or len(key) < _KEY.size:
        raise DecodeError("control record key must hold a version and a type (4 bytes)")
    key_version, type_id = _KEY.unpack_from(key)
    if key_version < 0:
        raise DecodeError(f"invalid control record key version {key_version}")
    try:
        kind = ControlRecordType(type_id)
    except ValueError:
        raise UnknownControlRecordType(type_id) from None
    if value is None:
        raise DecodeError(f"{kind.name} control record has no value")
    _encode, decode = _CODECS[kind]
    body, _end = decode(memoryview(value), 0)
    return kind.name, body


def control_batch(
    records: Sequence[tuple[str | int, dict[str, Any]]],
    *,
    timestamp_ms: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """A control batch holding ``records`` (``(type name, body)`` pairs), in order.

    This is how KRaft writes its control records: a non-transactional control
    batch without a producer id, stamped with the leader's epoch (e.g. one
    LeaderChangeMessage when a leader is elected, or a snapshot's header with
    its KRaftVersion and Voters records).
    """
    if not records:
        raise ValueError("a control batch needs at least one record")
    builder = RecordBatchBuilder(
        base_offset=base_offset,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
    for type_name, body in records:
        key, value = encode_control_record(type_name, body)
        builder.append(timestamp_ms, key, value)
    return bytes(builder.build())
