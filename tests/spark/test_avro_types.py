"""Avro types as Spark types and back (the rules of Spark's ``from_avro``/``to_avro``), and the
converters that mend what fastavro returns; no SparkSession needed."""

from __future__ import annotations

import datetime
import decimal
import io
import json
from typing import Any

import fastavro
import pytest
from pyspark.sql.types import (
    ArrayType,
    DateType,
    DecimalType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from samsa.spark.schemas.avro_codec import row_converter, value_converter
from samsa.spark.schemas.avro_types import SchemaConversionError, avro_schema_of, spark_type_of


def parse(schema: Any) -> tuple[Any, dict[str, Any]]:
    named: dict[str, Any] = {}
    return fastavro.parse_schema(schema, named_schemas=named), named


def spark_of(schema: Any) -> str:
    return spark_type_of(*parse(schema))[0].simpleString()


def test_avro_types_map_onto_sparks() -> None:
    assert spark_of("string") == "string"
    assert spark_of(["null", "int"]) == "int"
    assert spark_of(["int", "long"]) == "bigint"
    assert spark_of(["null", "float", "double"]) == "double"
    assert spark_of(["null", "int", "string"]) == "struct<member0:int,member1:string>"
    assert spark_of({"type": "int", "logicalType": "date"}) == "date"
    assert spark_of({"type": "long", "logicalType": "timestamp-micros"}) == "timestamp"
    assert spark_of({"type": "long", "logicalType": "local-timestamp-millis"}) == "timestamp_ntz"
    assert spark_of({"type": "int", "logicalType": "time-millis"}) == "int"
    decimal_fixed = {
        "type": "fixed",
        "name": "D",
        "size": 8,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 3,
    }
    assert spark_of(decimal_fixed) == "decimal(10,3)"
    record = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
            {"name": "again", "type": ["null", "E"]},
            {"name": "m", "type": {"type": "map", "values": ["null", "bytes"]}},
        ],
    }
    assert spark_of(record) == "struct<e:string,again:string,m:map<string,binary>>"
    recursive = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"]}],
    }
    with pytest.raises(SchemaConversionError, match="recursive"):
        spark_of(recursive)


def test_spark_types_become_evolvable_avro_records() -> None:
    spark = StructType(
        [
            StructField("id", LongType(), False),
            StructField("at", TimestampType(), True),
            StructField("day", DateType(), True),
            StructField("price", DecimalType(9, 2), True),
            StructField("tags", ArrayType(StringType(), True), True),
            StructField("inner", StructType([StructField("x", LongType(), True)]), True),
        ]
    )
    schema = avro_schema_of(spark, "Line", "shop")
    assert schema["name"] == "Line" and schema["namespace"] == "shop"
    fields = {f["name"]: f for f in schema["fields"]}
    assert fields["id"]["type"] == "long" and "default" not in fields["id"]
    assert fields["at"] == {
        "name": "at",
        "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
        "default": None,
    }
    assert fields["inner"]["type"][1]["name"] == "inner"
    assert fields["inner"]["type"][1]["namespace"] == "shop.Line"
    # ... and read back into the same Spark type.
    assert spark_type_of(*parse(json.loads(json.dumps(schema))))[0] == spark.__class__(
        [StructField(f.name, f.dataType, f.nullable) for f in spark.fields]
    )
    with pytest.raises(SchemaConversionError, match="string keys"):
        avro_schema_of(MapType(LongType(), LongType()), "M", "")


def test_defaults_and_unions_come_out_as_sparks_columns_take_them() -> None:
    writer = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}
    reader = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "id", "type": "long"},
            {
                "name": "at",
                "type": {"type": "long", "logicalType": "timestamp-millis"},
                "default": 1500,
            },
            {
                "name": "price",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
                "default": "\u0001\u0000",
            },
            {"name": "ref", "type": ["null", "long", "string"], "default": None},
            {"name": "map", "type": {"type": "map", "values": "long"}, "default": {}},
        ],
    }
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parse(writer)[0], {"id": 7})
    parsed, named = parse(reader)
    read = fastavro.schemaless_reader(io.BytesIO(buf.getvalue()), parse(writer)[0], parsed)
    convert = value_converter(parsed, named)
    assert convert is not None
    got = convert(read)
    assert got["at"] == datetime.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=datetime.UTC)
    assert got["price"] == decimal.Decimal("2.56")
    assert got["ref"] is None
    assert convert({**read, "ref": "x"})["ref"] == {"member0": None, "member1": "x"}
    # Writing: Spark's member struct back to the branch, Arrow's map pairs to a dict.
    back = row_converter(parsed, named)
    assert back is not None
    row = {
        "id": 1,
        "at": 0,
        "price": decimal.Decimal("1.00"),
        "ref": {"member0": 5, "member1": None},
        "map": [("a", 1)],
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, back(row))
    again = fastavro.schemaless_reader(io.BytesIO(out.getvalue()), parsed, None)
    assert again["ref"] == 5 and again["map"] == {"a": 1}
    assert value_converter(parse(writer)[0], {}) is None, "plain schemas need no converter"
