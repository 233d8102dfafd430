"""The ``samsa`` data source: Spark's Kafka connector schema and options, in Python."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from samsa.spark.batch_reader import SamsaBatchReader
from samsa.spark.options import parse_read_options, parse_write_options
from samsa.spark.stream_reader import SamsaStreamReader
from samsa.spark.writer import SamsaBatchWriter, SamsaStreamWriter, check_write_schema

BASE_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"
)
HEADERS = "headers array<struct<key: string, value: binary>>"


class SamsaDataSource(DataSource):
    """``format("samsa")``: read and write Kafka topics of Samsa or any Kafka broker.

    Cheap to build and free of side effects: Spark pickles it into every
    planner and worker process, and only the reader and writer methods run
    there."""

    @classmethod
    def name(cls) -> str:
        return "samsa"

    def schema(self) -> str:
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return f"{BASE_SCHEMA}, {HEADERS}" if include else BASE_SCHEMA

    def reader(self, schema: StructType) -> SamsaBatchReader:
        return SamsaBatchReader(parse_read_options(self.options, stream=False))

    def streamReader(self, schema: StructType) -> SamsaStreamReader:
        return SamsaStreamReader(parse_read_options(self.options, stream=True))

    def writer(self, schema: StructType, overwrite: bool) -> SamsaBatchWriter:
        options = parse_write_options(self.options)
        check_write_schema(schema, options)
        return SamsaBatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> SamsaStreamWriter:
        options = parse_write_options(self.options)
        check_write_schema(schema, options)
        return SamsaStreamWriter(options)
