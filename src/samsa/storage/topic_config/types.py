"""How a topic config key is described, checked, parsed and shown.

The vocabulary the key table (``keys`` and its families, ``tiered_keys`` and
``schema_validation_keys``) is written in, kept apart from the table itself so
the 40-odd entries read as data: Kafka's ConfigDef types, the validators the
entries name, the ``ConfigKey`` record and its ``topic_key`` constructor, and
the parsing and formatting of values as Kafka's tools send and show them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from samsa.errors import ConfigError

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigType(StrEnum):
    """Kafka's ConfigDef types, as DescribeConfigs v3+ reports them."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"


Validator = Callable[[Any], str | None]  # returns a problem, or None when fine


def at_least(low: float) -> Validator:
    return lambda v: None if v >= low else f"must be at least {low}"


def between(low: float, high: float) -> Validator:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


def one_of(*choices: str) -> Validator:
    return lambda v: None if v in choices else f"must be one of {', '.join(choices)}"


def each_of(*choices: str) -> Validator:
    def check(v: tuple[str, ...]) -> str | None:
        bad = [x for x in v if x not in choices]
        return f"unknown value(s) {bad}; allowed: {', '.join(choices)}" if bad else None

    return check


def one_of_ints(*ranges: tuple[int, int]) -> Validator:
    def check(v: int) -> str | None:
        if any(low <= v <= high for low, high in ranges):
            return None
        return "must be " + " or ".join(
            str(low) if low == high else f"between {low} and {high}" for low, high in ranges
        )

    return check


@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    attr: str
    type: ConfigType
    default: Any
    doc: str
    validator: Validator | None = None
    synonym: str | None = None  # broker-level key that supplies the default
    read_only: bool = False


def topic_key(
    name: str,
    type_: ConfigType,
    default: Any,
    doc: str,
    validator: Validator | None = None,
    synonym: str | None = None,
) -> ConfigKey:
    """A table entry: its attribute is the name with dots as underscores (LogConfig's field)."""
    return ConfigKey(name, name.replace(".", "_"), type_, default, doc, validator, synonym)


def parse_value(key: ConfigKey, raw: str) -> Any:
    """Parse and validate one string value; ConfigError names the key."""
    text = raw.strip()
    try:
        if key.type is ConfigType.BOOLEAN:
            if text.lower() not in ("true", "false"):
                raise ValueError(raw)
            value: Any = text.lower() == "true"
        elif key.type in (ConfigType.INT, ConfigType.LONG):
            value = int(text)
            limit = INT_MAX if key.type is ConfigType.INT else LONG_MAX
            if not -limit - 1 <= value <= limit:
                raise ValueError(raw)
        elif key.type is ConfigType.DOUBLE:
            value = float(text)
        elif key.type is ConfigType.LIST:
            value = tuple(x.strip() for x in text.split(",") if x.strip())
        else:
            value = text
    except ValueError:
        raise ConfigError(
            f"invalid value {raw!r} for configuration {key.name}: expected {key.type.value}"
        ) from None
    problem = key.validator(value) if key.validator else None
    if problem:
        raise ConfigError(f"invalid value {raw!r} for configuration {key.name}: {problem}")
    return value


def format_value(key: ConfigKey, value: Any) -> str:
    """The string Kafka shows for a value (lists comma-joined, booleans lowercase)."""
    if key.type is ConfigType.LIST:
        return ",".join(value)
    if key.type is ConfigType.BOOLEAN:
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One row of DescribeConfigs."""

    name: str
    value: str
    type: ConfigType
    is_default: bool
    read_only: bool
    doc: str
