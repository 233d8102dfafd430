"""Avro types as Spark types and back, by the rules of Spark's own ``from_avro``/``to_avro``.

Reading, an Avro schema becomes the Spark type of the column it decodes into
(Spark's ``SchemaConverters.toSqlType``): records are structs, ``["null", T]``
is a nullable T, ``[int, long]`` a long and ``[float, double]`` a double, any
other union a struct of nullable ``member0``, ``member1``, ... (one per
non-null branch); enums and strings are strings, bytes and fixed are binary;
the logical types date, timestamp-millis/micros (timestamp),
local-timestamp-millis/micros (timestamp_ntz) and decimal (decimal) keep
their meaning.  A recursive record has no Spark type and is refused.

Writing without a given schema, a Spark type becomes an Avro schema
(``SchemaConverters.toAvroType``): a struct is a record named by the
``recordName`` and ``recordNamespace`` options (nested structs are records
named after their field, in a namespace of their parent's path), a nullable
field ``["null", T]`` with default null, so the schemas it registers can
evolve by adding fields; timestamps are ``timestamp-micros``, dates ``date``,
decimals ``decimal`` on bytes.

Both work on fastavro's parsed form (full names, named types defined once),
so named types from references and from earlier in the schema resolve alike.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

__all__ = ["SchemaConversionError", "avro_schema_of", "spark_type_of"]

PRIMITIVES: dict[str, DataType] = {
    "null": NullType(),
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "bytes": BinaryType(),
    "string": StringType(),
}


class SchemaConversionError(ValueError):
    """An Avro schema with no Spark type, or a Spark type with no Avro schema."""


def spark_type_of(parsed: Any, named: dict[str, Any]) -> tuple[DataType, bool]:
    """(Spark type, nullable) of a parsed Avro schema; ``named``: full name -> definition."""
    return _to_spark(parsed, named, ())


def _to_spark(node: Any, named: dict[str, Any], stack: tuple[str, ...]) -> tuple[DataType, bool]:
    if isinstance(node, str):
        if node in PRIMITIVES:
            return PRIMITIVES[node], node == "null"
        if node not in named:
            raise SchemaConversionError(f"unknown Avro type {node!r}")
        return _to_spark(named[node], named, stack)
    if isinstance(node, list):
        return _union(node, named, stack)
    kind = node["type"]
    logical = node.get("logicalType")
    if kind == "record" or kind == "error":
        name = node["name"]
        if name in stack:
            raise SchemaConversionError(
                f"Avro record {name} is recursive: Spark has no type for it"
            )
        fields = []
        for f in node["fields"]:
            data_type, nullable = _to_spark(f["type"], named, (*stack, name))
            fields.append(StructField(f["name"], data_type, nullable))
        return StructType(fields), False
    if kind == "enum":
        return StringType(), False
    if kind == "fixed":
        if logical == "decimal":
            return DecimalType(node["precision"], node.get("scale", 0)), False
        return BinaryType(), False
    if kind == "array":
        items, nullable = _to_spark(node["items"], named, stack)
        return ArrayType(items, nullable), False
    if kind == "map":
        values, nullable = _to_spark(node["values"], named, stack)
        return MapType(StringType(), values, nullable), False
    if logical == "date" and kind == "int":
        return DateType(), False
    if logical in ("timestamp-millis", "timestamp-micros") and kind == "long":
        return TimestampType(), False
    if logical in ("local-timestamp-millis", "local-timestamp-micros") and kind == "long":
        return TimestampNTZType(), False
    if logical == "decimal" and kind == "bytes":
        return DecimalType(node["precision"], node.get("scale", 0)), False
    if logical == "time-millis" and kind == "int":
        return IntegerType(), False  # as Spark's from_avro: no time type, the number
    if logical == "time-micros" and kind == "long":
        return LongType(), False
    return _to_spark(kind, named, stack)  # {"type": "string"}, {"type": "some.Named"}, ...


def _union(node: list[Any], named: dict[str, Any], stack: tuple[str, ...]) -> tuple[DataType, bool]:
    branches = [b for b in node if b != "null"]
    nullable = len(branches) < len(node)
    if not branches:
        return NullType(), True
    if len(branches) == 1:
        data_type, inner = _to_spark(branches[0], named, stack)
        return data_type, nullable or inner
    kinds = {plain_name(b, named) for b in branches}
    if kinds == {"int", "long"}:
        return LongType(), nullable
    if kinds == {"float", "double"}:
        return DoubleType(), nullable
    members = [
        StructField(f"member{i}", _to_spark(b, named, stack)[0], True)
        for i, b in enumerate(branches)
    ]
    return StructType(members), nullable


def plain_name(node: Any, named: dict[str, Any]) -> str | None:
    """The primitive a branch is with no logical type (None for anything else)."""
    if isinstance(node, str):
        return node if node in PRIMITIVES else None
    if isinstance(node, dict) and "logicalType" not in node and node.get("type") in PRIMITIVES:
        return str(node["type"])
    return None


# -- Spark to Avro ----------------------------------------------------------------------


def avro_schema_of(data_type: DataType, name: str, namespace: str) -> Any:
    """The Avro schema (JSON-able) that values of ``data_type`` are written with."""
    return _to_avro(data_type, name, namespace)


def _to_avro(data_type: DataType, name: str, namespace: str) -> Any:
    if isinstance(data_type, StructType):
        inner = f"{namespace}.{name}" if namespace else name
        fields = []
        for f in data_type.fields:
            avro = _to_avro(f.dataType, f.name, inner)
            if f.nullable:
                fields.append({"name": f.name, "type": ["null", avro], "default": None})
            else:
                fields.append({"name": f.name, "type": avro})
        record: dict[str, Any] = {"type": "record", "name": name}
        if namespace:
            record["namespace"] = namespace
        record["fields"] = fields
        return record
    if isinstance(data_type, ArrayType):
        items = _to_avro(data_type.elementType, name, namespace)
        return {"type": "array", "items": ["null", items] if data_type.containsNull else items}
    if isinstance(data_type, MapType):
        if not isinstance(data_type.keyType, StringType):
            raise SchemaConversionError(
                f"Avro maps have string keys; {data_type.simpleString()} cannot be written"
            )
        values = _to_avro(data_type.valueType, name, namespace)
        return {
            "type": "map",
            "values": ["null", values] if data_type.valueContainsNull else values,
        }
    if isinstance(data_type, DecimalType):
        return {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": data_type.precision,
            "scale": data_type.scale,
        }
    if isinstance(data_type, TimestampType):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if isinstance(data_type, TimestampNTZType):
        return {"type": "long", "logicalType": "local-timestamp-micros"}
    if isinstance(data_type, DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(data_type, (ByteType, ShortType, IntegerType)):
        return "int"
    for avro, spark in PRIMITIVES.items():
        if type(data_type) is type(spark):
            return avro
    raise SchemaConversionError(f"Spark type {data_type.simpleString()} has no Avro type")
