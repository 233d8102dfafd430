"""``df.write.format("samsa")`` and ``df.writeStream.format("samsa")``.

Columns as Spark's Kafka sink takes them: ``value`` (required, binary or
string), ``key`` (binary or string), ``topic`` (string; or the ``topic``
option), ``partition`` (int) and ``headers`` (array<struct<key: string,
value: binary>>).  They are checked when Spark plans the write, so a wrong
column fails the query before any task runs.

With ``valueFormat=avro`` (or ``keyFormat``) the column may be of any type
Avro can hold (a struct, typically): its values are written with the schema
planned for it (``schemas.columns``: registered or looked up when Spark plans
the write) and framed with its id, as confluent-kafka's AvroSerializer does.

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
from samsa.spark.schemas.columns import TypedColumnError, WriteColumn, resolve_write

BYTES_OR_TEXT = (BinaryType, StringType)


@dataclass
class WriteResult(WriterCommitMessage):
    records: int


def check_write_schema(schema: StructType, options: WriteOptions) -> None:
    """Refuse, with the column's name, what Spark's Kafka sink refuses."""
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    if "value" not in fields:
        raise SamsaSparkError("a 'value' column (binary or string) is required to write")
    typed = {f.column for f in (options.key_format, options.value_format) if f.typed}
    for name, allowed, what in (
        ("value", BYTES_OR_TEXT, "binary or string"),
        ("key", BYTES_OR_TEXT, "binary or string"),
        ("topic", (StringType,), "string"),
        ("partition", (IntegerType,), "int"),
    ):
        if name in typed:
            continue  # any type Avro holds: checked by resolve_write
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


def planned_write(schema: StructType, options: WriteOptions) -> tuple[WriteColumn, ...]:
    """The schema (and id) each typed column is written with; the registry is asked here,
    when Spark plans the write, so a refused schema fails it before any task runs."""
    if not (options.key_format.typed or options.value_format.typed):
        return ()
    types = {f.name.lower(): f.dataType for f in schema.fields}
    try:
        return resolve_write(
            (options.key_format, options.value_format), options.registry, types, options.topic
        )
    except TypedColumnError as exc:
        raise SamsaSparkError(str(exc)) from None


def _as_bytes(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return str(value).encode()


def write_batches(
    options: WriteOptions, batches: Iterator[Any], typed: tuple[WriteColumn, ...] = ()
) -> WriteResult:
    """Send every row; return once all are acknowledged (raise on the first failure)."""
    from samsa.client import Producer

    encoders = {}
    if typed:
        assert options.registry is not None
        encoders = {col.column: col.encoder(options.registry) for col in typed}

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
            for column, encoder in encoders.items():
                rows = values if column == "value" else keys
                try:
                    encoded = encoder.encode_values(rows)
                except Exception as exc:
                    raise SamsaSparkError(
                        f"a row's {column} cannot be written with schema id "
                        f"{encoder.header[1:].hex()}: {exc}"
                    ) from None
                if column == "value":
                    values = encoded
                else:
                    keys = encoded
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
    def __init__(self, options: WriteOptions, typed: tuple[WriteColumn, ...] = ()) -> None:
        self.options = options
        self.typed = typed

    def write(self, iterator: Iterator[Any]) -> WriteResult:
        return write_batches(self.options, iterator, self.typed)


class SamsaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: WriteOptions, typed: tuple[WriteColumn, ...] = ()) -> None:
        self.options = options
        self.typed = typed

    def write(self, iterator: Iterator[Any]) -> WriteResult:
        return write_batches(self.options, iterator, self.typed)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Every row was acknowledged before its task finished; nothing left to do."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Rows already acknowledged stay written (at-least-once, as Spark's Kafka sink)."""
