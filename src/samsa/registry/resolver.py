"""Parsing schemas with their references resolved from the registry's state, cached.

A schema's references name other subjects' versions; each is parsed (with its own
references, depth first) before the schema that imports it.  Parsed schemas are
cached by their type, text and references, which is safe because a stored
version never changes: new text means a new version.
"""

from __future__ import annotations

from collections import OrderedDict

from samsa.registry import errors
from samsa.registry.formats import (
    InvalidSchemaError,
    ParsedSchema,
    ResolvedReference,
    schema_format,
)
from samsa.registry.records import Reference, SchemaValue
from samsa.registry.store import RegistryState

_CACHE_SIZE = 1000
_MAX_DEPTH = 32


class SchemaResolver:
    def __init__(self, state: RegistryState) -> None:
        self.state = state
        self._cache: OrderedDict[tuple[str, str, tuple[Reference, ...], bool], ParsedSchema] = (
            OrderedDict()
        )

    def parse(
        self,
        schema_type: str,
        text: str,
        references: tuple[Reference, ...],
        *,
        is_new: bool,
        depth: int = 0,
    ) -> ParsedSchema:
        """The parsed schema; raises RegistryError 42201 when it or a reference is invalid."""
        key = (schema_type, text, references, is_new)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        if depth > _MAX_DEPTH:
            raise errors.invalid_schema("Invalid schema: references nest too deeply")
        resolved = [self._reference(ref, depth) for ref in references]
        try:
            parsed = schema_format(schema_type).parse(text, resolved, is_new=is_new)
        except InvalidSchemaError as e:
            raise errors.invalid_schema(str(e)) from e
        self._cache[key] = parsed
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return parsed

    def parse_stored(self, stored: SchemaValue) -> ParsedSchema:
        return self.parse(stored.schema_type, stored.schema, stored.references, is_new=False)

    def _reference(self, ref: Reference, depth: int) -> ResolvedReference:
        stored = self.state.version(ref.subject, ref.version)
        if stored is None:
            raise errors.invalid_schema(
                f"Invalid schema: reference {ref.name} to subject {ref.subject!r} version "
                f"{ref.version} not found"
            )
        parsed = self.parse(
            stored.schema_type, stored.schema, stored.references, is_new=False, depth=depth + 1
        )
        return ResolvedReference(ref.name, ref.subject, ref.version, parsed)
