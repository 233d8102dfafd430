"""How a broker setting is declared (``ConfigKey``) and how its text is read.

A key's ``type`` is the parser of its value: it takes the string a properties
file, ``--set`` or a flag gave and returns the value, raising ``ValueError``
with a short reason when the text is not one (``BrokerConfig`` names the key).
The parsers every area of the key table shares live here, beside the readers of
a ``server.properties`` file and of a ``HOST:PORT``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samsa.errors import ConfigError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: Callable[[str], Any]
    default: Any
    doc: str


def parse_bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def parse_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def int_between(low: int, high: int) -> Callable[[str], int]:
    """An int within [low, high] (Kafka's ``atLeast``/``between`` validators)."""

    def parse(value: str) -> int:
        number = int(value)
        if not low <= number <= high:
            raise ValueError(f"must be between {low} and {high}")
        return number

    return parse


def parse_properties(text: str) -> dict[str, str]:
    """Parse a Java ``.properties`` file (``key=value`` or ``key: value``, ``#``/``!`` comments)."""
    values: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        for sep in ("=", ":"):
            if sep in stripped:
                key, value = stripped.split(sep, 1)
                values[key.strip()] = value.strip()
                break
        else:
            raise ConfigError(f"line {lineno}: expected key=value, got {stripped!r}")
    return values


def parse_host_port(value: str) -> tuple[str, int]:
    """Parse ``HOST:PORT`` or ``PLAINTEXT://HOST:PORT`` (first listener of a list)."""
    first = parse_list(value)[0] if value.strip() else ""
    if "://" in first:
        first = first.split("://", 1)[1]
    host, sep, port = first.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"expected HOST:PORT, got {value!r}")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)
