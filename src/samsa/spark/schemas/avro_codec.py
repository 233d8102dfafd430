"""Confluent-framed Avro to Arrow columns and back: the work of typed columns on executors.

Decoding a column: each value's five-byte header names its writer schema
(magic byte 0, big-endian schema id); the body is read by fastavro with that
writer schema and resolved to the query's reader schema (fields added with
defaults, removed, promoted), so records written with any compatible version
land in one typed column.  For the common evolutions the resolution is a
projection built once per writer (``avro_projection``); fastavro resolves the
rest per record, at about twice the cost.  Writer schemas are fetched by
id once per executor process and kept.  The decoded records become one
Arrow array of the column's type (``pa.array`` over the batch's Python
values: no Python step per field).  A value that is not framed, names an id
the registry does not know, or does not decode fails the task
(``mode=FAILFAST``, Spark's default for ``from_avro``) or becomes null
(``mode=PERMISSIVE``).  Null values (tombstones) stay null.

Encoding: each row's value is written with the one schema the query
registered or looked up when it was planned, and framed with its id.

fastavro returns a few logical types as Python objects Spark's columns do not
take (uuid as ``UUID``, time-millis/micros as ``time``), and Spark's struct
for a multi-type union (``member0``, ...) is not fastavro's shape; the
converters below mend exactly those, and are skipped for schemas without them.
"""

from __future__ import annotations

import datetime
import decimal
import io
import struct
from collections.abc import Callable
from typing import Any

import fastavro

from samsa.spark.schemas.avro_projection import Projection, record_projection
from samsa.spark.schemas.avro_types import plain_name
from samsa.spark.schemas.registry_client import RegisteredSchema, RegistryClient

__all__ = ["AvroDecodeError", "AvroDecoder", "AvroEncoder", "parsed_schema"]

MAGIC_BYTE = 0
HEADER = struct.Struct(">bI")
Convert = Callable[[Any], Any]


class AvroDecodeError(ValueError):
    """A value that cannot be read as Confluent-framed Avro (FAILFAST); ``index``: its
    row in the batch, when it is one value's fault."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


def parsed_schema(
    client: RegistryClient, registered: RegisteredSchema
) -> tuple[Any, dict[str, Any]]:
    """fastavro's parsed schema and its named types, with its references resolved."""
    named: dict[str, Any] = {}
    _add_references(client, registered, named, 0)
    return fastavro.parse_schema(_json(registered.schema), named_schemas=named), named


def _add_references(
    client: RegistryClient, registered: RegisteredSchema, named: dict[str, Any], depth: int
) -> None:
    if depth > 32:
        raise AvroDecodeError("schema references nest too deeply")
    for ref in registered.references:
        referenced = client.version(ref.subject, ref.version)
        _add_references(client, referenced, named, depth + 1)
        fastavro.parse_schema(_json(referenced.schema), named_schemas=named)


def _json(text: str) -> Any:
    import json

    return json.loads(text)


class AvroDecoder:
    def __init__(
        self, client: RegistryClient, reader: RegisteredSchema, permissive: bool = False
    ) -> None:
        self.client = client
        self.reader_id = reader.id
        self.reader, self.named = parsed_schema(client, reader)
        self.convert = value_converter(self.reader, self.named)
        self.permissive = permissive
        self._writers: dict[int, Any] = {reader.id: self.reader}
        # Per older writer: the reader's record from the writer's, built once, where the
        # two differ only in simple ways (``avro_projection``); None: fastavro resolves.
        self._projections: dict[int, Projection | None] = {}

    def decode_values(self, values: list[bytes | None]) -> list[Any]:
        """The decoded value of each framed Avro value (None for None, and for
        failures when permissive); raises AvroDecodeError otherwise."""
        out: list[Any] = []
        append = out.append
        read = fastavro.schemaless_reader
        reader, convert, projections = self.reader, self.convert, self._projections
        for index, value in enumerate(values):
            if value is None:
                append(None)
                continue
            try:
                if len(value) < 5 or value[0] != MAGIC_BYTE:
                    raise AvroDecodeError("it does not start with the magic byte 0 and a schema id")
                schema_id = HEADER.unpack_from(value)[1]
                writer = self._writers.get(schema_id)
                if writer is None:
                    writer = self._writer(schema_id)
                body = io.BytesIO(memoryview(value)[5:])
                if schema_id == self.reader_id:
                    found = read(body, writer, None)
                elif (project := projections.get(schema_id)) is not None:
                    found = project(read(body, writer, None))
                else:
                    found = read(body, writer, reader)
                append(found if convert is None else convert(found))
            except Exception as exc:
                if self.permissive:
                    append(None)
                    continue
                raise AvroDecodeError(str(exc), index) from None
        return out

    def _writer(self, schema_id: int) -> Any:
        registered = self.client.by_id(schema_id)
        if registered.schema_type != "AVRO":
            raise AvroDecodeError(f"schema id {schema_id} is {registered.schema_type}, not AVRO")
        parsed, _ = parsed_schema(self.client, registered)
        self._projections[schema_id] = record_projection(parsed, self.reader)
        self._writers[schema_id] = parsed
        return parsed


