"""JSON Schema compatibility, by the rules of Confluent's JSON Schema ``SchemaDiff``.

The writer's (old) schema is compared with the reader's (new) one: a change is
compatible when every document valid under the old schema stays valid under the
new one.  So relaxing is allowed (removing or raising ``maxLength``, adding enum
values, widening integer to number, opening ``additionalProperties``, removing a
``required`` entry, a property removed from an open content model) and tightening
is refused: TYPE_CHANGED, TYPE_NARROWED, MAX_LENGTH_ADDED/DECREASED, ENUM_ARRAY_NARROWED,
ADDITIONAL_PROPERTIES_REMOVED (closing the content model), REQUIRED_ATTRIBUTE_ADDED
(without a default), PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (a typed property an old
document may already hold with another type), PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL,
and the combinator rules (SUM_TYPE_NARROWED, PRODUCT_TYPE_EXTENDED, ...).
"""

from __future__ import annotations

from typing import Any

from samsa.registry.formats.jsonschema import JsonSchema
from samsa.registry.formats.jsonschema_model import Node, NodeReader


def read_errors(reader: JsonSchema, writer: JsonSchema) -> list[str]:
    diff = _Diff(NodeReader(writer), NodeReader(reader))
    diff.compare(diff.old.root(), diff.new.root(), "#")
    return diff.errors


def _bound(diff: _Diff, path: str, name: str, old: Any, new: Any, upper: bool) -> None:
    """An upper bound may grow or go; a lower bound may shrink or go."""
    if old == new:
        return
    if old is None:
        diff.add(f"{name.upper()}_ADDED", path)
    elif new is not None and (new < old if upper else new > old):
        diff.add(f"{name.upper()}_{'DECREASED' if upper else 'INCREASED'}", path)


