"""The client's ``security.protocol`` and what it needs: an SSL context, SASL credentials."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from samsa.client.network.sasl_client import SaslSettings
from samsa.config.ssl import client_context
from samsa.errors import ConfigError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class ClientSecurity:
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslSettings | None = None

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> ClientSecurity:
        protocol = str(cfg.get("security.protocol") or "PLAINTEXT").upper()
        if protocol not in PROTOCOLS:
            raise ConfigError(f"security.protocol: expected one of {', '.join(PROTOCOLS)}")
        context = None
        if protocol.endswith("SSL"):
            context = client_context(lambda key: str(cfg.get(key) or ""))
        sasl = None
        if protocol.startswith("SASL"):
            sasl = SaslSettings.from_config(
                str(cfg.get("sasl.mechanism") or ""),
                str(cfg.get("sasl.jaas.config") or ""),
                cfg.get("sasl.oauthbearer.token.provider"),
            )
        return cls(context, sasl)
