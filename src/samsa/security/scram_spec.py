"""Kafka's SCRAM credential syntax: ``SCRAM-SHA-256=[name=alice,password=secret]``.

The same bracketed form is what ``kafka-storage format --add-scram`` and
``kafka-configs --add-config`` take; several specs may follow each other,
separated by commas, spaces or semicolons.  Keys: ``name`` (where the user is
not given elsewhere), ``password``, ``iterations`` (default 4096, Kafka's).
Every mistake is a ConfigError naming the spec, never a half-read user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from samsa.errors import ConfigError
from samsa.protocol.sasl.scram import MAX_ITERATIONS, MECHANISMS

DEFAULT_ITERATIONS = 4096
_SPEC = re.compile(r"\s*([A-Za-z0-9-]+)=\[([^\]]*)\]\s*[,;]?")


@dataclass(frozen=True, slots=True)
class ScramSpec:
    mechanism: str
    name: str
    password: str
    iterations: int

    def __repr__(self) -> str:  # never print the password
        return f"ScramSpec({self.mechanism}, {self.name!r}, iterations={self.iterations})"


def parse_scram_specs(text: str, what: str, *, user: str | None = None) -> list[ScramSpec]:
    """Every spec in ``text``; ``user`` is the name when the specs carry none."""
    specs: list[ScramSpec] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _SPEC.match(text, pos)
        if match is None:
            raise ConfigError(
                f"{what}: expected MECHANISM=[name=...,password=...], got {text[pos:]!r}"
            )
        specs.append(_spec(match.group(1).upper(), match.group(2), what, user))
        pos = match.end()
    return specs


def _spec(mechanism: str, body: str, what: str, user: str | None) -> ScramSpec:
    if mechanism not in MECHANISMS:
        raise ConfigError(f"{what}: unknown SCRAM mechanism {mechanism} ({', '.join(MECHANISMS)})")
    fields: dict[str, str] = {}
    for part in (p for p in body.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("name", "password", "iterations"):
            raise ConfigError(f"{what}: {mechanism}: unexpected {part.strip()!r}")
        fields[key] = value.strip().strip('"')
    name = fields.get("name", user or "")
    if not name:
        raise ConfigError(f"{what}: {mechanism} needs name=USER")
    if not fields.get("password"):
        raise ConfigError(f"{what}: {mechanism} for {name} needs password=...")
    try:
        iterations = int(fields.get("iterations", DEFAULT_ITERATIONS))
    except ValueError:
        raise ConfigError(f"{what}: {mechanism}: iterations must be a number") from None
    low = MECHANISMS[mechanism][1]
    if not low <= iterations <= MAX_ITERATIONS:
        raise ConfigError(
            f"{what}: {mechanism} iterations must be between {low} and {MAX_ITERATIONS}"
        )
    return ScramSpec(mechanism, name, fields["password"], iterations)
