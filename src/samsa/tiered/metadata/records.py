"""Record values of ``__remote_log_metadata``, framed as Kafka's RemoteLogMetadataSerde frames them.

Each record of the topic has a null key and a value holding one metadata
message (Kafka's ``ApiMessageAndVersion`` through ``AbstractApiMessageSerde``)::

    frame version (unsigned varint, always 1)
    api key       (unsigned varint: 0 segment metadata, 1 update, 2 partition delete)
    version       (unsigned varint: the record's schema version)
    body          (the record at that version; all are flexible)

This is the framing of KRaft's metadata records too, but with a registry of
its own: api key 0 here is RemoteLogSegmentMetadataRecord, not RegisterBroker.
Frame version 0 and any unknown frame version, key or version are refused, and
so are bytes left over after the body: ``DecodeError`` for all of them, as the
bytes come off a topic anyone may produce to.

``encode_remote_log_metadata`` / ``decode_remote_log_metadata`` convert between
the bytes and the typed values of ``model``; ``encode_record`` /
``decode_record`` give the raw field dicts (for the snapshot record and tests).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.compiler import Decoder, Encoder, decoder_for, encoder_for
from samsa.protocol.primitives import read_uvarint, uvarint_bytes
from samsa.tiered.metadata.model import (
    EpochEntry,
    RemoteLogMetadata,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from samsa.tiered.metadata.schemas import REMOTE_LOG_METADATA_SCHEMAS, WRITE_VERSION

__all__ = [
    "FRAME_VERSION",
    "decode_record",
    "decode_remote_log_metadata",
    "encode_record",
    "encode_remote_log_metadata",
]

FRAME_VERSION = 1
_MAX_SHORT = 32767
SEGMENT_METADATA_KEY = 0
SEGMENT_UPDATE_KEY = 1
PARTITION_DELETE_KEY = 2
SNAPSHOT_KEY = 3


@cache
def _encoder(api_key: int, version: int) -> Encoder:
    schema = REMOTE_LOG_METADATA_SCHEMAS.get(api_key)
    if schema is None or not schema.valid[0] <= version <= schema.valid[1]:
        raise ValueError(f"no remote log metadata record with api key {api_key} v{version}")
    return encoder_for(schema.fields, version, True)


@cache
def _decoder(api_key: int, version: int) -> Decoder:
    schema = REMOTE_LOG_METADATA_SCHEMAS.get(api_key)
    if schema is None:
        raise DecodeError(f"unknown remote log metadata api key {api_key}")
    low, high = schema.valid
    if not low <= version <= high:
        raise DecodeError(f"{schema.name} version {version} is not one Samsa reads ({low}-{high})")
    return decoder_for(schema.fields, version, True)


def encode_record(api_key: int, body: dict[str, Any], version: int = WRITE_VERSION) -> bytes:
    """Frame and encode one record given as a field dict (ValueError if unknown)."""
    chunks: list[Any] = [
        uvarint_bytes(FRAME_VERSION) + uvarint_bytes(api_key) + uvarint_bytes(version)
    ]
    _encoder(api_key, version)(body, chunks)
    return b"".join(bytes(c) for c in chunks)


def decode_record(data: bytes | bytearray | memoryview) -> tuple[int, int, dict[str, Any]]:
    """(api key, version, field dict) of one framed record; DecodeError on bad bytes."""
    buf = memoryview(data)
    if len(buf) == 0:
        raise DecodeError("empty remote log metadata record")
    frame_version, pos = _read_short(buf, 0, "frame version")
    if frame_version != FRAME_VERSION:
        raise DecodeError(
            f"remote log metadata record with frame version {frame_version} "
            f"(only {FRAME_VERSION} is supported)"
        )
    api_key, pos = _read_short(buf, pos, "api key")
    version, pos = _read_short(buf, pos, "version")
    try:
        body, end = _decoder(api_key, version)(buf, pos)
    except (IndexError, ValueError, UnicodeDecodeError) as exc:  # struct.error is a ValueError
        raise DecodeError(f"malformed remote log metadata record: {exc}") from None
    if end != len(buf):
        raise DecodeError(f"{len(buf) - end} byte(s) of garbage after remote log metadata record")
    return api_key, version, body


def _read_short(buf: memoryview, pos: int, what: str) -> tuple[int, int]:
    try:
        value, pos = read_uvarint(buf, pos)
    except (DecodeError, IndexError):
        raise DecodeError(f"remote log metadata record: truncated {what}") from None
    if value > _MAX_SHORT:
        raise DecodeError(f"remote log metadata record: {what} {value} is too large")
    return value, pos


# ----------------------------------------------------------------------------- typed values


def _tip_fields(tip: TopicIdPartition) -> dict[str, Any]:
    return {"name": tip.topic, "id": tip.topic_id, "partition": tip.partition}


def _segment_id_fields(segment_id: RemoteLogSegmentId) -> dict[str, Any]:
    return {
        "topic_id_partition": _tip_fields(segment_id.topic_id_partition),
        "id": segment_id.id,
    }


def _tip(fields: dict[str, Any]) -> TopicIdPartition:
    return TopicIdPartition(bytes(fields["id"]), fields["name"], fields["partition"])


def _segment_id(fields: dict[str, Any]) -> RemoteLogSegmentId:
    return RemoteLogSegmentId(_tip(fields["topic_id_partition"]), bytes(fields["id"]))


def _custom(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def encode_remote_log_metadata(metadata: RemoteLogMetadata) -> bytes:
    """The record value Kafka's RemoteLogMetadataSerde writes for ``metadata``."""
    if isinstance(metadata, RemoteLogSegmentMetadata):
        return encode_record(
            SEGMENT_METADATA_KEY,
            {
                "remote_log_segment_id": _segment_id_fields(metadata.segment_id),
                "start_offset": metadata.start_offset,
                "end_offset": metadata.end_offset,
                "broker_id": metadata.broker_id,
                "max_timestamp_ms": metadata.max_timestamp_ms,
                "event_timestamp_ms": metadata.event_timestamp_ms,
                "segment_leader_epochs": [
                    {"leader_epoch": e, "offset": o} for e, o in metadata.segment_leader_epochs
                ],
                "segment_size_in_bytes": metadata.segment_size_bytes,
                "custom_metadata": metadata.custom_metadata,
                "remote_log_segment_state": int(metadata.state),
                "txn_index_empty": metadata.txn_index_empty,
            },
        )
    if isinstance(metadata, RemoteLogSegmentMetadataUpdate):
        return encode_record(
            SEGMENT_UPDATE_KEY,
            {
                "remote_log_segment_id": _segment_id_fields(metadata.segment_id),
                "broker_id": metadata.broker_id,
                "event_timestamp_ms": metadata.event_timestamp_ms,
                "custom_metadata": metadata.custom_metadata,
                "remote_log_segment_state": int(metadata.state),
            },
        )
    if isinstance(metadata, RemotePartitionDeleteMetadata):
        return encode_record(
            PARTITION_DELETE_KEY,
            {
                "topic_id_partition": _tip_fields(metadata.topic_id_partition),
                "broker_id": metadata.broker_id,
                "event_timestamp_ms": metadata.event_timestamp_ms,
                "remote_partition_delete_state": int(metadata.state),
            },
        )
    raise TypeError(f"not remote log metadata: {metadata!r}")


