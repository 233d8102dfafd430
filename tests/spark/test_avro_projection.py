"""The once-built projection from an older writer's record to the reader's gives exactly what
fastavro's per-record schema resolution gives, and declines what it does not cover.

Differential, on schema pairs hypothesis makes from the evolutions topics go
through (fields added with defaults, removed, widened, reordered) over fields of
every kind.  No Spark needed: this is the decoder's step before Arrow."""

from __future__ import annotations

import io
from typing import Any

import fastavro
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.spark.schemas.avro_projection import record_projection

KINDS = [
    "int",
    "long",
    "float",
    "double",
    "string",
    "bytes",
    "boolean",
    "nullable",
    "array",
    "map",
    "enum",
    "record",
    "timestamp",
]

PROMOTE = {
    "int": ["long", "float", "double"],
    "long": ["float", "double"],
    "float": ["double"],
    "string": ["bytes"],
    "bytes": ["string"],
}


def field_type(kind: str, index: int) -> Any:
    if kind == "nullable":
        return ["null", "string"]
    if kind == "array":
        return {"type": "array", "items": "int"}
    if kind == "map":
        return {"type": "map", "values": "long"}
    if kind == "enum":
        return {"type": "enum", "name": f"E{index}", "symbols": ["A", "B", "C"]}
    if kind == "record":
        return {"type": "record", "name": f"R{index}", "fields": [{"name": "x", "type": "int"}]}
    if kind == "timestamp":
        return {"type": "long", "logicalType": "timestamp-millis"}
    return kind


def value_of(kind: str) -> st.SearchStrategy[Any]:
    ints = st.integers(-(2**31), 2**31 - 1)
    return {
        "int": ints,
        "long": st.integers(-(2**63), 2**63 - 1),
        "float": st.floats(width=32, allow_nan=False),
        "double": st.floats(allow_nan=False),
        "string": st.text(max_size=8),
        "bytes": st.text(max_size=8).map(str.encode),  # utf-8, so bytes -> string reads it
        "boolean": st.booleans(),
        "nullable": st.none() | st.text(max_size=8),
        "array": st.lists(ints, max_size=3),
        "map": st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
        "enum": st.sampled_from(["A", "B", "C"]),
        "record": ints.map(lambda x: {"x": x}),
        "timestamp": st.integers(0, 2**40),
    }[kind]


# Defaults for an added field: (type, default, whether the projection takes it).
ADDED = [
    ("string", "n/a", True),
    (["null", "string"], None, True),
    ("long", 7, True),
    ("double", 1.5, True),
    ("boolean", False, True),
    ("double", 0, False),  # a whole number for a double: declined, fastavro's answer stands
    ("bytes", "\u00ff", False),  # JSON code points for bytes: the same
    ({"type": "array", "items": "int"}, [], False),
]


@st.composite
def evolutions(draw: st.DrawFn) -> tuple[Any, Any, dict[str, Any], bool]:
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6))
    writer_fields = [{"name": f"f{i}", "type": field_type(k, i)} for i, k in enumerate(kinds)]
    value = {f"f{i}": draw(value_of(k)) for i, k in enumerate(kinds)}
    reader_fields, simple = [], True
    for i, kind in enumerate(kinds):
        if draw(st.booleans()) and len(kinds) > 1:
            continue  # removed
        wanted = field_type(kind, i)
        if kind in PROMOTE and draw(st.booleans()):
            wanted = draw(st.sampled_from(PROMOTE[kind]))
        reader_fields.append({"name": f"f{i}", "type": wanted})
    for j in range(draw(st.integers(0, 2))):
        kind, default, plain = draw(st.sampled_from(ADDED))
        reader_fields.append({"name": f"added{j}", "type": kind, "default": default})
        simple &= plain
    if not reader_fields:
        reader_fields.append({"name": "added", "type": "string", "default": ""})
    reader_fields = draw(st.permutations(reader_fields))
    writer = {"type": "record", "name": "Order", "namespace": "t", "fields": writer_fields}
    reader = {"type": "record", "name": "Order", "namespace": "t", "fields": reader_fields}
    return writer, reader, value, simple


def typed(value: Any) -> Any:
    """The value with every leaf's type beside it: 3 and 3.0 (or b"a" and "a") differ."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def written(schema: Any, value: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, value)
    return out.getvalue()


@settings(max_examples=300, deadline=None)
@given(evolutions())
def test_the_projection_reads_what_fastavros_resolution_reads(
    pair: tuple[Any, Any, dict[str, Any], bool],
) -> None:
    writer_json, reader_json, value, simple = pair
    writer, reader = fastavro.parse_schema(writer_json), fastavro.parse_schema(reader_json)
    body = written(writer, value)
    expected = fastavro.schemaless_reader(io.BytesIO(body), writer, reader)
    project = record_projection(writer, reader)
    if simple:
        assert project is not None  # the common evolutions take the fast path
    if project is not None:
        found = project(fastavro.schemaless_reader(io.BytesIO(body), writer, None))
        assert typed(found) == typed(expected)  # fields by name: Arrow takes them so


def record(fields: list[dict[str, Any]], **extra: Any) -> Any:
    return fastavro.parse_schema(
        {"type": "record", "name": "Order", "namespace": "t", "fields": fields, **extra}
    )


def test_what_it_does_not_cover_is_left_to_fastavro() -> None:
    base = [{"name": "a", "type": "int"}]
    inner = {"type": "record", "name": "In", "fields": [{"name": "x", "type": "int"}]}
    grown = {
        "type": "record",
        "name": "In",
        "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int", "default": 0}],
    }
    cases = {
        "a nested record that changed": (
            record([{"name": "n", "type": inner}]),
            record([{"name": "n", "type": grown}]),
        ),
        "a field renamed through an alias": (
            record(base),
            record([{"name": "b", "type": "int", "aliases": ["a"]}]),
        ),
        "an added field without a default": (
            record(base),
            record([*base, {"name": "c", "type": "int"}]),
        ),
        "a union widened from a plain type": (
            record(base),
            record([{"name": "a", "type": ["null", "int"]}]),
        ),
        "another record name": (
            record(base),
            fastavro.parse_schema({"type": "record", "name": "Other", "fields": base}),
        ),
        "a named type referred to by name": (
            record([{"name": "n", "type": inner}, {"name": "m", "type": "In"}]),
            record([{"name": "n", "type": inner}, {"name": "m", "type": "In"}]),
        ),
    }
    for why, (writer, reader) in cases.items():
        assert record_projection(writer, reader) is None, why


def test_field_names_are_data_never_code() -> None:
    name = "x'] or __import__('os').system('false') or d['"
    writer = fastavro.parse_schema(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    )
    # Avro names are [A-Za-z_][A-Za-z0-9_]*; fastavro does not check field names, so the
    # projection must not trust them: the odd name becomes a dict key, nothing more.
    reader = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": name, "type": "string", "default": ""}],
    }
    project = record_projection(writer, reader)
    assert project is not None
    assert project({"a": 1}) == {"a": 1, name: ""}
