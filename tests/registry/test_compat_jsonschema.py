"""JSON Schema compatibility cases, with the outcome Confluent's documented rules give.

Rules cited: Confluent's "JSON Schema compatibility rules" (an open content model
lets old documents hold any property, so a reader may not add a typed property
but may remove one; closing ``additionalProperties`` is incompatible; adding a
required property is incompatible unless it has a default; narrowing a type or a
bound is incompatible, widening is compatible) as its JSON ``SchemaDiff`` does.
"""

from __future__ import annotations

import json

import pytest
from tests.registry.harness import Registry

from samsa.registry.compatibility import incompatibilities
from samsa.registry.formats import schema_format


def obj(props: dict, **more: object) -> dict:
    return {"type": "object", "properties": props, **more}


S = {"type": "string"}
CASES = [
    ("additionalProperties closed", obj({"a": S}), obj({"a": S}, additionalProperties=False),
     {"BACKWARD": False, "FORWARD": True}),
    ("additionalProperties opened", obj({"a": S}, additionalProperties=False), obj({"a": S}),
     {"BACKWARD": True, "FORWARD": False}),
    ("property added to open model", obj({"a": S}), obj({"a": S, "b": {"type": "integer"}}),
     {"BACKWARD": False, "FORWARD": True}),
    ("property added to closed model", obj({"a": S}, additionalProperties=False),
     obj({"a": S, "b": {"type": "integer"}}, additionalProperties=False), {"BACKWARD": True, "FORWARD": False}),
    ("property removed from open model", obj({"a": S, "b": S}), obj({"a": S}),
     {"BACKWARD": True, "FORWARD": False}),
    ("required property added", obj({"a": S}), obj({"a": S}, required=["a"]), {"BACKWARD": False, "FORWARD": True}),
    ("required property with default added", obj({"a": S}), obj({"a": {**S, "default": "x"}}, required=["a"]),
     {"BACKWARD": True}),
    ("type narrowed number -> integer", obj({"n": {"type": "number"}}), obj({"n": {"type": "integer"}}),
     {"BACKWARD": False, "FORWARD": True}),
    ("type widened to a union", obj({"a": S}), obj({"a": {"type": ["string", "null"]}}),
     {"BACKWARD": True, "FORWARD": False}),
    ("type changed", obj({"a": S}), obj({"a": {"type": "boolean"}}), {"BACKWARD": False, "FORWARD": False}),
    ("maxLength decreased", obj({"a": {**S, "maxLength": 10}}), obj({"a": {**S, "maxLength": 5}}),
     {"BACKWARD": False, "FORWARD": True}),
    ("maxLength removed", obj({"a": {**S, "maxLength": 10}}), obj({"a": S}), {"BACKWARD": True}),
    ("minimum added", obj({"n": {"type": "integer"}}), obj({"n": {"type": "integer", "minimum": 0}}),
     {"BACKWARD": False}),
    ("enum value added", obj({"e": {"enum": ["a", "b"]}}), obj({"e": {"enum": ["a", "b", "c"]}}),
     {"BACKWARD": True, "FORWARD": False}),
    ("oneOf branch added", {"oneOf": [S, {"type": "integer"}]}, {"oneOf": [S, {"type": "integer"}, {"type": "null"}]},
     {"BACKWARD": True, "FORWARD": False}),
    ("array items narrowed", obj({"l": {"type": "array", "items": {"type": "number"}}}),
     obj({"l": {"type": "array", "items": {"type": "integer"}}}), {"BACKWARD": False}),
    ("title and description changed", obj({"a": S}, title="x"), obj({"a": S}, title="y", description="d"),
     {"FULL_TRANSITIVE": True}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "old", "new", "outcomes"), CASES, ids=[c[0] for c in CASES])
def test_json_schema_rules(case: str, old: dict, new: dict, outcomes: dict[str, bool]) -> None:
    fmt = schema_format("JSON")
    parsed_old = fmt.parse(json.dumps(old), [], is_new=True)
    parsed_new = fmt.parse(json.dumps(new), [], is_new=True)
    for level, compatible in outcomes.items():
        problems = incompatibilities(level, parsed_new, [(1, parsed_old)])
        assert (not problems) == compatible, (case, level, problems)
        registry = Registry()
        registry.call("PUT", "/config/s", {"compatibility": level})
        assert registry.register("s", old, "JSON").status == 200
        assert registry.register("s", new, "JSON").status == (200 if compatible else 409)


def test_refs_to_definitions_and_other_subjects_are_followed() -> None:
    registry = Registry()
    address = {"type": "object", "properties": {"city": S}}
    assert registry.register("address", address, "JSON").status == 200
    ref = [{"name": "address.json", "subject": "address", "version": 1}]
    old = {"type": "object", "properties": {"home": {"$ref": "address.json"}}}
    assert registry.register("person", old, "JSON", references=ref).status == 200
    narrowed = {"type": "object", "properties": {"home": {"$ref": "#/definitions/a"}},
                "definitions": {"a": {**address, "additionalProperties": False}}}  # fmt: skip
    answer = registry.register("person", narrowed, "JSON")
    assert answer.status == 409 and "ADDITIONAL_PROPERTIES_REMOVED" in answer.json()["message"]
