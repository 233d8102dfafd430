"""The client's SASL settings: mechanism and credentials.

Credentials come from ``sasl.jaas.config`` (``username="..." password="..."``),
as in Kafka's Java client; the token exchange itself is
``samsa.protocol.sasl.exchange``.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.errors import ConfigError
from samsa.jaas import parse_jaas
from samsa.protocol.sasl.exchange import SUPPORTED, SaslClientExchange

__all__ = ["SaslClientExchange", "SaslSettings"]


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str
    username: str
    password: str

    @classmethod
    def from_config(cls, mechanism: str, jaas_config: str) -> SaslSettings:
        mechanism = mechanism.strip().upper()
        if mechanism not in SUPPORTED:
            raise ConfigError(
                f"sasl.mechanism: {mechanism} is not supported (use {', '.join(SUPPORTED)})"
            )
        if not jaas_config:
            raise ConfigError('sasl.jaas.config: needs username="..." password="..."')
        jaas = parse_jaas(jaas_config)
        if not jaas.username:
            raise ConfigError("sasl.jaas.config: username is missing")
        return cls(mechanism, jaas.username, jaas.password)

    def exchange(self) -> SaslClientExchange:
        return SaslClientExchange(self.mechanism, self.username, self.password)
