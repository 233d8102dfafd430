"""The client's SASL settings: mechanism and credentials.

Credentials come from ``sasl.jaas.config`` (``username="..." password="..."``),
as in Kafka's Java client; with SCRAM, ``tokenauth="true"`` logs in by
delegation token (the token id as username, its HMAC as password), as
Kafka's ``ScramLoginModule`` does.  OAUTHBEARER takes its token from
``sasl.oauthbearer.token.provider`` (a callable returning a JWS, fetched anew
for every login) or builds an unsecured one from the JAAS line's
``unsecuredLoginStringClaim_sub="..."`` options, as Kafka's default login
handler does.  The token exchange itself is ``samsa.protocol.sasl.exchange``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from samsa.config.jaas import parse_jaas
from samsa.errors import ConfigError
from samsa.protocol.sasl.exchange import SUPPORTED, SaslClientExchange
from samsa.protocol.sasl.oauthbearer import MECHANISM as OAUTHBEARER
from samsa.protocol.sasl.oauthbearer import unsecured_login_token
from samsa.protocol.sasl.scram import MECHANISMS as SCRAM_MECHANISMS
from samsa.protocol.sasl.scram import TOKEN_AUTH

__all__ = ["SaslClientExchange", "SaslSettings"]


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str
    username: str
    password: str
    token_provider: Callable[[], str] | None = None
    token_auth: bool = False
    """SCRAM by delegation token (the JAAS line's ``tokenauth="true"``)."""

    @classmethod
    def from_config(
        cls, mechanism: str, jaas_config: str, token_provider: Callable[[], str] | None = None
    ) -> SaslSettings:
        mechanism = mechanism.strip().upper()
        if mechanism not in SUPPORTED:
            raise ConfigError(
                f"sasl.mechanism: {mechanism} is not supported (use {', '.join(SUPPORTED)})"
            )
        if mechanism == OAUTHBEARER:
            return cls._oauthbearer(jaas_config, token_provider)
        if not jaas_config:
            raise ConfigError('sasl.jaas.config: needs username="..." password="..."')
        jaas = parse_jaas(jaas_config)
        if not jaas.username:
            raise ConfigError("sasl.jaas.config: username is missing")
        token_auth = jaas.options.get(TOKEN_AUTH, "").lower() == "true"
        return cls(mechanism, jaas.username, jaas.password, token_auth=token_auth)

    @classmethod
    def _oauthbearer(
        cls, jaas_config: str, token_provider: Callable[[], str] | None
    ) -> SaslSettings:
        if token_provider is None:
            if not jaas_config:
                raise ConfigError(
                    "sasl.jaas.config: OAUTHBEARER needs sasl.oauthbearer.token.provider or "
                    'OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="...";'
                )
            options = parse_jaas(jaas_config).options
            try:
                unsecured_login_token(options, 0)
            except ValueError as exc:
                raise ConfigError(f"sasl.jaas.config: {exc}") from None
            token_provider = lambda: unsecured_login_token(options, time.time_ns() // 1_000_000)  # noqa: E731
        return cls(OAUTHBEARER, "", "", token_provider)

    def exchange(self) -> SaslClientExchange:
        token = self.token_provider() if self.token_provider is not None else ""
        extensions = (
            {TOKEN_AUTH: "true"} if self.token_auth and self.mechanism in SCRAM_MECHANISMS else None
        )
        return SaslClientExchange(
            self.mechanism, self.username, self.password, token=token, scram_extensions=extensions
        )
