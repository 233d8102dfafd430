"""The client's side of SASL PLAIN and SCRAM, as a sequence of tokens.

``first()`` is the token sent with the first SaslAuthenticate; ``next(answer)``
turns each server answer into the next token, or None when the exchange is
complete (having checked the server's SCRAM signature).  Credentials come from
``sasl.jaas.config`` (``username="..." password="..."``), as in Kafka's Java
client.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.errors import ConfigError, DecodeError
from samsa.jaas import parse_jaas
from samsa.protocol.sasl.plain import plain_token
from samsa.protocol.sasl.scram import MECHANISMS as SCRAM_MECHANISMS
from samsa.protocol.sasl.scram import ScramClient

SUPPORTED = ("PLAIN", *SCRAM_MECHANISMS)


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
        return SaslClientExchange(self)


class SaslClientExchange:
    def __init__(self, settings: SaslSettings) -> None:
        self._settings = settings
        self._scram: ScramClient | None = None
        self._step = 0

    def first(self) -> bytes:
        s = self._settings
        self._step = 1
        if s.mechanism == "PLAIN":
            return plain_token(s.username, s.password)
        self._scram = ScramClient(s.mechanism, s.username, s.password)
        return self._scram.first_message()

    def next(self, answer: bytes) -> bytes | None:
        """The next token, or None when done; DecodeError if the server is not
        who it claims (a wrong SCRAM signature)."""
        if self._scram is None:
            return None
        self._step += 1
        if self._step == 2:
            return self._scram.final_message(answer)
        if self._step == 3:
            self._scram.check_server_final(answer)
            return None
        raise DecodeError("SASL exchange went on after it ended")
