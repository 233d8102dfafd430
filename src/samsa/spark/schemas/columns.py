"""Typed ``key``/``value`` columns: their options, the schemas resolved when Spark plans, the work per batch.

Options (read and write): ``valueFormat``/``keyFormat`` = ``binary`` (the
default: Spark's Kafka schema) or ``avro``; ``schema.registry.url`` (one or
more, comma-separated), ``schema.registry.basic.auth.user.info``
(``user:password``) and ``schema.registry.ssl.ca.location`` (a PEM file);
``valueSubject``/``keySubject`` (default ``<topic>-value``/``-key``,
Confluent's TopicNameStrategy: then the query names exactly one topic).
Reading: ``valueSchemaVersion``/``keySchemaVersion`` (default ``latest``), the
reader schema every record is resolved to, and ``mode`` = ``FAILFAST`` (a
value that does not decode fails the query, naming its offset) or
``PERMISSIVE`` (it reads as null).  Writing: ``valueSchema``/``keySchema`` (an
Avro schema to write with; default: one derived from the column's Spark type,
a record named by ``valueRecordName``/``valueRecordNamespace``, default
``topLevelRecord``), ``auto.register.schemas`` (default true: register it
under the subject; false: it must be registered already) and
``use.latest.version`` (write with the subject's latest schema instead).

The registry is asked when Spark plans the query (on the driver): the reader
schema and its Spark type, or the writer schema and its id; executors get the
answers with the pickled reader or writer and only fetch writer schemas of
ids they meet.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samsa.spark.schemas.registry_client import RegisteredSchema, RegistryCallError, RegistryClient

if TYPE_CHECKING:  # fastavro and pyspark load only where typed columns are used
    from pyspark.sql.types import DataType

    from samsa.spark.schemas.avro_codec import AvroDecodeError, AvroDecoder, AvroEncoder

__all__ = [
    "FORMATS",
    "ColumnFormat",
    "ReadColumn",
    "RegistryOptions",
    "TypedColumnError",
    "WriteColumn",
    "decode_batches",
    "parse_formats",
    "resolve_read",
    "resolve_write",
]

FORMATS = ("binary", "avro")
COLUMNS = ("key", "value")
MODES = ("FAILFAST", "PERMISSIVE")


class TypedColumnError(ValueError):
    """A typed column's option, schema or record that cannot be used (named in the message)."""


@dataclass(frozen=True)
class RegistryOptions:
    url: str
    user_info: str | None = None
    ca_location: str | None = None

    def client(self) -> RegistryClient:
        return RegistryClient(self.url, self.user_info, self.ca_location)


@dataclass(frozen=True)
class ColumnFormat:
    """How one column (``key`` or ``value``) is read or written."""

    column: str
    format: str = "binary"
    subject: str | None = None
    version: str = "latest"
    permissive: bool = False
    schema: str | None = None
    auto_register: bool = True
    use_latest: bool = False
    record_name: str = "topLevelRecord"
    record_namespace: str = ""

    @property
    def typed(self) -> bool:
        return self.format != "binary"


