"""What every schema format provides to the registry.

A format parses a schema's text (with the schemas it references already parsed),
gives the canonical text the registry stores and answers, a normalized variant
for ``normalize=true``, and says whether a reader with one schema can read data
written with another, by that format's own rules.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass


class InvalidSchemaError(ValueError):
    """The text is not a valid schema of its type (answered as 42201)."""


@dataclass(frozen=True)
class ResolvedReference:
    """A reference by ``name`` (an import path, a full type name, a $ref URL), parsed."""

    name: str
    subject: str
    version: int
    schema: ParsedSchema


class ParsedSchema(ABC):
    """One parsed schema; immutable, safe to cache by (subject, version) or id."""

    schema_type: str

    @abstractmethod
    def canonical(self) -> str:
        """The text stored in ``_schemas`` and answered by the API."""

    @abstractmethod
    def normalized(self) -> ParsedSchema:
        """The same schema in normalized form (for ``normalize=true``)."""

    @abstractmethod
    def read_errors(self, writer: ParsedSchema) -> list[str]:
        """Why a reader with this schema cannot read data written with ``writer``.

        Empty when it can.  BACKWARD checks ``new.read_errors(old)``, FORWARD
        ``old.read_errors(new)``, FULL both.
        """

    def record_names(self) -> tuple[str, ...]:
        """The record names a serializer may name this schema's subject after
        (RecordNameStrategy): Avro's top-level full name (each branch's, for a
        union), every Protobuf message's full name, a JSON Schema's ``title``."""
        return ()

    def serialized(self) -> str | None:
        """The ``format=serialized`` form, where the format has one (Protobuf)."""
        return None

    def formatted(self, fmt: str) -> str | None:
        """The text in a named ``format`` (``serialized``, ...), None if unknown."""
        return self.serialized() if fmt == "serialized" else None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ParsedSchema)
            and other.schema_type == self.schema_type
            and other.canonical() == self.canonical()
        )

    def __hash__(self) -> int:
        return hash((self.schema_type, self.canonical()))


class SchemaFormat(ABC):
    schema_type: str

    @abstractmethod
    def parse(
        self, text: str, references: Sequence[ResolvedReference], *, is_new: bool
    ) -> ParsedSchema:
        """Parse and validate ``text``; ``is_new`` applies checks only new schemas get.

        Raises InvalidSchemaError with a readable reason.
        """
