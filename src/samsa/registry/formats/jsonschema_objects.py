"""JSON Schema compatibility for objects: Confluent's ``ObjectSchemaDiff`` rules.

The content model decides what adding or removing a property means.  An *open*
model (no ``patternProperties``, ``additionalProperties`` absent or true) lets old
documents hold any property, so a reader may not add a typed property (an old
document could hold it with another type) but may drop one.  A *closed* model
(``additionalProperties: false``) is the other way round.  A *partially open* one
covers a property with a pattern's or ``additionalProperties``' schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.registry.formats.jsonschema_model import Node

if TYPE_CHECKING:
    from samsa.registry.formats.jsonschema_compat import _Diff


def compare_objects(diff: _Diff, old: Node, new: Node, path: str) -> None:
    _required(diff, old, new, path)
    _properties(diff, old, new, path)
    _dependencies(diff, old, new, path)
    _additional(diff, old, new, path)
    from samsa.registry.formats.jsonschema_compat import _bound

    o, n = old.raw, new.raw
    _bound(diff, path, "max_properties", o.get("maxProperties"), n.get("maxProperties"), True)
    _bound(diff, path, "min_properties", o.get("minProperties"), n.get("minProperties"), False)


def _permits_additional(node: Node) -> bool:
    return node.raw.get("additionalProperties", True) is not False


def _additional_schema(node: Node) -> Node | None:
    value = node.raw.get("additionalProperties")
    return node.child("additionalProperties") if isinstance(value, dict) else None


def _is_open(node: Node) -> bool:
    return (
        not node.raw.get("patternProperties")
        and _additional_schema(node) is None
        and _permits_additional(node)
    )


def _partial_schema(node: Node, name: str) -> Node | None:
    import re

    for pattern, schema in node.mapping("patternProperties").items():
        try:
            if re.search(pattern, name):
                return schema
        except re.error:
            continue
    return _additional_schema(node)


def _required(diff: _Diff, old: Node, new: Node, path: str) -> None:
    o_required = set(old.raw.get("required") or ())
    n_required = set(new.raw.get("required") or ())
    n_props = new.mapping("properties")
    for name in old.mapping("properties"):
        newly = name in n_props and name in n_required and name not in o_required
        if newly and not n_props[name].has_default():
            diff.add("REQUIRED_ATTRIBUTE_ADDED", f"{path}/required/{name}")


def _properties(diff: _Diff, old: Node, new: Node, path: str) -> None:
    o_props, n_props = old.mapping("properties"), new.mapping("properties")
    n_required = set(new.raw.get("required") or ())
    for name in sorted(set(o_props) | set(n_props)):
        here = f"{path}/properties/{name}"
        if name not in n_props:
            if _is_open(new):
                continue  # PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
            partial = _partial_schema(new, name)
            if partial is not None:
                if not diff.compatible(o_props[name], partial):
                    diff.add("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", here)
            elif o_props[name].kind != "false":
                diff.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", here)
        elif name not in o_props:
            if _is_open(old):
                if n_props[name].kind != "empty":
                    diff.add("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", here)
                continue
            partial = _partial_schema(old, name)
            if partial is not None and not diff.compatible(partial, n_props[name]):
                diff.add("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", here)
            if name in n_required and not n_props[name].has_default():
                diff.add("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", here)
        else:
            diff.compare(o_props[name], n_props[name], here)


def _dependencies(diff: _Diff, old: Node, new: Node, path: str) -> None:
    o_deps = old.raw.get("dependencies") or {}
    n_deps = new.raw.get("dependencies") or {}
    for name in sorted(set(o_deps) | set(n_deps)):
        here = f"{path}/dependencies/{name}"
        o_dep, n_dep = o_deps.get(name), n_deps.get(name)
        if n_dep is None:
            continue  # DEPENDENCY_ARRAY_REMOVED / DEPENDENCY_SCHEMA_REMOVED
        if isinstance(n_dep, list):
            if o_dep is None:
                diff.add("DEPENDENCY_ARRAY_ADDED", here)
            elif isinstance(o_dep, list) and not set(n_dep) <= set(o_dep):
                diff.add(
                    "DEPENDENCY_ARRAY_EXTENDED"
                    if set(o_dep) <= set(n_dep)
                    else "DEPENDENCY_ARRAY_CHANGED",
                    here,
                )
        elif o_dep is None:
            diff.add("DEPENDENCY_SCHEMA_ADDED", here)
        elif not isinstance(o_dep, list):
            diff.compare(old.reader.node(o_dep, old.doc), new.reader.node(n_dep, new.doc), here)


def _additional(diff: _Diff, old: Node, new: Node, path: str) -> None:
    here = f"{path}/additionalProperties"
    if _permits_additional(old) != _permits_additional(new):
        if not _permits_additional(new):
            diff.add("ADDITIONAL_PROPERTIES_REMOVED", here)
        return
    o_schema, n_schema = _additional_schema(old), _additional_schema(new)
    if o_schema is None and n_schema is not None:
        diff.add("ADDITIONAL_PROPERTIES_NARROWED", here)
    elif o_schema is not None and n_schema is not None:
        diff.compare(o_schema, n_schema, here)
