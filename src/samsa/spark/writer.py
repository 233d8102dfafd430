"""``df.write.format("samsa")`` and ``df.writeStream.format("samsa")``.

Columns as Spark's Kafka sink takes them: ``value`` (required, binary or
string), ``key`` (binary or string), ``topic`` (string; or the ``topic``
option), ``partition`` (int) and ``headers`` (array<struct<key: string,
value: binary>>).  They are checked when Spark plans the write, so a wrong
column fails the query before any task runs.

Each task sends its rows with the Samsa producer, at its defaults plus any
``kafka.*`` settings, flushes, and reports success only once the broker has
acknowledged every row; the first failure aborts the task with the broker's
error.  The guarantee is at-least-once, as with Spark's Kafka sink: a task
retried after a failure sends its rows again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    StringType,
    StructType,
)

from samsa.spark.options import SamsaSparkError, WriteOptions

BYTES_OR_TEXT = (BinaryType, StringType)


@dataclass
class WriteResult(WriterCommitMessage):
    records: int


def check_write_schema(schema: StructType, options: WriteOptions) -> None:
    """Refuse, with the column's name, what Spark's Kafka sink refuses."""
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    if "value" not in fields:
        raise SamsaSparkError("a 'value' column (binary or string) is required to write")
    for name, allowed, what in (
        ("value", BYTES_OR_TEXT, "binary or string"),
        ("key", BYTES_OR_TEXT, "binary or string"),
        ("topic", (StringType,), "string"),
        ("partition", (IntegerType,), "int"),
    ):
        if name in fields and not isinstance(fields[name], allowed):
            raise SamsaSparkError(
                f"column '{name}' must be {what}, not {fields[name].simpleString()}"
            )
    headers = fields.get("headers")
    if headers is not None and not (
        isinstance(headers, ArrayType)
        and isinstance(headers.elementType, StructType)
        and [(f.name, type(f.dataType)) for f in headers.elementType.fields]
        == [("key", StringType), ("value", BinaryType)]
    ):
        raise SamsaSparkError(
            "column 'headers' must be array<struct<key: string, value: binary>>, "
            f"not {headers.simpleString()}"
        )
    if "topic" not in fields and not options.topic:
        raise SamsaSparkError("no 'topic' column and no 'topic' option: where should rows go?")


def _as_bytes(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return str(value).encode()


def write_batches(options: WriteOptions, batches: Iterator[Any]) -> WriteResult:
    """Send every row; return once all are acknowledged (raise on the first failure)."""
    from samsa.client import Producer

    config = {**options.producer_config, "bootstrap.servers": options.bootstrap}
    failures: list[BaseException] = []
    sent = 0

    def on_delivery(_metadata: Any, error: BaseException | None) -> None:
        if error is not None and not failures:
            failures.append(error)

    with Producer(config) as producer:
        for batch in batches:
            names = {n.lower(): i for i, n in enumerate(batch.schema.names)}
            values = batch.column(names["value"]).to_pylist()
            count = len(values)
            keys = batch.column(names["key"]).to_pylist() if "key" in names else [None] * count
            topics = (
                batch.column(names["topic"]).to_pylist() if "topic" in names else [None] * count
            )
            partitions = (
                batch.column(names["partition"]).to_pylist()
                if "partition" in names
                else [None] * count
            )
            headers = (
                batch.column(names["headers"]).to_pylist() if "headers" in names else [None] * count
            )
            for value, key, topic, partition, header in zip(
                values, keys, topics, partitions, headers, strict=True
            ):
                target = topic or options.topic
                if target is None:
                    raise SamsaSparkError("a row has a null 'topic' and no 'topic' option is set")
                producer.send(
                    target,
                    _as_bytes(value),
                    key=_as_bytes(key),
                    partition=partition,
                    headers=[(h["key"], h["value"]) for h in header] if header else None,
                    on_delivery=on_delivery,
                )
            sent += count
            if failures:
                break
        producer.flush()
    if failures:
        raise failures[0]
    return WriteResult(sent)


class SamsaBatchWriter(DataSourceArrowWriter):
    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> WriteResult:
        return write_batches(self.options, iterator)


class SamsaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> WriteResult:
        return write_batches(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Every row was acknowledged before its task finished; nothing left to do."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Rows already acknowledged stay written (at-least-once, as Spark's Kafka sink)."""
