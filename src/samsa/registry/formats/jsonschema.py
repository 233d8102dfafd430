"""JSON Schema: parsed as JSON, checked against its draft's metaschema by ``jsonschema``.

The draft comes from ``$schema`` (draft 7 when absent, as Confluent's default).
The canonical text is the compact JSON with members in the order given (what
Jackson writes for Confluent); ``normalize`` sorts members.  References are
other subjects' schemas under the name a ``$ref`` uses (``"other.json"``, or
``"other.json#/definitions/x"``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from jsonschema import Draft7Validator, SchemaError, validators

from samsa.registry.formats.base import (
    InvalidSchemaError,
    ParsedSchema,
    ResolvedReference,
    SchemaFormat,
)


def _sorted(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sorted(node[k]) for k in sorted(node)}
    if isinstance(node, list):
        return [_sorted(v) for v in node]
    return node


class JsonSchema(ParsedSchema):
    schema_type = "JSON"

    def __init__(self, root: Any, refs: dict[str, JsonSchema], normalize: bool = False) -> None:
        self.root = _sorted(root) if normalize else root
        self.refs = refs  # reference name -> parsed schema
        self._text = json.dumps(self.root, separators=(",", ":"), ensure_ascii=False)

    def canonical(self) -> str:
        return self._text

    def normalized(self) -> JsonSchema:
        return JsonSchema(self.root, self.refs, normalize=True)

    def record_names(self) -> tuple[str, ...]:
        """The ``title``: what confluent-kafka's JSONSerializer names the record by."""
        title = self.root.get("title") if isinstance(self.root, dict) else None
        return (title,) if isinstance(title, str) else ()

    def read_errors(self, writer: ParsedSchema) -> list[str]:
        from samsa.registry.formats.jsonschema_compat import read_errors

        if not isinstance(writer, JsonSchema):
            return [f"Incompatible because of different schema type: {writer.schema_type}"]
        return read_errors(self, writer)


class _Json(SchemaFormat):
    schema_type = "JSON"

    def parse(
        self, text: str, references: Sequence[ResolvedReference], *, is_new: bool
    ) -> JsonSchema:
        try:
            root = json.loads(text)
        except ValueError as e:
            raise InvalidSchemaError(f"Invalid schema: not JSON: {e}") from e
        if not isinstance(root, (dict, bool)):
            raise InvalidSchemaError("Invalid schema: a JSON schema is an object or a boolean")
        if isinstance(root, dict):
            validator = validators.validator_for(root, default=Draft7Validator)
            try:
                validator.check_schema(root)
            except SchemaError as e:
                raise InvalidSchemaError(f"Invalid schema: {e.message}") from e
        refs: dict[str, JsonSchema] = {}
        for ref in references:
            if not isinstance(ref.schema, JsonSchema):
                raise InvalidSchemaError(f"Reference {ref.name} is not a JSON schema")
            refs.update(ref.schema.refs)
            refs[ref.name] = ref.schema
        return JsonSchema(root, refs)


JSON_SCHEMA = _Json()
