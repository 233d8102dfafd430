"""Kafka's security protocols and ``listener.security.protocol.map``.

A listener's protocol decides its transport (plain TCP or TLS) and whether
SASL authentication runs before any other request.  Without a map entry, a
listener named after a protocol (``SSL://...``) uses that protocol, as Kafka's
default map does; any other name needs an explicit entry.
"""

from __future__ import annotations

import enum

from samsa.errors import ConfigError


class SecurityProtocol(enum.IntEnum):
    """Kafka's ids (``SecurityProtocol.java``), as sent in broker registrations."""

    PLAINTEXT = 0
    SSL = 1
    SASL_PLAINTEXT = 2
    SASL_SSL = 3

    @property
    def uses_tls(self) -> bool:
        return self in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    @property
    def uses_sasl(self) -> bool:
        return self in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)


def parse_protocol(text: str, what: str) -> SecurityProtocol:
    try:
        return SecurityProtocol[text.strip().upper()]
    except KeyError:
        known = ", ".join(p.name for p in SecurityProtocol)
        raise ConfigError(f"{what}: unknown security protocol {text.strip()!r} ({known})") from None


def parse_protocol_map(value: str) -> dict[str, SecurityProtocol]:
    """``NAME:PROTOCOL,...`` -> {NAME: protocol}."""
    mapping: dict[str, SecurityProtocol] = {}
    for entry in (part.strip() for part in value.split(",") if part.strip()):
        name, sep, protocol = entry.partition(":")
        if not sep or not name.strip():
            raise ConfigError(
                f"listener.security.protocol.map: expected NAME:PROTOCOL, got {entry!r}"
            )
        mapping[name.strip().upper()] = parse_protocol(protocol, "listener.security.protocol.map")
    return mapping


def listener_protocol(name: str, mapping: dict[str, SecurityProtocol]) -> SecurityProtocol:
    """The protocol of listener ``name`` (an explicit entry, else its own name)."""
    if name in mapping:
        return mapping[name]
    if name in SecurityProtocol.__members__:
        return SecurityProtocol[name]
    if not mapping:
        # Samsa has always treated every listener name as PLAINTEXT
        # (``CONTROLLER://...`` with no map); keep that when no map is given.
        return SecurityProtocol.PLAINTEXT
    raise ConfigError(
        f"listener.security.protocol.map: no entry for listener {name} "
        f"(add {name}:PLAINTEXT, {name}:SSL, ...)"
    )
