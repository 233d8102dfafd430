"""KRaft metadata records, framed byte for byte as Kafka's MetadataRecordSerde frames them.

Every data record of the ``__cluster_metadata`` log (and of its snapshots) is a
record value holding one metadata record (Kafka's ``ApiMessageAndVersion``)::

    frame version (unsigned varint, always 1)
    api key       (unsigned varint: which record, e.g. 3 = PartitionRecord)
    version       (unsigned varint: the record's schema version)
    body          (the record at that version; every metadata record is flexible)

Writing Kafka's exact layout keeps a Samsa metadata log readable by Kafka's
tools (``kafka-dump-log --cluster-metadata-decoder``, ``kafka-metadata-shell``).
As in Kafka, frame version 0 (KRaft's 2.8 preview) and any other frame version
are refused, and so are bytes left over after the body.

Decoding is on the start-up path: a node replays its whole snapshot (one
PartitionRecord per partition) before it serves anything.  So the three varints
are read inline when they are one byte each (always, for today's keys and
versions), the compiled decoder is found by one dict lookup on an int, and each
(record, version) is compiled once, on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.compiler import Decoder, Encoder, decoder_for, encoder_for
from samsa.protocol.metadata import acls, brokers, cluster, quotas, topics
from samsa.protocol.metadata import delegation_tokens as token_records
from samsa.protocol.metadata import scram as scram_records
from samsa.protocol.primitives import read_uvarint, uvarint_bytes
from samsa.protocol.schema import DataSchema

__all__ = [
    "FRAME_VERSION",
    "METADATA_API_KEYS",
    "METADATA_SCHEMAS",
    "MetadataRecord",
    "decode_metadata_record",
    "encode_metadata_record",
    "latest_version",
    "make_record",
]

FRAME_VERSION = 1
"""The only frame version Kafka writes and reads (``AbstractApiMessageSerde``)."""

_MAX_SHORT = 32767

_BY_KEY: dict[int, DataSchema] = dict(
    brokers.RECORDS + topics.RECORDS + cluster.RECORDS + acls.RECORDS + quotas.RECORDS
)
_BY_KEY.update(scram_records.RECORDS)
_BY_KEY.update(token_records.RECORDS)

METADATA_SCHEMAS: dict[str, DataSchema] = {s.name: s for s in _BY_KEY.values()}
"""Every metadata record Samsa knows, by Kafka's record name."""

METADATA_API_KEYS: dict[str, int] = {s.name: key for key, s in _BY_KEY.items()}
"""Kafka's api key (``MetadataRecordType``) of each record, by name."""


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """One metadata record and the version it is (to be) written in.

    ``body`` holds every field of the schema, snake_case named, as every decoded
    message in Samsa; uuids are 16 raw bytes.
    """

    name: str
    version: int
    body: dict[str, Any]


# ----------------------------------------------------------------------------- codecs


@dataclass(frozen=True, slots=True)
class _Reader:
    name: str
    version: int
    decode: Decoder


# Compiled decoders by (api key << 16 | version): an int hashes fastest.
_READERS: dict[int, _Reader] = {}
# Compiled encoders and their frame prefix, by (name, version).
_WRITERS: dict[tuple[str, int], tuple[bytes, Encoder]] = {}


def _reader(api_key: int, version: int) -> _Reader:
    schema = _BY_KEY.get(api_key)
    if schema is None:
        raise DecodeError(f"unknown metadata record api key {api_key}")
    low, high = schema.valid
    if not low <= version <= high:
        raise DecodeError(
            f"{schema.name} version {version} is not one Samsa reads (versions {low}-{high})"
        )
    reader = _Reader(
        schema.name, version, decoder_for(schema.fields, version, _flexible(schema, version))
    )
    _READERS[(api_key << 16) | version] = reader
    return reader


def _writer(name: str, version: int) -> tuple[bytes, Encoder]:
    writer = _WRITERS.get((name, version))
    if writer is not None:
        return writer
    schema = METADATA_SCHEMAS.get(name)
    if schema is None:
        raise ValueError(f"unknown metadata record {name!r}")
    low, high = schema.valid
    if not low <= version <= high:
        raise ValueError(f"{name} has no version {version} (versions {low}-{high})")
    prefix = (
        uvarint_bytes(FRAME_VERSION)
        + uvarint_bytes(METADATA_API_KEYS[name])
        + uvarint_bytes(version)
    )
    writer = _WRITERS[(name, version)] = (
        prefix,
        encoder_for(schema.fields, version, _flexible(schema, version)),
    )
    return writer


