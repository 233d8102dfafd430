"""Protobuf compatibility cases, with the outcome Confluent's documented rules give.

Rules cited: Confluent's "Schema Evolution and Compatibility" for Protobuf (adding
and removing fields is compatible at every level; changing a field's type is
compatible only within protobuf's wire-compatible groups; removing a message or
changing the package is not; fields moving into a oneof are restricted), which
its ``SchemaDiff`` implements; and the protobuf language guide's "Updating A
Message Type" for the scalar groups.
"""

from __future__ import annotations

import pytest
from tests.registry.harness import Registry

from samsa.registry.compatibility import incompatibilities
from samsa.registry.formats import schema_format


def proto(body: str, package: str = "acme") -> str:
    return f'syntax = "proto3";\npackage {package};\n{body}\n'


BASE = proto("message User { string name = 1; int32 age = 2; }")
CASES = [
    # Adding and removing fields is compatible (unknown fields are skipped, absent ones default).
    ("field added", BASE, proto("message User { string name = 1; int32 age = 2; string email = 3; }"),
     {"BACKWARD": True, "FORWARD": True, "FULL_TRANSITIVE": True}),
    ("field removed", BASE, proto("message User { string name = 1; }"), {"BACKWARD": True, "FULL": True}),
    # Renumbering is a removal plus an addition: compatible, as long as the type at a
    # number stays wire-compatible.
    ("field renumbered", BASE, proto("message User { string name = 1; int32 age = 5; }"),
     {"BACKWARD": True, "FULL": True}),
    ("fields swapped numbers", BASE, proto("message User { string name = 2; int32 age = 1; }"),
     {"BACKWARD": False, "FORWARD": False, "NONE": True}),
    ("field renamed", BASE, proto("message User { string full_name = 1; int32 age = 2; }"),
     {"BACKWARD": True, "FULL": True}),
    # Scalar groups: int32, uint32, int64, uint64, bool (and enums) are compatible.
    ("int32 -> int64", BASE, proto("message User { string name = 1; int64 age = 2; }"), {"FULL": True}),
    ("int32 -> sint32", BASE, proto("message User { string name = 1; sint32 age = 2; }"), {"BACKWARD": False}),
    ("int32 -> double", BASE, proto("message User { string name = 1; double age = 2; }"), {"BACKWARD": False}),
    ("string -> bytes", BASE, proto("message User { bytes name = 1; int32 age = 2; }"), {"FULL": True}),
    ("scalar -> message", BASE, proto("message User { Name name = 1; int32 age = 2; } message Name { string v = 1; }"),
     {"BACKWARD": False}),
    ("numeric made repeated", BASE, proto("message User { string name = 1; repeated int32 age = 2; }"),
     {"BACKWARD": False}),
    ("string made repeated", BASE, proto("message User { repeated string name = 1; int32 age = 2; }"),
     {"BACKWARD": True}),
    ("package changed", BASE, proto("message User { string name = 1; int32 age = 2; }", package="other"),
     {"BACKWARD": False, "NONE": True}),
    # A writer message the reader lacks is MESSAGE_REMOVED: new messages break FORWARD.
    ("message added", BASE, BASE + "message Extra { int32 x = 1; }", {"BACKWARD": True, "FORWARD": False}),
    ("message removed", BASE + "message Extra { int32 x = 1; }", BASE, {"BACKWARD": False, "FORWARD": True}),
    ("message field type renamed", proto("message A { B b = 1; } message B { int32 x = 1; } message C { int32 x = 1; }"),
     proto("message A { C b = 1; } message B { int32 x = 1; } message C { int32 x = 1; }"), {"BACKWARD": False}),
    # Oneofs: one existing field may move into a new oneof, several may not.
    ("one field moved into new oneof", BASE,
     proto("message User { oneof n { string name = 1; } int32 age = 2; }"), {"BACKWARD": True}),
    ("two fields moved into a oneof", BASE,
     proto("message User { oneof n { string name = 1; int32 age = 2; } }"), {"BACKWARD": False}),
    ("oneof field removed", proto("message U { oneof o { string a = 1; int32 b = 2; } }"),
     proto("message U { oneof o { string a = 1; } }"), {"BACKWARD": False}),
    ("oneof field added", proto("message U { oneof o { string a = 1; } }"),
     proto("message U { oneof o { string a = 1; int32 b = 2; } }"), {"BACKWARD": True}),
    ("enum value added", proto("enum E { A = 0; } message U { E e = 1; }"),
     proto("enum E { A = 0; B = 1; } message U { E e = 1; }"), {"FULL": True}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "old", "new", "outcomes"), CASES, ids=[c[0] for c in CASES])
def test_protobuf_rules(case: str, old: str, new: str, outcomes: dict[str, bool]) -> None:
    fmt = schema_format("PROTOBUF")
    parsed_old, parsed_new = fmt.parse(old, [], is_new=True), fmt.parse(new, [], is_new=True)
    for level, compatible in outcomes.items():
        problems = incompatibilities(level, parsed_new, [(1, parsed_old)])
        assert (not problems) == compatible, (case, level, problems)
        registry = Registry()
        registry.call("PUT", "/config/s", {"compatibility": level})
        assert registry.register("s", old, "PROTOBUF").status == 200
        assert registry.register("s", new, "PROTOBUF").status == (200 if compatible else 409)


def test_proto2_required_fields() -> None:
    fmt = schema_format("PROTOBUF")
    old = fmt.parse('syntax = "proto2"; message M { optional int32 a = 1; }', [], is_new=True)
    new = fmt.parse(
        'syntax = "proto2"; message M { optional int32 a = 1; required int32 b = 2; }',
        [],
        is_new=True,
    )
    assert "REQUIRED_FIELD_ADDED" in new.read_errors(old)[0]
    assert "REQUIRED_FIELD_REMOVED" in old.read_errors(new)[0]