def decode_remote_log_metadata(data: bytes | bytearray | memoryview) -> RemoteLogMetadata:
    """The typed value of one record of ``__remote_log_metadata``.

    Raises DecodeError for bytes that are not a record Samsa reads, including
    a snapshot record (it never belongs in the topic), an unknown state id, or
    a segment whose fields contradict each other (no epochs, end before start).
    """
    api_key, _, body = decode_record(data)
    try:
        if api_key == SEGMENT_METADATA_KEY:
            return RemoteLogSegmentMetadata(
                segment_id=_segment_id(body["remote_log_segment_id"]),
                start_offset=body["start_offset"],
                end_offset=body["end_offset"],
                max_timestamp_ms=body["max_timestamp_ms"],
                broker_id=body["broker_id"],
                event_timestamp_ms=body["event_timestamp_ms"],
                segment_size_bytes=body["segment_size_in_bytes"],
                segment_leader_epochs=tuple(
                    EpochEntry(e["leader_epoch"], e["offset"])
                    for e in body["segment_leader_epochs"]
                ),
                state=RemoteLogSegmentState(body["remote_log_segment_state"]),
                custom_metadata=_custom(body["custom_metadata"]),
                txn_index_empty=body["txn_index_empty"],
            )
        if api_key == SEGMENT_UPDATE_KEY:
            return RemoteLogSegmentMetadataUpdate(
                segment_id=_segment_id(body["remote_log_segment_id"]),
                event_timestamp_ms=body["event_timestamp_ms"],
                state=RemoteLogSegmentState(body["remote_log_segment_state"]),
                broker_id=body["broker_id"],
                custom_metadata=_custom(body["custom_metadata"]),
            )
        if api_key == PARTITION_DELETE_KEY:
            return RemotePartitionDeleteMetadata(
                topic_id_partition=_tip(body["topic_id_partition"]),
                state=RemotePartitionDeleteState(body["remote_partition_delete_state"]),
                event_timestamp_ms=body["event_timestamp_ms"],
                broker_id=body["broker_id"],
            )
    except ValueError as exc:
        raise DecodeError(f"invalid remote log metadata: {exc}") from None
    raise DecodeError(f"remote log metadata api key {api_key} does not belong in the topic")