def _flexible(schema: DataSchema, version: int) -> bool:
    return schema.flexible is not None and version >= schema.flexible


# ----------------------------------------------------------------------------- public API


def encode_metadata_record(record: MetadataRecord) -> bytes:
    """The record value Kafka writes for ``record``: frame header, then the body.

    Raises ValueError for a record name or version Samsa does not know (a
    programming error, unlike bad bytes on decode).
    """
    prefix, encode = _writer(record.name, record.version)
    chunks: list[Any] = [prefix]
    encode(record.body, chunks)
    return b"".join(chunks)


def decode_metadata_record(
    data: bytes | bytearray | memoryview,
    _readers: dict[int, _Reader] = _READERS,
    _memoryview: Callable[[Any], memoryview] = memoryview,
) -> MetadataRecord:
    """Decode one record value of the metadata log; raises DecodeError on bad bytes."""
    buf = data if type(data) is memoryview else _memoryview(data)
    size = len(buf)
    # Fast path: frame version 1 and one-byte api key and version.
    if size >= 3 and buf[0] == FRAME_VERSION and buf[1] < 0x80 and buf[2] < 0x80:
        reader = _readers.get((buf[1] << 16) | buf[2])
        if reader is None:
            reader = _reader(buf[1], buf[2])
        pos = 3
    else:
        reader, pos = _slow_header(buf)
    body, end = reader.decode(buf, pos)
    if end != size:
        raise DecodeError(f"{size - end} byte(s) of garbage after {reader.name}")
    return MetadataRecord(reader.name, reader.version, body)


def latest_version(name: str) -> int:
    """The newest version of a record Samsa writes (raises KeyError if unknown)."""
    return METADATA_SCHEMAS[name].valid[1]


def make_record(name: str, /, **fields: Any) -> MetadataRecord:
    """A record at its latest version; fields not given take the schema's defaults.

    ``name`` is positional-only: several records have a field called ``name``
    (``make_record("TopicRecord", name="orders", topic_id=...)``).  Raises
    ValueError for an unknown record or field name, so a typo fails where it is
    made rather than writing a default into the log.
    """
    shape = _SHAPES.get(name)
    if shape is None:
        shape = _shape(name)
    version, defaults = shape
    body: dict[str, Any] = {}
    for field_name, default, is_list in defaults:
        if field_name in fields:
            body[field_name] = fields.pop(field_name)
        else:
            body[field_name] = list(default) if is_list else default
    if fields:
        raise ValueError(f"{name} has no field(s) {', '.join(sorted(fields))}")
    return MetadataRecord(name, version, body)


_SHAPES: dict[str, tuple[int, tuple[tuple[str, Any, bool], ...]]] = {}
"""Per record name: its latest version and (field, default, default is a list):
the controller makes thousands of records per fencing at 10,000 partitions,
and asking the schema for every default was a quarter of that work."""


def _shape(name: str) -> tuple[int, tuple[tuple[str, Any, bool], ...]]:
    schema = METADATA_SCHEMAS.get(name)
    if schema is None:
        raise ValueError(f"unknown metadata record {name!r}")
    defaults = []
    for f in schema.fields:
        value = f.default_value()
        defaults.append((f.name, value, isinstance(value, list)))
    shape = _SHAPES[name] = (schema.valid[1], tuple(defaults))
    return shape


def _slow_header(buf: memoryview) -> tuple[_Reader, int]:
    """Read the frame header when a varint is not one byte (or the frame is bad)."""
    if len(buf) == 0:
        raise DecodeError("empty metadata record")
    frame_version, pos = _read_short(buf, 0, "frame version")
    if frame_version == 0:
        raise DecodeError(
            "metadata record with frame version 0 (KRaft's 2.8 preview) cannot be read"
        )
    if frame_version != FRAME_VERSION:
        raise DecodeError(
            f"unknown metadata record frame version {frame_version} "
            f"(only frame version {FRAME_VERSION} is supported)"
        )
    api_key, pos = _read_short(buf, pos, "api key")
    version, pos = _read_short(buf, pos, "version")
    reader = _READERS.get((api_key << 16) | version) or _reader(api_key, version)
    return reader, pos


def _read_short(buf: memoryview, pos: int, what: str) -> tuple[int, int]:
    try:
        value, pos = read_uvarint(buf, pos)
    except DecodeError as exc:
        raise DecodeError(f"metadata record {what}: {exc}") from None
    if value > _MAX_SHORT:
        raise DecodeError(f"metadata record {what} {value} is too large")
    return value, pos
