"""Avro schemas: parsed and validated with fastavro, written out the way Java's Avro does.

The canonical text follows Java Avro's ``Schema.toString()`` (what Confluent
stores): compact JSON, members in Java's order, names written relative to the
enclosing namespace, ``{"type": "int"}`` collapsed to ``"int"``.  ``normalize``
writes every name in full and drops ``namespace`` members, so schemas that spell
the same names differently compare equal.  Referenced schemas provide named types
(the reference's name is the type's full name), as in Confluent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from fastavro.schema import parse_schema

from samsa.registry.formats.base import (
    InvalidSchemaError,
    ParsedSchema,
    ResolvedReference,
    SchemaFormat,
)

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "error", "enum", "fixed"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIELD_ORDER = ("name", "type", "doc", "default", "order", "aliases")
_TYPE_ORDER = {
    "record": ("type", "name", "namespace", "doc", "fields"),
    "error": ("type", "name", "namespace", "doc", "fields"),
    "enum": ("type", "name", "namespace", "doc", "symbols", "default"),
    "fixed": ("type", "name", "namespace", "doc", "size"),
    "array": ("type", "items"),
    "map": ("type", "values"),
}


def full_name(name: str, namespace: str | None) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def space_of(name: str) -> str | None:
    return name.rsplit(".", 1)[0] if "." in name else None


class AvroSchema(ParsedSchema):
    schema_type = "AVRO"

    def __init__(
        self, obj: Any, parsed: Any, names: dict[str, Any], normalize: bool = False
    ) -> None:
        self.obj = obj  # the schema JSON as given
        # fastavro's parsed form (full names everywhere) and every named type visible
        # here (this schema's and its references'), by full name: the compat model.
        self.parsed = parsed
        self.names = names
        self._normalize = normalize
        self._text = json.dumps(
            _Writer(normalize).write(obj, None), separators=(",", ":"), ensure_ascii=False
        )

    def canonical(self) -> str:
        return self._text

    def normalized(self) -> AvroSchema:
        return AvroSchema(self.obj, self.parsed, self.names, normalize=True)

    def record_names(self) -> tuple[str, ...]:
        """The full name of the top-level type (a primitive's is its type), as
        confluent-kafka's serializers take it; each branch's for a union."""
        branches = self.obj if isinstance(self.obj, list) else [self.obj]
        names = []
        for branch in branches:
            if isinstance(branch, str):
                names.append(branch)
            elif isinstance(branch, dict) and isinstance(branch.get("name"), str):
                names.append(full_name(branch["name"], branch.get("namespace")))
            elif isinstance(branch, dict) and isinstance(branch.get("type"), str):
                names.append(branch["type"])
        return tuple(names)

    def read_errors(self, writer: ParsedSchema) -> list[str]:
        from samsa.registry.formats.avro_compat import read_errors

        if not isinstance(writer, AvroSchema):
            return [f"Incompatible because of different schema type: {writer.schema_type}"]
        return read_errors(self, writer)


class _Avro(SchemaFormat):
    schema_type = "AVRO"

    def parse(
        self, text: str, references: Sequence[ResolvedReference], *, is_new: bool
    ) -> AvroSchema:
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise InvalidSchemaError(f"Invalid schema: not JSON: {e}") from e
        names: dict[str, Any] = {}
        for ref in references:
            if not isinstance(ref.schema, AvroSchema):
                raise InvalidSchemaError(f"Reference {ref.name} is not an Avro schema")
            names.update(ref.schema.names)
        _Checker(set(names)).check(obj, None)
        try:
            parsed = parse_schema(obj, named_schemas=names, _write_hint=False)
        except Exception as e:  # fastavro raises several types for bad schemas
            raise InvalidSchemaError(f"Invalid schema: {type(e).__name__}: {e}") from e
        return AvroSchema(obj, parsed, names)


AVRO = _Avro()


class _Checker:
    """Checks fastavro leaves to Java's parser: names, duplicates, required members."""

    def __init__(self, known: set[str]) -> None:
        self.known = known

    def check(self, node: Any, ns: str | None) -> None:
        if isinstance(node, str):
            known = node in PRIMITIVES or node in self.known
            if not known and full_name(node, ns) not in self.known:
                raise InvalidSchemaError(f"Invalid schema: unknown type {node!r}")
        elif isinstance(node, list):
            seen: set[str] = set()
            for branch in node:
                if isinstance(branch, list):
                    raise InvalidSchemaError("Invalid schema: nested unions are not allowed")
                self.check(branch, ns)
                key = self._branch_key(branch, ns)
                if key in seen:
                    raise InvalidSchemaError(f"Invalid schema: duplicate in union: {key}")
                seen.add(key)
        elif isinstance(node, dict):
            self._check_object(node, ns)
        else:
            raise InvalidSchemaError(f"Invalid schema: {node!r} is not a schema")

    def _branch_key(self, branch: Any, ns: str | None) -> str:
        if isinstance(branch, dict):
            kind = branch.get("type")
            if kind in NAMED:
                return full_name(str(branch.get("name")), branch.get("namespace") or ns)
            return kind if isinstance(kind, str) else repr(kind)
        return full_name(branch, ns) if branch not in PRIMITIVES else branch

    def _check_object(self, node: dict[str, Any], ns: str | None) -> None:
        kind = node.get("type")
        if kind is None:
            raise InvalidSchemaError("Invalid schema: no type")
        if not isinstance(kind, str):
            self.check(kind, ns)
            return
        if kind in NAMED:
            name = node.get("name")
            if not isinstance(name, str) or not all(_NAME.fullmatch(p) for p in name.split(".")):
                raise InvalidSchemaError(f"Invalid schema: bad {kind} name {name!r}")
            namespace = node.get("namespace", ns) if "." not in name else space_of(name)
            if namespace and not all(_NAME.fullmatch(p) for p in namespace.split(".")):
                raise InvalidSchemaError(f"Invalid schema: bad namespace {namespace!r}")
            self.known.add(full_name(name, namespace or None))
            ns = namespace or None
        if kind in ("record", "error"):
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise InvalidSchemaError("Invalid schema: a record needs a fields array")
            seen = set()
            for f in fields:
                if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                    raise InvalidSchemaError("Invalid schema: a field needs a name")
                if not _NAME.fullmatch(f["name"]) or f["name"] in seen:
                    raise InvalidSchemaError(f"Invalid schema: bad or repeated field {f['name']!r}")
                seen.add(f["name"])
                if "type" not in f:
                    raise InvalidSchemaError(f"Invalid schema: field {f['name']!r} has no type")
                self.check(f["type"], ns)
        elif kind == "enum":
            symbols = node.get("symbols")
            if not isinstance(symbols, list) or not all(
                isinstance(s, str) and _NAME.fullmatch(s) for s in symbols
            ):
                raise InvalidSchemaError("Invalid schema: bad enum symbols")
            default = node.get("default")
            if default is not None and default not in symbols:
                raise InvalidSchemaError(f"Invalid schema: enum default {default!r} not a symbol")
        elif kind == "fixed":
            size = node.get("size")
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise InvalidSchemaError("Invalid schema: fixed needs a size")
        elif kind == "array":
            if "items" not in node:
                raise InvalidSchemaError("Invalid schema: array needs items")
            self.check(node["items"], ns)
        elif kind == "map":
            if "values" not in node:
                raise InvalidSchemaError("Invalid schema: map needs values")
            self.check(node["values"], ns)
        elif kind not in PRIMITIVES:
            self.check(kind, ns)


class _Writer:
    """Writes a schema's JSON in Java Avro's ``toString()`` shape."""

    def __init__(self, normalize: bool) -> None:
        self.normalize = normalize

    def ref(self, name: str, ns: str | None) -> str:
        if name in PRIMITIVES:
            return name
        full = full_name(name, ns)
        if not self.normalize and space_of(full) == ns and ns is not None:
            return full.rsplit(".", 1)[1]
        return full

    def write(self, node: Any, ns: str | None) -> Any:
        if isinstance(node, str):
            return self.ref(node, ns)
        if isinstance(node, list):
            return [self.write(b, ns) for b in node]
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if not isinstance(kind, str):
            return self.write(kind, ns)
        if kind not in _TYPE_ORDER:
            props = {k: v for k, v in node.items() if k != "type"}
            return {"type": self.ref(kind, ns), **props} if props else self.ref(kind, ns)
        out: dict[str, Any] = {"type": kind}
        inner_ns = ns
        if kind in NAMED:
            name = node["name"]
            space = space_of(name) if "." in name else (node.get("namespace", ns) or None)
            full = full_name(name, space)
            if self.normalize:
                out["name"] = full
            else:
                out["name"] = full.rsplit(".", 1)[-1]
                if space != ns and space is not None:
                    out["namespace"] = space
            inner_ns = space
        for member in _TYPE_ORDER[kind][1:]:
            if member in ("name", "namespace") or member not in node:
                continue
            value = node[member]
            if member == "fields":
                value = [self.field(f, inner_ns) for f in value]
            elif member in ("items", "values"):
                value = self.write(value, inner_ns)
            out[member] = value
        skip = {"type", "name", "namespace", "aliases", *_TYPE_ORDER[kind]}
        out.update({k: v for k, v in node.items() if k not in skip})
        if node.get("aliases"):
            out["aliases"] = [self.ref(a, inner_ns) for a in node["aliases"]]
        return out

    def field(self, f: dict[str, Any], ns: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": f["name"], "type": self.write(f["type"], ns)}
        for member in ("doc", "default"):
            if member in f:
                out[member] = f[member]
        if f.get("order", "ascending") != "ascending":
            out["order"] = f["order"]
        if f.get("aliases"):
            out["aliases"] = f["aliases"]
        out.update({k: v for k, v in f.items() if k not in _FIELD_ORDER})
        return out