class _Diff:
    def __init__(self, old: NodeReader, new: NodeReader) -> None:
        self.old, self.new = old, new
        self.errors: list[str] = []
        self.in_progress: set[tuple[int, int]] = set()

    def add(self, kind: str, path: str) -> None:
        self.errors.append(
            f"{{errorType:'{kind}', description:'Found incompatible change: "
            f"Difference{{jsonPath='{path}', type={kind}}}'}}"
        )

    def compatible(self, old: Node, new: Node) -> bool:
        probe = _Diff(self.old, self.new)
        probe.in_progress = self.in_progress
        probe.compare(old, new, "#")
        return not probe.errors

    def compare(self, old: Node, new: Node, path: str) -> None:
        pair = (id(old.raw), id(new.raw))
        if pair in self.in_progress:
            return
        self.in_progress.add(pair)
        try:
            self._compare(old, new, path)
        finally:
            self.in_progress.discard(pair)

    def _compare(self, old: Node, new: Node, path: str) -> None:
        sum_like = len(new.subschemas) == 1 or new.criterion in ("anyOf", "oneOf")
        widened = old.kind != "combined" and new.kind == "combined" and sum_like
        if widened and any(self.compatible(old, sub) for sub in new.subschemas):
            return  # SUM_TYPE_EXTENDED
        single = old.kind == "combined" and len(old.subschemas) == 1
        if single and new.kind != "combined" and self.compatible(old.subschemas[0], new):
            return
        if old.kind != new.kind:
            if old.kind == "false" or new.kind == "empty":
                return
            self.add("TYPE_CHANGED", path)
            return
        getattr(self, f"_{old.kind}", lambda o, n, p: None)(old, new, path)

    def _string(self, old: Node, new: Node, path: str) -> None:
        o, n = old.raw, new.raw
        _bound(self, path, "max_length", o.get("maxLength"), n.get("maxLength"), upper=True)
        _bound(self, path, "min_length", o.get("minLength"), n.get("minLength"), upper=False)
        if n.get("pattern") is not None and o.get("pattern") != n.get("pattern"):
            self.add("PATTERN_ADDED" if o.get("pattern") is None else "PATTERN_CHANGED", path)

    def _number(self, old: Node, new: Node, path: str) -> None:
        o, n = old.raw, new.raw
        if new.integer and not old.integer:
            self.add("TYPE_NARROWED", path)
        for name, upper in (("maximum", True), ("exclusiveMaximum", True)):
            _bound(self, path, _snake(name), o.get(name), n.get(name), upper)
        for name, upper in (("minimum", False), ("exclusiveMinimum", False)):
            _bound(self, path, _snake(name), o.get(name), n.get(name), upper)
        o_mul, n_mul = o.get("multipleOf"), n.get("multipleOf")
        if n_mul is not None and o_mul != n_mul:
            if o_mul is None:
                self.add("MULTIPLE_OF_ADDED", path)
            elif (o_mul / n_mul) != int(o_mul / n_mul):
                self.add("MULTIPLE_OF_CHANGED", path)

    def _enum(self, old: Node, new: Node, path: str) -> None:
        o_values, n_values = old.values, new.values
        if not all(v in n_values for v in o_values):
            self.add(
                "ENUM_ARRAY_NARROWED"
                if all(v in o_values for v in n_values)
                else "ENUM_ARRAY_CHANGED",
                path,
            )

    def _not(self, old: Node, new: Node, path: str) -> None:
        if not self.compatible(new.not_schema(), old.not_schema()):
            self.add("NOT_TYPE_EXTENDED", path)

    def _combined(self, old: Node, new: Node, path: str) -> None:
        if old.criterion != new.criterion and not (
            new.criterion == "anyOf" or (old.criterion == "allOf" and new.criterion == "oneOf")
        ):
            self.add("COMBINED_TYPE_CHANGED", path)
            return
        olds, news = old.subschemas, new.subschemas
        product = old.criterion == "allOf"
        if len(news) > len(olds) and product:
            self.add("PRODUCT_TYPE_EXTENDED", path)
        elif len(news) < len(olds) and not product:
            self.add("SUM_TYPE_NARROWED", path)
        smaller, larger, forward = (
            (olds, news, True) if len(olds) <= len(news) else (news, olds, False)
        )
        free = list(range(len(larger)))
        for sub in smaller:
            match = next(
                (
                    i
                    for i in free
                    if self.compatible(*((sub, larger[i]) if forward else (larger[i], sub)))
                ),
                None,
            )
            if match is None:
                self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path)
                return
            free.remove(match)

    def _array(self, old: Node, new: Node, path: str) -> None:
        o, n = old.raw, new.raw
        _bound(self, path, "max_items", o.get("maxItems"), n.get("maxItems"), upper=True)
        _bound(self, path, "min_items", o.get("minItems"), n.get("minItems"), upper=False)
        if n.get("uniqueItems") and not o.get("uniqueItems"):
            self.add("UNIQUE_ITEMS_ADDED", path)
        o_items, n_items = old.child("items"), new.child("items")
        if isinstance(o.get("items"), list) or isinstance(n.get("items"), list):
            o_list, n_list = old.children("items"), new.children("items")
            for index in range(max(len(o_list), len(n_list))):
                here = f"{path}/items/{index}"
                if index < len(o_list) and index < len(n_list):
                    self.compare(o_list[index], n_list[index], here)
                elif index < len(n_list) and not old.closed_items():
                    if n_list[index].kind != "empty":
                        self.add("ITEM_ADDED_TO_OPEN_CONTENT_MODEL", here)
                elif index < len(o_list) and new.closed_items():
                    self.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", here)
            if n.get("additionalItems") is False and o.get("additionalItems") is not False:
                self.add("ADDITIONAL_ITEMS_REMOVED", path)
        elif n_items is not None:
            if o_items is None:
                self.add("ITEMS_ADDED", f"{path}/items")
            else:
                self.compare(o_items, n_items, f"{path}/items")

    def _object(self, old: Node, new: Node, path: str) -> None:
        from samsa.registry.formats.jsonschema_objects import compare_objects

        compare_objects(self, old, new, path)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
