"""Message schemas as data.

Every Kafka API is described once, as plain data, in the form of Kafka's own JSON
message definitions: a field has a type, the versions it exists in, the versions
in which it may be null, and (for tagged fields) a tag.  The codec compiler
(`samsa.protocol.compiler`) turns these descriptions into fast encode/decode
functions once per (message, version); nothing here runs on the hot path.

Field names are the snake_case form of Kafka's CamelCase names
(``TopicData`` -> ``topic_data``); decoded messages are plain dicts keyed by them.

Types: ``int8 int16 int32 int64 uint16 uint32 float64 bool string bytes records
uuid``, ``struct`` (a nested struct, needs ``fields``), ``[]struct`` (array of
structs, needs ``fields``) and ``[]<primitive>`` such as ``[]int32``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_VERSION = 32767

PRIMITIVE_TYPES = frozenset(
    {
        "int8",
        "int16",
        "int32",
        "int64",
        "uint16",
        "uint32",
        "float64",
        "bool",
        "string",
        "bytes",
        "records",
        "uuid",
    }
)

_NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; ``low > high`` means "no versions"."""

    low: int
    high: int

    @classmethod
    def parse(cls, spec: str) -> Versions:
        """Parse Kafka's version notation: ``"3+"``, ``"0-2"``, ``"5"``, ``"none"``."""
        spec = spec.strip()
        if spec == "none":
            return cls(1, 0)
        if spec.endswith("+"):
            return cls(int(spec[:-1]), MAX_VERSION)
        if "-" in spec:
            low, high = spec.split("-", 1)
            return cls(int(low), int(high))
        return cls(int(spec), int(spec))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.low > self.high


@dataclass(frozen=True)
class Field:
    """One field of a message or nested struct (see the module docstring for types)."""

    name: str
    type: str
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    default: Any
    fields: tuple[Field, ...]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:]

    @property
    def is_struct_like(self) -> bool:
        return self.type in ("struct", "[]struct")

    def default_value(self) -> Any:
        """The value a decoder gives this field when the version lacks it."""
        if self.default is not _NO_DEFAULT:
            return self.default
        return type_default(self.type)


def type_default(type_name: str) -> Any:
    if type_name.startswith("[]"):
        return []
    if type_name in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return 0
    if type_name == "float64":
        return 0.0
    if type_name == "bool":
        return False
    if type_name == "string":
        return ""
    if type_name == "bytes":
        return b""
    if type_name == "uuid":
        return ZERO_UUID
    return None  # records, struct


ZERO_UUID = b"\x00" * 16


def F(
    name: str,
    type: str,
    versions: str = "0+",
    *,
    nullable: str = "none",
    tag: int | None = None,
    tagged: str = "none",
    default: Any = _NO_DEFAULT,
    fields: tuple[Field, ...] | list[Field] = (),
) -> Field:
    """Declare a field; mirrors the keys of Kafka's JSON schema files.

    ``versions``  -> JSON ``versions``; ``nullable`` -> ``nullableVersions``;
    ``tag``/``tagged`` -> ``tag``/``taggedVersions``; ``default`` -> ``default``.
    """
    base = type[2:] if type.startswith("[]") else type
    if base not in PRIMITIVE_TYPES and base != "struct":
        raise ValueError(f"field {name!r}: unknown type {type!r}")
    if base == "struct" and not fields:
        raise ValueError(f"field {name!r}: struct types need fields")
    if (tag is None) != (tagged == "none"):
        raise ValueError(f"field {name!r}: tag and tagged go together")
    return Field(
        name=name,
        type=type,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tag=tag,
        tagged=Versions.parse(tagged),
        default=default,
        fields=tuple(fields),
    )


@dataclass(frozen=True)
class Api:
    """One Kafka API: its key, the versions Samsa advertises, and both message schemas.

    ``valid`` is the range of versions the codec can handle; ``advertised`` is what
    the broker puts in ApiVersions (defaults to ``valid``).  ``flexible`` is the
    first flexible version, or ``None`` when the API never became flexible.
    ``listeners`` is Kafka's ``listeners`` key: which kinds of listener serve
    the API (``broker``: client-facing; ``controller``: the quorum's), so that a
    client listener never advertises what only controllers answer.
    """

    key: int
    name: str
    valid: tuple[int, int]
    flexible: int | None
    request: tuple[Field, ...]
    response: tuple[Field, ...]
    advertised: tuple[int, int] | None = None
    listeners: tuple[str, ...] = ("broker",)

    @property
    def on_broker_listeners(self) -> bool:
        return "broker" in self.listeners

    def is_flexible(self, version: int) -> bool:
        return self.flexible is not None and version >= self.flexible

    @property
    def advertised_range(self) -> tuple[int, int]:
        return self.advertised or self.valid


def api(
    key: int,
    name: str,
    valid: str,
    flexible: str,
    request: list[Field] | tuple[Field, ...],
    response: list[Field] | tuple[Field, ...],
    advertised: str | None = None,
    listeners: tuple[str, ...] = ("broker",),
) -> Api:
    """Declare an API with Kafka's notation for ``validVersions``/``flexibleVersions``."""
    valid_range = Versions.parse(valid)
    flex = Versions.parse(flexible)
    adv = Versions.parse(advertised) if advertised else None
    return Api(
        key=key,
        name=name,
        valid=(valid_range.low, valid_range.high),
        flexible=None if flex.empty else flex.low,
        request=tuple(request),
        response=tuple(response),
        advertised=(adv.low, adv.high) if adv else None,
        listeners=listeners,
    )


@dataclass(frozen=True)
class DataSchema:
    """A versioned, non-API structure (e.g. the consumer protocol's Subscription)."""

    name: str
    valid: tuple[int, int]
    flexible: int | None
    fields: tuple[Field, ...] = field(default_factory=tuple)
