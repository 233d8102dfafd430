"""Representative message bodies built from a schema, for codec tests.

Walking the schema (instead of hand-writing bodies) means every API added to
``APIS`` is covered automatically.  A body holds *every* field of the schema:
fields present at the version get a sample value, the others their default, so
a decoded body can be compared with ``==`` to the body that was encoded.

Two variants exercise different corners: variant 0 fills everything with small
non-default values and one-element arrays; variant 1 uses nulls wherever the
version allows them, empty arrays elsewhere, extreme integers and non-ASCII
strings.
"""

from __future__ import annotations

from typing import Any

from samsa.protocol.schema import Api, Field

VARIANTS = (0, 1)

_INTS_0 = {
    "int8": 7,
    "int16": 300,
    "int32": 70000,
    "int64": 5_000_000_000,
    "uint16": 9,
    "uint32": 9,
}
_INTS_1 = {
    "int8": -128,
    "int16": -(2**15),
    "int32": -(2**31),
    "int64": 2**63 - 1,
    "uint16": 2**16 - 1,
    "uint32": 2**32 - 1,
}


def sample_body(fields: tuple[Field, ...], version: int, variant: int = 0) -> dict[str, Any]:
    """A body for ``fields`` at ``version``; see the module docstring."""
    body: dict[str, Any] = {}
    for f in fields:
        present = version in f.versions or version in f.tagged
        body[f.name] = _sample_value(f, version, variant) if present else f.default_value()
    return body


def _sample_value(f: Field, version: int, variant: int) -> Any:
    if variant == 1 and version in f.nullable:
        return None
    if f.type == "struct":
        return sample_body(f.fields, version, variant)
    if f.is_array:
        if variant == 1:
            return []
        if f.element_type == "struct":
            return [sample_body(f.fields, version, variant)]
        return [_scalar(f.element_type, variant)]
    return _scalar(f.type, variant)


def _scalar(type_name: str, variant: int) -> Any:
    ints = _INTS_1 if variant else _INTS_0
    if type_name in ints:
        return ints[type_name]
    if type_name == "bool":
        return variant == 0
    if type_name == "float64":
        return -0.25 if variant else 1.5
    if type_name == "string":
        return "h\u00e9\u2603" if variant else "x"
    if type_name in ("bytes", "records"):
        return bytes(range(200)) if variant else b"\x01\x02\x03"
    if type_name == "uuid":
        return bytes(range(16)) if variant == 0 else b"\xff" * 16
    raise AssertionError(f"no sample for {type_name}")


def normalise(value: Any) -> Any:
    """Make a decoded body comparable: memoryview record slices become bytes."""
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def api_versions(apis: dict[int, Api]) -> list[tuple[Api, int]]:
    """Every (api, version) pair the codec claims to handle."""
    return [(a, v) for a in apis.values() for v in range(a.valid[0], a.valid[1] + 1)]
