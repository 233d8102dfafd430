"""Avro schema resolution for the common evolutions, done once per writer schema instead of per record.

Reading a value with a reader schema other than its writer's, fastavro
resolves the two schemas field by field on every record, which about
doubles the read (2.8 µs against 1.4 µs for a five-field record).  Most
topics evolve in a few simple ways: a field added with a default, a field
removed, a number widened, fields reordered.  For a pair of record schemas
that differ only so, :func:`record_projection` builds, once, a function from
the record read with its writer schema alone (fastavro's fast path) to the
record the reader schema describes.  Any other difference -- nested or named
types that changed, aliases, enums, unions that must be matched, defaults that
are not plain values -- gets None, and the caller lets fastavro resolve it.

The function is generated as Python source (as ``dataclasses`` does) so each
record costs one dict display; field names enter it only through ``repr``,
defaults and converters only as bound constants.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Projection", "record_projection"]

Projection = Callable[[Any], dict[str, Any]]

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def _to_float(value: Any) -> float:
    return float(value)


def _to_bytes(value: str) -> bytes:
    return value.encode()


def _to_str(value: bytes) -> str:
    return value.decode()


# Avro's promotions (writer type, reader type) and what turns one value into the other;
# None: the value is already what fastavro would give.
_PROMOTIONS: dict[tuple[str, str], Callable[[Any], Any] | None] = {
    ("int", "long"): None,
    ("int", "float"): _to_float,
    ("int", "double"): _to_float,
    ("long", "float"): _to_float,
    ("long", "double"): _to_float,
    ("float", "double"): None,
    ("string", "bytes"): _to_bytes,
    ("bytes", "string"): _to_str,
}


def record_projection(writer: Any, reader: Any) -> Projection | None:
    """From a record read with ``writer`` to the record ``reader`` reads (both parsed by
    fastavro), or None where the two differ in a way this does not cover."""
    if not (_is_record(writer) and _is_record(reader)) or writer["name"] != reader["name"]:
        return None
    if reader.get("aliases") or any(field.get("aliases") for field in reader["fields"]):
        return None
    written = {field["name"]: field["type"] for field in writer["fields"]}
    parts: list[str] = []
    constants: dict[str, Any] = {}
    for index, field in enumerate(reader["fields"]):
        name, wanted = field["name"], field["type"]
        if not _closed(wanted):
            return None
        key = repr(name)
        if name in written:
            had = written[name]
            if had == wanted:
                parts.append(f"{key}: d[{key}]")
            elif isinstance(had, str) and isinstance(wanted, str) and (had, wanted) in _PROMOTIONS:
                convert = _PROMOTIONS[(had, wanted)]
                if convert is None:
                    parts.append(f"{key}: d[{key}]")
                else:
                    constants[f"c{index}"] = convert
                    parts.append(f"{key}: c{index}(d[{key}])")
            else:
                return None
        elif "default" in field and _plain_default(wanted, field["default"]):
            constants[f"v{index}"] = field["default"]
            parts.append(f"{key}: v{index}")
        else:
            return None
    source = "def project(d):\n    return {" + ", ".join(parts) + "}\n"
    namespace: dict[str, Any] = dict(constants)
    # Names enter the source only through repr; values only as the bound constants.
    exec(compile(source, "<avro projection>", "exec"), namespace)
    project: Projection = namespace["project"]
    return project


def _is_record(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "record"


def _closed(schema: Any) -> bool:
    """Whether the type is written out in full: a named type referred to by name may
    have changed between the two schemas' definitions of it, unseen here."""
    if isinstance(schema, str):
        return schema in _PRIMITIVES
    if isinstance(schema, list):
        return all(_closed(branch) for branch in schema)
    if isinstance(schema, Mapping):
        kind = schema.get("type")
        if kind == "record" or kind == "error":
            return all(_closed(field["type"]) for field in schema.get("fields", ()))
        if kind == "array":
            return _closed(schema["items"])
        if kind == "map":
            return _closed(schema["values"])
        if kind in ("enum", "fixed"):
            return True
        return _closed(kind)
    return False


def _plain_default(schema: Any, default: Any) -> bool:
    """A default that is the very value fastavro hands out: plain JSON of a primitive
    (or of a union's first branch, which Avro says a union's default belongs to)."""
    kind = schema[0] if isinstance(schema, list) and schema else schema
    if kind == "null":
        return default is None
    if kind == "boolean":
        return isinstance(default, bool)
    if kind in ("int", "long"):
        return isinstance(default, int) and not isinstance(default, bool)
    if kind in ("float", "double"):
        return isinstance(default, float)  # a whole-number default: left to fastavro
    if kind == "string":
        return isinstance(default, str)
    return False  # bytes, fixed, records, arrays...: their JSON defaults are fastavro's to read
