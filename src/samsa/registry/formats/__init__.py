"""Schema formats: parsing, canonical form, references and compatibility, one module each."""

from __future__ import annotations

from samsa.registry.formats.base import (
    InvalidSchemaError,
    ParsedSchema,
    ResolvedReference,
    SchemaFormat,
)

SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")


def schema_format(schema_type: str) -> SchemaFormat:
    """The format for a ``schemaType``; its parsing library is imported on first use.

    The libraries come with ``samsa[registry]``; a broker without them starts and
    serves everything else, and only a registry asked to parse says what is missing.
    """
    try:
        if schema_type == "AVRO":
            from samsa.registry.formats.avro import AVRO

            return AVRO
        if schema_type == "JSON":
            from samsa.registry.formats.jsonschema import JSON_SCHEMA

            return JSON_SCHEMA
        if schema_type == "PROTOBUF":
            from samsa.registry.formats.protobuf import PROTOBUF

            return PROTOBUF
    except ImportError as e:
        raise InvalidSchemaError(
            f"schema type {schema_type} needs {e.name}: install samsa[registry]"
        ) from e
    raise InvalidSchemaError(f"Invalid schema type {schema_type}")


def missing_libraries() -> list[str]:
    """The parsing libraries this environment lacks (empty when the registry can run)."""
    import importlib.util

    wanted = ("fastavro", "jsonschema", "proto_schema_parser", "google.protobuf")
    missing = []
    for name in wanted:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


__all__ = [
    "SCHEMA_TYPES",
    "InvalidSchemaError",
    "ParsedSchema",
    "ResolvedReference",
    "SchemaFormat",
    "missing_libraries",
    "schema_format",
]