class AvroEncoder:
    """Values written with one registered schema, framed with its id."""

    def __init__(self, schema_id: int, schema: Any, named: dict[str, Any]) -> None:
        self.header = HEADER.pack(MAGIC_BYTE, schema_id)
        self.schema = schema
        self.convert = row_converter(schema, named)

    def encode_values(self, values: list[Any]) -> list[bytes | None]:
        out: list[bytes | None] = []
        write, schema, header, convert = (
            fastavro.schemaless_writer,
            self.schema,
            self.header,
            self.convert,
        )
        for value in values:
            if value is None:
                out.append(None)
                continue
            buf = io.BytesIO()
            buf.write(header)
            write(buf, schema, value if convert is None else convert(value))
            out.append(buf.getvalue())
        return out


# -- converters -------------------------------------------------------------------------


def value_converter(node: Any, named: dict[str, Any]) -> Convert | None:
    """fastavro's value of ``node`` as Spark's column takes it; None when it already is."""
    return _reading(node, named, ())


def _reading(node: Any, named: dict[str, Any], stack: tuple[str, ...]) -> Convert | None:
    if isinstance(node, str):
        return _reading(named[node], named, stack) if node in named else None
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if len(branches) == 1:
            inner = _reading(branches[0], named, stack)
            return None if inner is None else (lambda v: None if v is None else inner(v))
        kinds = {plain_name(b, named) for b in branches}
        if kinds in ({"int", "long"}, {"float", "double"}) or not branches:
            return None
        return _to_members(branches, named, stack)
    kind, logical = node["type"], node.get("logicalType")
    if kind in ("record", "error"):
        if node["name"] in stack:
            return None
        fields = [
            (f["name"], _reading(f["type"], named, (*stack, node["name"]))) for f in node["fields"]
        ]
        if all(c is None for _, c in fields):
            return None
        changed = [(name, c) for name, c in fields if c is not None]

        def record(v: dict[str, Any]) -> dict[str, Any]:
            for name, c in changed:
                v[name] = c(v[name])
            return v

        return record
    if kind == "array":
        items = _reading(node["items"], named, stack)
        return None if items is None else (lambda v: [items(x) for x in v])
    if kind == "map":
        values = _reading(node["values"], named, stack)
        return None if values is None else (lambda v: {k: values(x) for k, x in v.items()})
    if logical == "uuid":
        return str
    if logical == "decimal":
        scale = int(node.get("scale", 0))
        return lambda v: v if isinstance(v, decimal.Decimal) else _unscaled(v, scale)
    if logical in _EPOCH_UNITS:
        unit, zone = _EPOCH_UNITS[logical]
        return lambda v: v if isinstance(v, datetime.datetime) else _instant(v, unit, zone)
    if logical == "date":
        return lambda v: v if isinstance(v, datetime.date) else _EPOCH_DAY + datetime.timedelta(v)
    if logical == "time-millis":
        return lambda v: v if isinstance(v, int) else _micros(v) // 1000
    if logical == "time-micros":
        return lambda v: v if isinstance(v, int) else _micros(v)
    if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in named):
        return _reading(kind, named, stack)
    return None


