"""Record keys and values of the ``__consumer_offsets`` topic, byte for byte as Kafka writes them.

The group coordinator persists its state as a compacted log: one record per
committed offset and one per group.  Writing Kafka's exact layout keeps a Samsa
data dir readable by Kafka's tools (``kafka-dump-log --offsets-decoder``) and
lets a Samsa broker load offsets a Kafka broker wrote.

Keys start with an int16 *key version* that doubles as the record type: 0 and 1
are offset commits (Kafka writes 1), 2 is group metadata; newer Kafka versions
use higher numbers for other group types, which ``decode_key`` reports as
``UnknownRecordKey`` so a loader can skip them.  Values start with an int16
schema version.  A null value is a tombstone; callers handle it before decoding.

Value versions written by default match what Kafka 3.x/4.x writes: OffsetCommit
v3 (v1 when an explicit expire timestamp is given, since only v1 carries it) and
GroupMetadata v3.  All versions 0-4 decode; a value version newer than we know is
read with the v4 layout, as KIP-915 lets readers do.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.compiler import Decoder, Encoder, decoder_for, encoder_for
from samsa.protocol.schema import DataSchema, F, Field

OFFSET_COMMIT_KEY_VERSION = 1
"""Key version Kafka writes for offset commits (0 is read as the same record)."""
GROUP_METADATA_KEY_VERSION = 2

_OFFSET_KEY_FIELDS: tuple[Field, ...] = (
    F("group", "string"),
    F("topic", "string"),
    F("partition", "int32"),
)
_GROUP_KEY_FIELDS: tuple[Field, ...] = (F("group", "string"),)

OFFSET_COMMIT_VALUE = DataSchema(
    "OffsetCommitValue",
    valid=(0, 4),
    flexible=4,
    fields=(
        F("offset", "int64"),
        F("leader_epoch", "int32", "3+", default=-1),
        F("metadata", "string"),
        F("commit_timestamp", "int64"),
        F("expire_timestamp", "int64", "1", default=-1),
    ),
)

GROUP_METADATA_VALUE = DataSchema(
    "GroupMetadataValue",
    valid=(0, 4),
    flexible=4,
    fields=(
        F("protocol_type", "string"),
        F("generation", "int32"),
        F("protocol", "string", nullable="0+"),
        F("leader", "string", nullable="0+"),
        F("current_state_timestamp", "int64", "2+", default=-1),
        F(
            "members",
            "[]struct",
            fields=[
                F("member_id", "string"),
                F("group_instance_id", "string", "3+", nullable="3+", default=None),
                F("client_id", "string"),
                F("client_host", "string"),
                F("rebalance_timeout", "int32", "1+"),
                F("session_timeout", "int32"),
                F("subscription", "bytes"),
                F("assignment", "bytes"),
            ],
        ),
    ),
)

_I16 = struct.Struct(">h")


class UnknownRecordKey(DecodeError):
    """A key of a record type we do not load (e.g. KIP-848 consumer-group records)."""

    def __init__(self, key_version: int) -> None:
        self.key_version = key_version
        super().__init__(f"__consumer_offsets key version {key_version} is not one we read")


@dataclass(frozen=True, slots=True)
class OffsetKey:
    """Key of a committed offset: one record per (group, topic, partition)."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    """Key of a group's metadata record: one per group."""

    group: str


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """A committed offset; timestamps are epoch milliseconds, -1 when absent."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    version: int


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """One member of a classic group; ``subscription``/``assignment`` are protocol bytes."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """A classic group's state after a rebalance (or its emptiness)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...]
    version: int


# ----------------------------------------------------------------------------- keys


@functools.lru_cache(maxsize=4096)
def encode_offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """The record key of a committed offset (cached: a consumer commits the
    same few partitions over and over)."""
    body = {"group": group, "topic": topic, "partition": partition}
    return _I16.pack(OFFSET_COMMIT_KEY_VERSION) + _encode(_OFFSET_KEY_FIELDS, 0, False, body)


def encode_group_metadata_key(group: str) -> bytes:
    """The record key of a group's metadata."""
    return _I16.pack(GROUP_METADATA_KEY_VERSION) + _encode(
        _GROUP_KEY_FIELDS, 0, False, {"group": group}
    )


def decode_key(data: bytes | memoryview) -> OffsetKey | GroupKey:
    """Decode a ``__consumer_offsets`` key; raises ``UnknownRecordKey`` for other record types."""
    buf = memoryview(data)
    key_version = _read_version(buf, "key")
    if key_version in (0, 1):
        body = _decode_key_body(_OFFSET_KEY_FIELDS, buf)
        return OffsetKey(body["group"], body["topic"], body["partition"])
    if key_version == GROUP_METADATA_KEY_VERSION:
        body = _decode_key_body(_GROUP_KEY_FIELDS, buf)
        return GroupKey(body["group"])
    raise UnknownRecordKey(key_version)


# ----------------------------------------------------------------------------- values


