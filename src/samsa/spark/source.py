"""The ``samsa`` data source: Spark's Kafka connector schema and options, in Python.

With ``valueFormat=avro`` (or ``keyFormat``) the column is a struct of the
subject's schema instead of bytes (``schemas.columns``): the schema is asked
of the registry when Spark plans, here, and again when the reader or writer
is made (the DataSource is rebuilt in each planner process), so both must
agree: a schema registered in between fails the query with a message rather
than mixing two shapes.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from samsa.spark.batch_reader import SamsaBatchReader
from samsa.spark.options import (
    ReadOptions,
    SamsaSparkError,
    parse_read_options,
    parse_write_options,
)
from samsa.spark.schemas.columns import ReadColumn, TypedColumnError, resolve_read
from samsa.spark.stream_reader import SamsaStreamReader
from samsa.spark.writer import (
    SamsaBatchWriter,
    SamsaStreamWriter,
    check_write_schema,
    planned_write,
)

BASE_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"
)
HEADERS = "headers array<struct<key: string, value: binary>>"


def typed_columns(options: ReadOptions) -> tuple[ReadColumn, ...]:
    """The typed columns' reader schemas (the registry is asked), or () for bytes."""
    if not (options.key_format.typed or options.value_format.typed):
        return ()
    try:
        return resolve_read((options.key_format, options.value_format), options.registry)
    except TypedColumnError as exc:
        raise SamsaSparkError(str(exc)) from None


def read_schema(include_headers: bool, typed: tuple[ReadColumn, ...]) -> StructType:
    """Spark's Kafka schema with the typed columns' types (built, not parsed: the planner
    processes have no SparkContext to parse DDL with)."""
    by_name = {col.column: col.spark_type for col in typed}
    fields = [
        StructField("key", by_name.get("key", BinaryType()), True),
        StructField("value", by_name.get("value", BinaryType()), True),
        StructField("topic", StringType(), True),
        StructField("partition", IntegerType(), True),
        StructField("offset", LongType(), True),
        StructField("timestamp", TimestampType(), True),
        StructField("timestampType", IntegerType(), True),
    ]
    if include_headers:
        header = StructType(
            [StructField("key", StringType(), True), StructField("value", BinaryType(), True)]
        )
        fields.append(StructField("headers", ArrayType(header, True), True))
    return StructType(fields)


class SamsaDataSource(DataSource):
    """``format("samsa")``: read and write Kafka topics of Samsa or any Kafka broker.

    Cheap to build and free of side effects: Spark pickles it into every
    planner and worker process, and only the reader and writer methods run
    there."""

    @classmethod
    def name(cls) -> str:
        return "samsa"

    def schema(self) -> StructType | str:
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        if not any(
            str(self.options.get(f"{c}Format", "binary")).lower() != "binary"
            for c in ("key", "value")
        ):
            return f"{BASE_SCHEMA}, {HEADERS}" if include else BASE_SCHEMA
        options = parse_read_options(self.options, stream=False)
        return read_schema(include, typed_columns(options))

    def reader(self, schema: StructType) -> SamsaBatchReader:
        options = parse_read_options(self.options, stream=False)
        return SamsaBatchReader(options, _planned(options, schema))

    def streamReader(self, schema: StructType) -> SamsaStreamReader:
        options = parse_read_options(self.options, stream=True)
        return SamsaStreamReader(options, _planned(options, schema))

    def writer(self, schema: StructType, overwrite: bool) -> SamsaBatchWriter:
        options = parse_write_options(self.options)
        check_write_schema(schema, options)
        return SamsaBatchWriter(options, planned_write(schema, options))

    def streamWriter(self, schema: StructType, overwrite: bool) -> SamsaStreamWriter:
        options = parse_write_options(self.options)
        check_write_schema(schema, options)
        return SamsaStreamWriter(options, planned_write(schema, options))


def _planned(options: ReadOptions, schema: StructType) -> tuple[ReadColumn, ...]:
    typed = typed_columns(options)
    for col in typed:
        given = schema[col.column].dataType if col.column in schema.fieldNames() else None
        if given != col.spark_type:
            raise SamsaSparkError(
                f"the {col.column} schema of subject {col.reader.subject!r} changed while the "
                f"query was planned (now version {col.reader.version}): run it again"
            )
    return typed
