"""Avro compatibility cases, each with the outcome Avro's schema resolution rules give.

Rules cited: the Avro specification, "Schema Resolution", and Confluent's
"Schema Evolution and Compatibility" summary for Avro (BACKWARD: delete fields,
add fields with defaults; FORWARD: add fields, delete fields with defaults; FULL:
add or delete fields with defaults).  Registration is refused with 409 exactly
where the rules refuse it.
"""

from __future__ import annotations

import json

import pytest
from tests.registry.harness import Registry

from samsa.registry.compatibility import incompatibilities
from samsa.registry.formats import schema_format


def record(*fields: dict, name: str = "User") -> dict:
    return {"type": "record", "name": name, "namespace": "acme", "fields": list(fields)}


ID = {"name": "id", "type": "long"}
NAME = {"name": "name", "type": "string"}
NAME_DEFAULT = {"name": "name", "type": "string", "default": ""}
COLOR = {"name": "c", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}}
COLOR_MORE = {
    "name": "c",
    "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]},
}
COLOR_MORE_DEFAULT = {
    "name": "c",
    "type": {
        "type": "enum",
        "name": "Color",
        "symbols": ["RED", "GREEN", "BLUE"],
        "default": "RED",
    },
}

# (case, old, new, {level: compatible})
CASES = [
    # Spec: a reader field missing from the writer takes its default; without one, error.
    ("field added without default", record(ID), record(ID, NAME),
     {"BACKWARD": False, "FORWARD": True, "FULL": False, "NONE": True}),
    ("field added with default", record(ID), record(ID, NAME_DEFAULT),
     {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    # Spec: writer fields the reader lacks are ignored; the old reader needs a default.
    ("field removed (had no default)", record(ID, NAME), record(ID),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("field removed (had a default)", record(ID, NAME_DEFAULT), record(ID),
     {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    # Spec promotions: int is promoted to long, float, double (not back).
    ("type widened int -> long", record({"name": "n", "type": "int"}), record({"name": "n", "type": "long"}),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("type narrowed long -> int", record({"name": "n", "type": "long"}), record({"name": "n", "type": "int"}),
     {"BACKWARD": False, "FORWARD": True}),
    # Spec: string and bytes are promotable to each other.
    ("string <-> bytes", record({"name": "b", "type": "string"}), record({"name": "b", "type": "bytes"}),
     {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("type changed string -> int", record({"name": "b", "type": "string"}), record({"name": "b", "type": "int"}),
     {"BACKWARD": False, "FORWARD": False, "NONE": True}),
    # Spec: a writer symbol missing from the reader is an error unless the reader has a default.
    ("enum symbol added", record(COLOR), record(COLOR_MORE),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("enum symbol added, reader enum default", record(COLOR), record(COLOR_MORE_DEFAULT),
     {"BACKWARD": True, "FORWARD": False}),
    ("enum symbol removed", record(COLOR_MORE), record(COLOR),
     {"BACKWARD": False, "FORWARD": True}),
    # Spec: a reader union must hold a branch matching the writer's type.
    ("field made nullable", record(NAME), record({"name": "name", "type": ["null", "string"], "default": None}),
     {"BACKWARD": True, "FORWARD": False}),
    ("union branch removed", record({"name": "u", "type": ["null", "string", "int"]}),
     record({"name": "u", "type": ["null", "string"]}), {"BACKWARD": False, "FORWARD": True}),
    # Spec: records match by (unqualified) name, or the reader's aliases.
    ("record renamed", record(ID), record(ID, name="Person"), {"BACKWARD": False, "NONE": True}),
    ("record renamed with alias", record(ID), {**record(ID, name="Person"), "aliases": ["User"]},
     {"BACKWARD": True}),
    ("namespace changed", record(ID), {**record(ID), "namespace": "other"}, {"BACKWARD": True, "FULL": True}),
    # Spec: field aliases let the reader read a renamed writer field.
    ("field renamed with alias", record(NAME), record({"name": "full", "type": "string", "aliases": ["name"]}),
     {"BACKWARD": True, "FORWARD": False}),
    # Spec: fixed sizes must match.
    ("fixed size changed", record({"name": "f", "type": {"type": "fixed", "name": "F", "size": 4}}),
     record({"name": "f", "type": {"type": "fixed", "name": "F", "size": 8}}), {"BACKWARD": False, "FORWARD": False}),
    # Spec: arrays and maps resolve their items and values.
    ("array items widened", record({"name": "a", "type": {"type": "array", "items": "int"}}),
     record({"name": "a", "type": {"type": "array", "items": "double"}}), {"BACKWARD": True, "FORWARD": False}),
    ("map values changed", record({"name": "m", "type": {"type": "map", "values": "string"}}),
     record({"name": "m", "type": {"type": "map", "values": "int"}}), {"BACKWARD": False}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "old", "new", "outcomes"), CASES, ids=[c[0] for c in CASES])
def test_avro_rules(case: str, old: dict, new: dict, outcomes: dict[str, bool]) -> None:
    avro = schema_format("AVRO")
    parsed_old = avro.parse(json.dumps(old), [], is_new=True)
    parsed_new = avro.parse(json.dumps(new), [], is_new=True)
    for level, compatible in outcomes.items():
        problems = incompatibilities(level, parsed_new, [(1, parsed_old)])
        assert (not problems) == compatible, (case, level, problems)
        # The API refuses exactly these with 409.
        registry = Registry()
        assert registry.call("PUT", "/config/s", {"compatibility": level}).status == 200
        assert registry.register("s", old).status == 200
        answer = registry.register("s", new)
        assert answer.status == (200 if compatible else 409), (case, level, answer.json())
        if not compatible:
            assert answer.json()["error_code"] == 409


def test_transitive_levels_check_every_live_version() -> None:
    # v1 (id) -> v2 (id, name with default) -> v3 (id, name without default):
    # v3 reads v2 data (name present) but not v1 data (name missing, no default).
    v1, v2, v3 = record(ID), record(ID, NAME_DEFAULT), record(ID, NAME)
    for level, v3_allowed in (("BACKWARD", True), ("BACKWARD_TRANSITIVE", False)):
        registry = Registry()
        registry.call("PUT", "/config", {"compatibility": level})
        assert registry.register("s", v1).status == 200
        assert registry.register("s", v2).status == 200
        assert registry.register("s", v3).status == (200 if v3_allowed else 409)


def test_forward_transitive_and_full_transitive() -> None:
    v1, v2 = record(ID, NAME), record(ID, NAME_DEFAULT, {"name": "x", "type": "int", "default": 0})
    v3 = record(ID, {"name": "x", "type": "int", "default": 0})  # drops name: v1 readers need it
    for level, allowed in (
        ("FORWARD", True),
        ("FORWARD_TRANSITIVE", False),
        ("FULL_TRANSITIVE", False),
    ):
        registry = Registry()
        registry.call("PUT", "/config", {"compatibility": level})
        registry.register("s", v1)
        assert registry.register("s", v2).status == 200, level
        assert registry.register("s", v3).status == (200 if allowed else 409), level


def test_recursive_record_is_compatible_with_itself() -> None:
    linked = {"type": "record", "name": "Node", "fields": [
        {"name": "next", "type": ["null", "Node"], "default": None}]}  # fmt: skip
    parsed = schema_format("AVRO").parse(json.dumps(linked), [], is_new=True)
    assert parsed.read_errors(parsed) == []


def test_messages_name_the_rule() -> None:
    avro = schema_format("AVRO")
    old = avro.parse(json.dumps(record(ID)), [], is_new=True)
    new = avro.parse(json.dumps(record(ID, NAME)), [], is_new=True)
    (message, *rest) = incompatibilities("BACKWARD", new, [(1, old)])
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in message and "'name'" in message
    assert rest[0] == "{oldSchemaVersion: 1}" and rest[-1] == "{compatibility: 'BACKWARD'}"
