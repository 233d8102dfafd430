"""One connection's SASL exchange (Kafka's SaslServerAuthenticator, without I/O).

States: HANDSHAKE (only ApiVersions and SaslHandshake are allowed), then
AUTHENTICATE (tokens go to the chosen mechanism), then COMPLETE (the
connection carries a principal) or FAILED (the connection must close).
The server decodes frames and calls ``handshake``/``authenticate``; the
session never sees a socket.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping

from samsa.errors import ErrorCode
from samsa.security.principal import KafkaPrincipal, user
from samsa.security.sasl.mechanism import AuthenticationFailed, SaslServer

MechanismFactory = Callable[[], SaslServer]


class SaslState(enum.Enum):
    HANDSHAKE = "handshake"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    FAILED = "failed"


class SaslServerSession:
    def __init__(self, mechanisms: Mapping[str, MechanismFactory]) -> None:
        self._mechanisms = mechanisms
        self.state = SaslState.HANDSHAKE
        self._server: SaslServer | None = None
        self.principal: KafkaPrincipal | None = None

    @property
    def enabled(self) -> list[str]:
        return list(self._mechanisms)

    @property
    def attempted_user(self) -> str:
        return self._server.attempted_user if self._server is not None else ""

    @property
    def mechanism(self) -> str:
        return self._server.mechanism if self._server is not None else ""

    @property
    def credential_expiry_ms(self) -> int | None:
        """When the credential itself expires (an OAUTHBEARER token's exp), in wall ms."""
        return getattr(self._server, "token_expiry_ms", None)

    def handshake(self, mechanism: str) -> ErrorCode:
        """NONE and the session expects tokens, or the error to answer with."""
        if self.state is not SaslState.HANDSHAKE:
            return ErrorCode.ILLEGAL_SASL_STATE
        factory = self._mechanisms.get(mechanism)
        if factory is None:
            self.state = SaslState.FAILED
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM
        self._server = factory()
        self.state = SaslState.AUTHENTICATE
        return ErrorCode.NONE

    def authenticate(self, token: bytes) -> bytes:
        """The mechanism's answer to ``token``; raises AuthenticationFailed."""
        if self.state is not SaslState.AUTHENTICATE or self._server is None:
            self.state = SaslState.FAILED
            raise AuthenticationFailed("Authentication failed: unexpected SASL token")
        try:
            answer = self._server.evaluate(token)
        except AuthenticationFailed:
            self.state = SaslState.FAILED
            raise
        if self._server.complete:
            self.state = SaslState.COMPLETE
            name = self._server.authorization_id
            if getattr(self._server, "token_authenticated", False):
                self.principal = KafkaPrincipal("User", name, token_authenticated=True)
            else:
                self.principal = user(name)
        return answer