def encode_offset_commit_value(
    offset: int,
    leader_epoch: int,
    metadata: str,
    commit_timestamp: int,
    expire_timestamp: int = -1,
    version: int | None = None,
) -> bytes:
    """The record value of a committed offset.

    Without an explicit ``version`` this picks Kafka's: v1 when an expire
    timestamp is set (v1 is the only version that stores it, for clients that
    still send a retention time), else v3.
    """
    if version is None:
        version = 1 if expire_timestamp != -1 else 3
    body = {
        "offset": offset,
        "leader_epoch": leader_epoch,
        "metadata": metadata,
        "commit_timestamp": commit_timestamp,
        "expire_timestamp": expire_timestamp,
    }
    return _encode_value(OFFSET_COMMIT_VALUE, version, body)


def decode_offset_commit_value(data: bytes | memoryview) -> OffsetCommitValue:
    """Decode a committed offset (any of v0-4; newer read as v4)."""
    version, body = _decode_value(OFFSET_COMMIT_VALUE, data)
    return OffsetCommitValue(
        offset=body["offset"],
        leader_epoch=body["leader_epoch"],
        metadata=body["metadata"],
        commit_timestamp=body["commit_timestamp"],
        expire_timestamp=body["expire_timestamp"],
        version=version,
    )


def encode_group_metadata_value(
    protocol_type: str,
    generation: int,
    protocol: str | None,
    leader: str | None,
    members: Iterable[MemberMetadata] = (),
    current_state_timestamp: int = -1,
    version: int = 3,
) -> bytes:
    """The record value of a group's metadata (Kafka writes v3)."""
    body = {
        "protocol_type": protocol_type,
        "generation": generation,
        "protocol": protocol,
        "leader": leader,
        "current_state_timestamp": current_state_timestamp,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "rebalance_timeout": m.rebalance_timeout,
                "session_timeout": m.session_timeout,
                "subscription": m.subscription,
                "assignment": m.assignment,
            }
            for m in members
        ],
    }
    return _encode_value(GROUP_METADATA_VALUE, version, body)


def decode_group_metadata_value(data: bytes | memoryview) -> GroupMetadataValue:
    """Decode a group's metadata (any of v0-4; newer read as v4)."""
    version, body = _decode_value(GROUP_METADATA_VALUE, data)
    members = tuple(
        MemberMetadata(
            member_id=m["member_id"],
            group_instance_id=m["group_instance_id"],
            client_id=m["client_id"],
            client_host=m["client_host"],
            rebalance_timeout=m["rebalance_timeout"],
            session_timeout=m["session_timeout"],
            subscription=m["subscription"],
            assignment=m["assignment"],
        )
        for m in body["members"]
    )
    return GroupMetadataValue(
        protocol_type=body["protocol_type"],
        generation=body["generation"],
        protocol=body["protocol"],
        leader=body["leader"],
        current_state_timestamp=body["current_state_timestamp"],
        members=members,
        version=version,
    )


# ----------------------------------------------------------------------------- helpers


# encoder_for/decoder_for are cached by value, which hashes every Field of the
# tuple on each call; these schemas are module constants, so look them up by
# identity instead (the tuple is kept in the value so its id stays its own).
_CODECS: dict[tuple[int, int, bool, bool], tuple[tuple[Field, ...], Any]] = {}


def _codec(fields: tuple[Field, ...], version: int, flexible: bool, encode: bool) -> Any:
    key = (id(fields), version, flexible, encode)
    hit = _CODECS.get(key)
    if hit is None:
        compile_ = encoder_for if encode else decoder_for
        hit = _CODECS[key] = (fields, compile_(fields, version, flexible))
    return hit[1]


def _encoder(fields: tuple[Field, ...], version: int, flexible: bool) -> Encoder:
    encoder: Encoder = _codec(fields, version, flexible, True)
    return encoder


def _decoder(fields: tuple[Field, ...], version: int, flexible: bool) -> Decoder:
    decoder: Decoder = _codec(fields, version, flexible, False)
    return decoder


def _encode(fields: tuple[Field, ...], version: int, flexible: bool, body: dict[str, Any]) -> bytes:
    chunks: list[Any] = []
    _encoder(fields, version, flexible)(body, chunks)
    return b"".join(chunks)


def _encode_value(schema: DataSchema, version: int, body: dict[str, Any]) -> bytes:
    low, high = schema.valid
    if not low <= version <= high:
        raise ValueError(f"{schema.name} has no version {version} (valid {low}-{high})")
    flexible = schema.flexible is not None and version >= schema.flexible
    return _I16.pack(version) + _encode(schema.fields, version, flexible, body)


def _read_version(buf: memoryview, what: str) -> int:
    if len(buf) < 2:
        raise DecodeError(f"__consumer_offsets {what} is too short to hold a version")
    (version,) = _I16.unpack_from(buf, 0)
    if version < 0:
        raise DecodeError(f"__consumer_offsets {what} has invalid version {version}")
    return int(version)


def _decode_key_body(fields: tuple[Field, ...], buf: memoryview) -> dict[str, Any]:
    """Key fields after the version; trailing bytes are ignored, as Kafka's reader does."""
    body, _end = _decoder(fields, 0, False)(buf, 2)
    return body


def _decode_value(schema: DataSchema, data: bytes | memoryview) -> tuple[int, dict[str, Any]]:
    buf = memoryview(data)
    version = _read_version(buf, "value")
    layout = min(version, schema.valid[1])
    flexible = schema.flexible is not None and layout >= schema.flexible
    body, _end = _decoder(schema.fields, layout, flexible)(buf, 2)
    return version, body
