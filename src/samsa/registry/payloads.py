"""A record's key or value read with the schema its Confluent header names, for people to look at.

The console's message browser shows what a serialized record says beside its
bytes.  Confluent's wire format puts the magic byte 0 and the schema id in
front of the body; for Protobuf the body starts with the message indexes
(zig-zag varints: how many, then the path to the message among the file's
and nested messages; a lone 0 means the first message).  The body is read
with the registry's own parsed schema (references resolved) by the format's
library: fastavro for Avro, protobuf's message factory for Protobuf, JSON for
JSON Schema, and turned into JSON-able values (bytes as hex, decimals and
times as strings).  Nothing here is on the broker's produce or fetch path:
only the console calls it, for the records of one page.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
import struct
import uuid
from dataclasses import dataclass
from typing import Any

from samsa.registry.records import SchemaValue
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState

__all__ = ["Decoded", "decode_payload", "schema_id_of"]

MAGIC_BYTE = 0
_ID = struct.Struct(">I")


@dataclass(frozen=True)
class Decoded:
    """What a framed payload says: its schema's id (and a subject and version that hold
    it), and the decoded value or why it could not be decoded."""

    schema_id: int
    subject: str | None = None
    version: int | None = None
    schema_type: str | None = None
    value: Any = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.schema_id}
        if self.subject is not None:
            out.update(subject=self.subject, version=self.version, type=self.schema_type)
        if self.error is not None:
            out["error"] = self.error
        else:
            out["json"] = json.dumps(self.value, indent=2, ensure_ascii=False)
        return out


def schema_id_of(data: bytes | None) -> int | None:
    """The schema id of a payload in Confluent's wire format, None for anything else."""
    if data is None or len(data) < 5 or data[0] != MAGIC_BYTE:
        return None
    return int(_ID.unpack_from(data, 1)[0])


def decode_payload(state: RegistryState, resolver: SchemaResolver, data: bytes) -> Decoded | None:
    """None when ``data`` is not in the wire format; otherwise what it decodes to."""
    schema_id = schema_id_of(data)
    if schema_id is None:
        return None
    stored = state.schema_by_id(schema_id)
    if stored is None:
        return Decoded(schema_id, error=f"the registry has no schema {schema_id}")
    body = memoryview(data)[5:]
    try:
        value = _decode(resolver, stored, bytes(body))
    except Exception as exc:  # each format's library raises its own errors
        return Decoded(
            schema_id,
            stored.subject,
            stored.version,
            stored.schema_type,
            error=f"does not decode with schema {schema_id}: {type(exc).__name__}: {exc}",
        )
    return Decoded(schema_id, stored.subject, stored.version, stored.schema_type, value)


def _decode(resolver: SchemaResolver, stored: SchemaValue, body: bytes) -> Any:
    parsed = resolver.parse_stored(stored)
    if stored.schema_type == "AVRO":
        import fastavro

        from samsa.registry.formats.avro import AvroSchema

        assert isinstance(parsed, AvroSchema)
        reader = io.BytesIO(body)
        value = fastavro.schemaless_reader(reader, parsed.parsed, None)
        if reader.tell() != len(body):
            raise ValueError(f"{len(body) - reader.tell()} bytes left after the record")
        return _plain(value)
    if stored.schema_type == "JSON":
        return json.loads(body)
    if stored.schema_type == "PROTOBUF":
        return _protobuf(parsed, body)
    raise ValueError(f"unknown schema type {stored.schema_type}")


def _protobuf(parsed: Any, body: bytes) -> Any:
    from google.protobuf import descriptor_pool, json_format, message_factory

    from samsa.registry.formats.protobuf import ProtobufSchema

    assert isinstance(parsed, ProtobufSchema)
    indexes, at = _message_indexes(body)
    fdp = parsed.fdp
    messages = fdp.message_type
    path: list[str] = []
    for index in indexes:
        if index >= len(messages):
            raise ValueError(f"message index {index} is not in the schema")
        path.append(messages[index].name)
        messages = messages[index].nested_type
    name = ".".join(([fdp.package] if fdp.package else []) + path)
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: Any) -> None:
        if file.name in added:
            return
        added.add(file.name)
        for dependency in file.dependency:
            if dependency in parsed.deps:
                add(parsed.deps[dependency])
        pool.Add(file)

    main = type(fdp)()
    main.CopyFrom(fdp)
    main.name = main.name or "schema.proto"
    add(main)
    message = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))()
    message.ParseFromString(body[at:])
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _message_indexes(body: bytes) -> tuple[list[int], int]:
    count, at = _zigzag(body, 0)
    if count == 0:
        return [0], at
    indexes = []
    for _ in range(count):
        index, at = _zigzag(body, at)
        indexes.append(index)
    return indexes, at


def _zigzag(data: bytes, at: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if at >= len(data):
            raise ValueError("the message indexes run past the payload")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), at
        shift += 7


def _plain(value: Any) -> Any:
    """fastavro's values as JSON: bytes as hex, decimals, times and uuids as strings."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex() if len(value) <= 64 else base64.b64encode(value).decode()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
