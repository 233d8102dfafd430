"""Hypothesis strategies for message bodies, built from a schema's fields.

A body holds every field of the schema: fields present at the version get an
arbitrary value (null where the version allows it), the others their default,
so a decoded body compares with ``==`` to the one that was encoded.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from samsa.protocol.schema import Field

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}

# Text without lone surrogates (they have no UTF-8 encoding).
_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60)


def body_strategy(fields: tuple[Field, ...], version: int) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies of ``fields`` at ``version``; see the module docstring."""
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for f in fields:
        if version in f.versions or version in f.tagged:
            parts[f.name] = _value(f, version)
        else:
            parts[f.name] = st.just(f.default_value())
    return st.fixed_dictionaries(parts)


def _value(f: Field, version: int) -> st.SearchStrategy[Any]:
    inner: st.SearchStrategy[Any]
    if f.type == "struct":
        inner = body_strategy(f.fields, version)
    elif f.is_array:
        element = (
            body_strategy(f.fields, version)
            if f.element_type == "struct"
            else _scalar(f.element_type)
        )
        inner = st.lists(element, max_size=4)
    else:
        inner = _scalar(f.type)
    if version in f.nullable:
        return st.none() | inner
    return inner


def _scalar(type_name: str) -> st.SearchStrategy[Any]:
    if type_name in _INT_RANGES:
        low, high = _INT_RANGES[type_name]
        return st.integers(low, high)
    if type_name == "bool":
        return st.booleans()
    if type_name == "float64":
        return st.floats(allow_nan=False)
    if type_name == "string":
        return _TEXT
    if type_name in ("bytes", "records"):
        return st.binary(max_size=40)
    if type_name == "uuid":
        return st.binary(min_size=16, max_size=16)
    raise AssertionError(f"no strategy for {type_name}")