# A field missing from the writer's schema gets the reader's default, which fastavro
# hands over as written in the schema (a number, a string of bytes): the logical
# types' converters take those too.
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_DAY = datetime.date(1970, 1, 1)
_EPOCH_UNITS = {
    "timestamp-millis": (1000, datetime.UTC),
    "timestamp-micros": (1, datetime.UTC),
    "local-timestamp-millis": (1000, None),
    "local-timestamp-micros": (1, None),
}


def _instant(v: int, unit: int, zone: datetime.tzinfo | None) -> datetime.datetime:
    at = _EPOCH + datetime.timedelta(microseconds=v * unit)
    return at if zone is not None else at.replace(tzinfo=None)


def _unscaled(v: str | bytes, scale: int) -> decimal.Decimal:
    raw = v.encode("latin-1") if isinstance(v, str) else bytes(v)
    return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-scale)


def _micros(t: datetime.time) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond


def _to_members(branches: list[Any], named: dict[str, Any], stack: tuple[str, ...]) -> Convert:
    """A multi-type union's value as Spark's struct of ``member0``, ``member1``, ..."""
    tests = [_matcher(b, named) for b in branches]
    inners = [_reading(b, named, stack) for b in branches]
    names = [f"member{i}" for i in range(len(branches))]

    def members(v: Any) -> Any:
        if v is None:
            return None
        out: dict[str, Any] = dict.fromkeys(names)
        for name, test, inner in zip(names, tests, inners, strict=True):
            if test(v):
                out[name] = v if inner is None else inner(v)
                break
        return out

    return members


def _matcher(node: Any, named: dict[str, Any]) -> Callable[[Any], bool]:
    while isinstance(node, str) and node in named:
        node = named[node]
    kind = node if isinstance(node, str) else node.get("type")
    by_kind: dict[str, Callable[[Any], bool]] = {
        "boolean": lambda v: isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "long": lambda v: isinstance(v, (int, datetime.datetime)) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, float),
        "double": lambda v: isinstance(v, float),
        "string": lambda v: isinstance(v, str),
        "enum": lambda v: isinstance(v, str),
        "bytes": lambda v: isinstance(v, (bytes, bytearray)),
        "fixed": lambda v: isinstance(v, (bytes, bytearray)),
        "array": lambda v: isinstance(v, list),
        "map": lambda v: isinstance(v, dict),
        "record": lambda v: isinstance(v, dict),
    }
    return by_kind.get(str(kind), lambda v: False)


def row_converter(node: Any, named: dict[str, Any]) -> Convert | None:
    """A Spark row's value as fastavro writes ``node``: only Spark's union structs change."""
    return _writing(node, named, ())


def _writing(node: Any, named: dict[str, Any], stack: tuple[str, ...]) -> Convert | None:
    if isinstance(node, str):
        return _writing(named[node], named, stack) if node in named else None
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if len(branches) <= 1:
            inner = _writing(branches[0], named, stack) if branches else None
            return None if inner is None else (lambda v: None if v is None else inner(v))
        kinds = {plain_name(b, named) for b in branches}
        if kinds in ({"int", "long"}, {"float", "double"}):
            return None

        def first_member(v: Any) -> Any:
            if not isinstance(v, dict):
                return v
            return next((x for x in v.values() if x is not None), None)

        return first_member
    kind = node["type"]
    if kind in ("record", "error"):
        if node["name"] in stack:
            return None
        fields = [
            (f["name"], _writing(f["type"], named, (*stack, node["name"]))) for f in node["fields"]
        ]
        changed = [(name, c) for name, c in fields if c is not None]
        if not changed:
            return None

        def record(v: dict[str, Any]) -> dict[str, Any]:
            v = dict(v)
            for name, c in changed:
                v[name] = c(v.get(name))
            return v

        return record
    if kind == "array":
        items = _writing(node["items"], named, stack)
        return None if items is None else (lambda v: None if v is None else [items(x) for x in v])
    if kind == "map":
        # Arrow hands a map as (key, value) pairs; fastavro writes a dict.
        values = _writing(node["values"], named, stack) or (lambda x: x)
        return lambda v: None if v is None else {k: values(x) for k, x in _pairs(v)}
    if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in named):
        return _writing(kind, named, stack)
    return None


def _pairs(v: Any) -> Any:
    return v.items() if isinstance(v, dict) else v
