"""JSON Schema documents seen as typed nodes, the way Confluent's diff (on Everit) sees them.

A node is one of: empty (``{}``/``true``), false, string, number (``integer`` is a
number that requires integers), boolean, null, object, array, enum (``const`` is
a one-value enum), combined (``allOf``/``anyOf``/``oneOf``; a ``type`` list is an
``anyOf`` of one node per type) or not.  ``$ref`` is followed, into the document
itself or into a referenced subject's schema, so nodes are made lazily and
recursive schemas stay finite.
"""

from __future__ import annotations

from typing import Any

from samsa.registry.formats.jsonschema import JsonSchema

_COMBINERS = ("allOf", "anyOf", "oneOf")
_BY_KEYWORD = {
    "object": ("properties", "additionalProperties", "required", "patternProperties",
               "minProperties", "maxProperties", "dependencies", "propertyNames"),
    "array": ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}  # fmt: skip
_ANNOTATIONS = {"$schema", "$id", "id", "title", "description", "default", "examples",
                "definitions", "$defs", "$comment", "readOnly", "writeOnly"}  # fmt: skip


class Node:
    def __init__(self, reader: NodeReader, raw: Any, doc: JsonSchema) -> None:
        self.reader, self.raw, self.doc = reader, raw, doc
        self.integer = False
        self.criterion = ""
        self.subschemas: list[Node] = []
        self.values: list[Any] = []
        self.kind = self._classify()

    def _classify(self) -> str:
        raw = self.raw
        if raw is True or raw == {}:
            return "empty"
        if raw is False:
            return "false"
        if not isinstance(raw, dict):
            return "empty"
        combiners = [c for c in _COMBINERS if c in raw]
        rest = {k: v for k, v in raw.items() if k not in _COMBINERS and k != "not"}
        shaped = [k for k in rest if k not in _ANNOTATIONS]
        parts = [{c: raw[c]} for c in combiners] + ([{"not": raw["not"]}] if "not" in raw else [])
        if parts and (shaped or len(parts) > 1):
            self.criterion = "allOf"
            base = [rest] if shaped else []
            self.subschemas = [Node(self.reader, p, self.doc) for p in base + parts]
            return "combined"
        if combiners:
            self.criterion = combiners[0]
            self.subschemas = [Node(self.reader, s, self.doc) for s in raw[combiners[0]]]
            return "combined"
        if "not" in raw:
            return "not"
        if "enum" in raw or "const" in raw:
            self.values = list(raw["enum"]) if "enum" in raw else [raw["const"]]
            return "enum"
        kind = raw.get("type")
        if isinstance(kind, list):
            if len(kind) == 1:
                kind = kind[0]
            else:
                self.criterion = "anyOf"
                self.subschemas = [Node(self.reader, {**raw, "type": t}, self.doc) for t in kind]
                return "combined"
        if kind is None:
            inferred = [k for k, words in _BY_KEYWORD.items() if any(w in raw for w in words)]
            kind = inferred[0] if len(inferred) == 1 else None
            if kind is None:
                return "empty"
        if kind == "integer":
            self.integer = True
            return "number"
        return str(kind)

    # -- children -----------------------------------------------------------------

    def child(self, name: str) -> Node | None:
        if not isinstance(self.raw, dict) or name not in self.raw:
            return None
        value = self.raw[name]
        return None if isinstance(value, list) else self.reader.node(value, self.doc)

    def children(self, name: str) -> list[Node]:
        value = self.raw.get(name) if isinstance(self.raw, dict) else None
        return [self.reader.node(v, self.doc) for v in value] if isinstance(value, list) else []

    def mapping(self, name: str) -> dict[str, Node]:
        value = self.raw.get(name) if isinstance(self.raw, dict) else None
        if not isinstance(value, dict):
            return {}
        return {k: self.reader.node(v, self.doc) for k, v in value.items()}

    def not_schema(self) -> Node:
        return self.reader.node(self.raw["not"], self.doc)

    def closed_items(self) -> bool:
        return isinstance(self.raw, dict) and self.raw.get("additionalItems") is False

    def has_default(self) -> bool:
        return isinstance(self.raw, dict) and "default" in self.raw


class NodeReader:
    """Makes nodes for one schema and the schemas it references."""

    def __init__(self, schema: JsonSchema) -> None:
        self.schema = schema

    def root(self) -> Node:
        return self.node(self.schema.root, self.schema)

    def node(self, raw: Any, doc: JsonSchema) -> Node:
        seen = 0
        while isinstance(raw, dict) and isinstance(raw.get("$ref"), str) and seen < 64:
            raw, doc = self._follow(raw["$ref"], doc)
            seen += 1
        return Node(self, raw, doc)

    def _follow(self, ref: str, doc: JsonSchema) -> tuple[Any, JsonSchema]:
        base, _, pointer = ref.partition("#")
        target: JsonSchema | None = doc
        if base:
            target = self.schema.refs.get(base) or doc.refs.get(base) or _by_id(self.schema, base)
        if target is None:
            return {}, doc  # unresolvable: compared as the empty schema
        node: Any = target.root
        for part in [p for p in pointer.split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return {}, target
        return node, target


def _by_id(schema: JsonSchema, base: str) -> JsonSchema | None:
    for ref in schema.refs.values():
        if isinstance(ref.root, dict) and ref.root.get("$id") in (base, f"{base}#"):
            return ref
    return None