def _flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise TypedColumnError(f"option '{name}' must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


def parse_formats(
    options: Mapping[str, str], topics: tuple[str, ...] | None
) -> tuple[ColumnFormat, ColumnFormat, RegistryOptions | None]:
    """(key, value) formats and the registry's options; ``topics``: the one or more
    topics the query names (None: a pattern), for the default subjects."""
    formats = []
    for column in COLUMNS:
        raw = options.get(f"{column}Format", "binary").strip().lower()
        if raw not in FORMATS:
            raise TypedColumnError(
                f"option '{column}Format' must be one of {', '.join(FORMATS)}, got {raw!r}"
                + (
                    " (Protobuf and JSON Schema are not read into typed columns yet)"
                    if raw in ("protobuf", "json", "jsonschema")
                    else ""
                )
            )
        subject = options.get(f"{column}Subject") or None
        if raw != "binary" and subject is None:
            if topics is None or len(topics) != 1:
                raise TypedColumnError(
                    f"option '{column}Subject' is needed: {column}Format={raw} names its "
                    f"subject after the topic (<topic>-{column}) only when the query names "
                    "exactly one topic"
                )
            subject = f"{topics[0]}-{column}"
        mode = options.get("mode", "FAILFAST").strip().upper()
        if mode not in MODES:
            raise TypedColumnError(f"option 'mode' must be FAILFAST or PERMISSIVE, got {mode!r}")
        version = options.get(f"{column}SchemaVersion", "latest").strip()
        if version != "latest" and not version.isdigit():
            raise TypedColumnError(
                f"option '{column}SchemaVersion' must be latest or a version number, "
                f"got {version!r}"
            )
        formats.append(
            ColumnFormat(
                column,
                raw,
                subject,
                version,
                mode == "PERMISSIVE",
                options.get(f"{column}Schema") or None,
                _flag(options, "auto.register.schemas", True),
                _flag(options, "use.latest.version", False),
                options.get(f"{column}RecordName", "topLevelRecord"),
                options.get(f"{column}RecordNamespace", ""),
            )
        )
    key, value = formats
    url = (options.get("schema.registry.url") or "").strip()
    if (key.typed or value.typed) and not url:
        raise TypedColumnError(
            "option 'schema.registry.url' is required with keyFormat or valueFormat avro"
        )
    registry = (
        RegistryOptions(
            url,
            options.get("schema.registry.basic.auth.user.info") or None,
            options.get("schema.registry.ssl.ca.location") or None,
        )
        if url
        else None
    )
    return key, value, registry


# -- reading ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadColumn:
    """A typed column as planned: its reader schema and Spark type."""

    column: str
    reader: RegisteredSchema
    spark_type: DataType
    permissive: bool


def resolve_read(
    formats: tuple[ColumnFormat, ...], registry: RegistryOptions | None
) -> tuple[ReadColumn, ...]:
    """The reader schema of each typed column (on the driver, when Spark plans)."""
    from samsa.spark.schemas.avro_codec import parsed_schema
    from samsa.spark.schemas.avro_types import SchemaConversionError, spark_type_of

    found = []
    for fmt in formats:
        if not fmt.typed:
            continue
        assert registry is not None and fmt.subject is not None
        client = registry.client()
        try:
            reader = client.version(fmt.subject, fmt.version)
        except RegistryCallError as exc:
            raise TypedColumnError(
                f"{fmt.column}Format=avro: no schema {fmt.version} of subject {fmt.subject!r} "
                f"({exc})"
            ) from None
        if reader.schema_type != "AVRO":
            raise TypedColumnError(
                f"subject {fmt.subject!r} holds {reader.schema_type} schemas, not AVRO"
            )
        try:
            parsed, named = parsed_schema(client, reader)
            spark_type, _ = spark_type_of(parsed, named)
        except (SchemaConversionError, ValueError) as exc:
            raise TypedColumnError(f"the schema of {fmt.subject!r} cannot be read: {exc}") from None
        found.append(ReadColumn(fmt.column, reader, spark_type, fmt.permissive))
    return tuple(found)


_DECODERS: dict[tuple[str, int, bool], AvroDecoder] = {}
"""Per executor process: decoders (and their writer schemas) kept across partitions."""


def decode_batches(
    batches: Iterator[Any], columns: tuple[ReadColumn, ...], registry: RegistryOptions
) -> Iterator[Any]:
    """Arrow batches with each typed column decoded (runs on an executor)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    from samsa.spark.schemas.avro_codec import AvroDecodeError, AvroDecoder

    decoders = []
    for col in columns:
        key = (registry.url, col.reader.id, col.permissive)
        decoder = _DECODERS.get(key)
        if decoder is None:
            decoder = _DECODERS[key] = AvroDecoder(registry.client(), col.reader, col.permissive)
        decoders.append((col, decoder, to_arrow_type(col.spark_type, timezone="UTC")))
    for batch in batches:
        arrays, fields = list(batch.columns), list(batch.schema)
        for col, decoder, arrow_type in decoders:
            at = batch.schema.get_field_index(col.column)
            try:
                decoded = decoder.decode_values(batch.column(at).to_pylist())
            except AvroDecodeError as exc:
                raise TypedColumnError(_where(batch, exc, col.column)) from None
            arrays[at] = pa.array(decoded, type=arrow_type)
            fields[at] = pa.field(col.column, arrow_type, True)
        yield pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _where(batch: Any, exc: AvroDecodeError, column: str) -> str:
    """The failure with the record's topic, partition and offset."""
    if exc.index is None:
        return f"the {column} column cannot be decoded: {exc}"
    row = exc.index
    topic = batch.column("topic")[row].as_py()
    partition = batch.column("partition")[row].as_py()
    offset = batch.column("offset")[row].as_py()
    return (
        f"the {column} at offset {offset} of {topic}-{partition} cannot be read as Avro "
        f"in Confluent's wire format: {exc} (option mode=PERMISSIVE reads it as null)"
    )


# -- writing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteColumn:
    """A typed column as planned: the schema its values are written with, and its id."""

    column: str
    schema_id: int
    schema: str
    registered: RegisteredSchema | None = None

    def encoder(self, registry: RegistryOptions) -> AvroEncoder:
        from samsa.spark.schemas.avro_codec import AvroEncoder, parsed_schema

        client = registry.client()
        registered = self.registered or RegisteredSchema(self.schema_id, self.schema)
        parsed, named = parsed_schema(client, registered)
        return AvroEncoder(self.schema_id, parsed, named)


def resolve_write(
    formats: tuple[ColumnFormat, ...],
    registry: RegistryOptions | None,
    column_types: Mapping[str, DataType],
    topic: str | None,
) -> tuple[WriteColumn, ...]:
    """The schema and id each typed column is written with (on the driver, when Spark
    plans): registered under its subject if allowed."""
    from samsa.spark.schemas.avro_types import SchemaConversionError, avro_schema_of

    found = []
    for fmt in formats:
        if not fmt.typed:
            continue
        assert registry is not None
        subject = fmt.subject
        if subject is None:
            raise TypedColumnError(f"option '{fmt.column}Subject' is needed to write avro")
        data_type = column_types.get(fmt.column)
        if data_type is None:
            raise TypedColumnError(f"{fmt.column}Format=avro but there is no '{fmt.column}' column")
        client = registry.client()
        try:
            if fmt.use_latest:
                latest = client.version(subject, "latest")
                found.append(WriteColumn(fmt.column, latest.id, latest.schema, latest))
                continue
            text = fmt.schema or json.dumps(
                avro_schema_of(data_type, fmt.record_name, fmt.record_namespace)
            )
            if fmt.auto_register:
                schema_id = client.register(subject, text)
            else:
                schema_id = client.lookup(subject, text).id
        except SchemaConversionError as exc:
            raise TypedColumnError(f"column '{fmt.column}': {exc}") from None
        except RegistryCallError as exc:
            raise TypedColumnError(
                f"{fmt.column}Format=avro: the schema for subject {subject!r} was refused: {exc}"
            ) from None
        found.append(WriteColumn(fmt.column, schema_id, text))
    return tuple(found)
