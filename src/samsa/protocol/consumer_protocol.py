"""The consumer protocol: what consumers put inside JoinGroup and SyncGroup bytes.

The group coordinator treats member metadata and assignments as opaque bytes;
only consumers (and admin tools that describe groups) read them.  Kafka defines
them as two versioned data schemas, ``ConsumerProtocolSubscription`` and
``ConsumerProtocolAssignment`` (v0-3, never flexible), each written behind an
int16 version.

Kafka promises that newer versions only append fields, and its readers decode
an unknown newer version with the newest layout they know, ignoring whatever
follows; we do the same so a Samsa consumer can sit in a group with newer Java
members.  An empty assignment buffer (what a member gets when the leader gave it
nothing, or from some older clients) decodes to an empty assignment.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.compiler import decoder_for, encoder_for
from samsa.protocol.schema import DataSchema, F

PROTOCOL_TYPE = "consumer"
"""The JoinGroup ``protocol_type`` of consumer groups."""

SUBSCRIPTION = DataSchema(
    "ConsumerProtocolSubscription",
    valid=(0, 3),
    flexible=None,
    fields=(
        F("topics", "[]string"),
        F("user_data", "bytes", nullable="0+", default=None),
        F(
            "owned_partitions",
            "[]struct",
            "1+",
            fields=[F("topic", "string", "1+"), F("partitions", "[]int32", "1+")],
        ),
        F("generation_id", "int32", "2+", default=-1),
        F("rack_id", "string", "3+", nullable="3+", default=None),
    ),
)

ASSIGNMENT = DataSchema(
    "ConsumerProtocolAssignment",
    valid=(0, 3),
    flexible=None,
    fields=(
        F(
            "assigned_partitions",
            "[]struct",
            fields=[F("topic", "string"), F("partitions", "[]int32")],
        ),
        F("user_data", "bytes", nullable="0+", default=None),
    ),
)

_VERSION = struct.Struct(">h")


@dataclass(frozen=True, slots=True)
class Subscription:
    """A member's subscription as sent in JoinGroup ``protocols[].metadata``.

    ``version`` is the version found on the wire (it may be newer than we know).
    ``owned_partitions`` (v1+) lets cooperative assignors keep partitions where
    they are; ``generation_id`` (v2+) tells the leader whether that ownership is
    current; ``rack_id`` (v3+) enables rack-aware assignment.
    """

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: Mapping[str, tuple[int, ...]] = field(default_factory=dict, hash=False)
    generation_id: int = -1
    rack_id: str | None = None
    version: int = SUBSCRIPTION.valid[1]


@dataclass(frozen=True, slots=True)
class Assignment:
    """A member's assignment as sent in SyncGroup ``assignment`` (topic -> partitions)."""

    partitions: Mapping[str, tuple[int, ...]] = field(default_factory=dict, hash=False)
    user_data: bytes | None = None
    version: int = ASSIGNMENT.valid[1]


def encode_subscription(
    topics: Iterable[str],
    user_data: bytes | None = None,
    owned_partitions: Mapping[str, Iterable[int]] | None = None,
    generation_id: int = -1,
    rack_id: str | None = None,
    version: int = SUBSCRIPTION.valid[1],
) -> bytes:
    """Serialize a subscription; fields the chosen version lacks are dropped.

    The default version is the newest, as Kafka's own consumer sends it; older
    readers decode the prefix they know.
    """
    body = {
        "topics": list(topics),
        "user_data": user_data,
        "owned_partitions": [
            {"topic": topic, "partitions": list(parts)}
            for topic, parts in (owned_partitions or {}).items()
        ],
        "generation_id": generation_id,
        "rack_id": rack_id,
    }
    return _encode(SUBSCRIPTION, version, body)


def decode_subscription(data: bytes | memoryview) -> Subscription:
    """Parse JoinGroup member metadata of the consumer protocol."""
    version, body = _decode(SUBSCRIPTION, data)
    return Subscription(
        topics=tuple(body["topics"]),
        user_data=body["user_data"],
        owned_partitions=_partition_map(body["owned_partitions"]),
        generation_id=body["generation_id"],
        rack_id=body["rack_id"],
        version=version,
    )


def encode_assignment(
    partitions: Mapping[str, Iterable[int]],
    user_data: bytes | None = None,
    version: int = ASSIGNMENT.valid[1],
) -> bytes:
    """Serialize an assignment (topic -> partition ids) for SyncGroup."""
    body = {
        "assigned_partitions": [
            {"topic": topic, "partitions": list(parts)} for topic, parts in partitions.items()
        ],
        "user_data": user_data,
    }
    return _encode(ASSIGNMENT, version, body)


def decode_assignment(data: bytes | memoryview) -> Assignment:
    """Parse SyncGroup assignment bytes; empty bytes mean "nothing assigned"."""
    if len(data) == 0:
        return Assignment()
    version, body = _decode(ASSIGNMENT, data)
    return Assignment(
        partitions=_partition_map(body["assigned_partitions"]),
        user_data=body["user_data"],
        version=version,
    )


def _partition_map(entries: list[dict[str, Any]]) -> dict[str, tuple[int, ...]]:
    """Topic -> partitions; a topic listed twice (never sent by sane peers) is merged."""
    result: dict[str, tuple[int, ...]] = {}
    for entry in entries:
        topic = entry["topic"]
        result[topic] = result.get(topic, ()) + tuple(entry["partitions"])
    return result


def _encode(schema: DataSchema, version: int, body: dict[str, Any]) -> bytes:
    low, high = schema.valid
    if not low <= version <= high:
        raise ValueError(f"{schema.name} has no version {version} (valid {low}-{high})")
    chunks: list[Any] = [_VERSION.pack(version)]
    encoder_for(schema.fields, version, False)(body, chunks)
    return b"".join(chunks)


def _decode(schema: DataSchema, data: bytes | memoryview) -> tuple[int, dict[str, Any]]:
    """Decode behind the int16 version; newer versions are read with our newest layout."""
    buf = memoryview(data)
    if len(buf) < 2:
        raise DecodeError(f"{schema.name} is too short to hold a version")
    (version,) = _VERSION.unpack_from(buf, 0)
    if version < schema.valid[0]:
        raise DecodeError(f"{schema.name} has invalid version {version}")
    layout = min(version, schema.valid[1])
    body, _end = decoder_for(schema.fields, layout, False)(buf, 2)
    return version, body
