"""A user name and password (or a token) -> the principal, through a listener's SASL.

HTTP surfaces (the web console's login, Basic authentication on ``/metrics``)
take the broker's own users.  So that they accept exactly whom a Kafka
listener accepts, with no second copy of the rules, a credential is checked
by running that listener's server mechanisms in process, the client's side
played here: PLAIN sends one token; for SCRAM the client's messages are
computed from the password against the server's challenge (so the stored
credential is used as on the wire, and the server's signature is checked
too); OAUTHBEARER sends the token.  Sans-I/O and synchronous: a SCRAM check
salts the password (thousands of hash rounds), so callers on an event loop
run it in a thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.sasl.exchange import SaslClientExchange
from samsa.protocol.sasl.oauthbearer import MECHANISM as OAUTHBEARER
from samsa.security.principal import KafkaPrincipal
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.session import MechanismFactory, SaslServerSession, SaslState

MAX_ROUND_TRIPS = 4


class MechanismNotEnabled(ValueError):
    """The mechanism asked for is not one the listener offers."""


@dataclass(frozen=True, slots=True)
class Verified:
    principal: KafkaPrincipal
    mechanism: str
    expires_ms: int | None = None
    """When the credential itself expires (an OAUTHBEARER token's exp), wall ms."""


class CredentialVerifier:
    def __init__(self, mechanisms: Mapping[str, MechanismFactory]) -> None:
        """``mechanisms``: the listener's server mechanisms (``server_mechanisms``)."""
        self._mechanisms = dict(mechanisms)

    @property
    def mechanisms(self) -> list[str]:
        return list(self._mechanisms)

    @property
    def password_mechanisms(self) -> list[str]:
        """The mechanisms a user name and password log in with, in the listener's order."""
        return [m for m in self._mechanisms if m != OAUTHBEARER]

    @property
    def accepts_tokens(self) -> bool:
        return OAUTHBEARER in self._mechanisms

    def verify_password(
        self, username: str, password: str, mechanism: str | None = None
    ) -> Verified:
        """The principal of ``username`` if ``password`` is theirs under
        ``mechanism`` (default: each password mechanism of the listener in turn);
        raises AuthenticationFailed (or MechanismNotEnabled)."""
        if mechanism is not None:
            mechanism = mechanism.strip().upper()
            if mechanism not in self.password_mechanisms:
                raise MechanismNotEnabled(self._not_enabled(mechanism))
            return self._exchange(SaslClientExchange(mechanism, username, password))
        if not self.password_mechanisms:
            raise MechanismNotEnabled("this listener takes no user name and password logins")
        failure = AuthenticationFailed("Authentication failed: Invalid username or password")
        for candidate in self.password_mechanisms:
            try:
                return self._exchange(SaslClientExchange(candidate, username, password))
            except AuthenticationFailed as exc:
                failure = exc
        raise failure

    def verify_token(self, token: str) -> Verified:
        """The principal of an OAUTHBEARER token the listener accepts."""
        if not self.accepts_tokens:
            raise MechanismNotEnabled(self._not_enabled(OAUTHBEARER))
        return self._exchange(SaslClientExchange(OAUTHBEARER, "", "", token=token))

    def _not_enabled(self, mechanism: str) -> str:
        return (
            f"SASL mechanism {mechanism} is not enabled here "
            f"(enabled: {', '.join(self._mechanisms) or 'none'})"
        )

    def _exchange(self, client: SaslClientExchange) -> Verified:
        mechanism = client.mechanism
        session = SaslServerSession(self._mechanisms)
        if session.handshake(mechanism) != ErrorCode.NONE:
            raise MechanismNotEnabled(self._not_enabled(mechanism))
        token: bytes | None = client.first()
        for _ in range(MAX_ROUND_TRIPS):
            assert token is not None
            answer = session.authenticate(token)  # raises AuthenticationFailed
            try:
                token = client.next(answer)
            except DecodeError as exc:
                raise AuthenticationFailed(
                    f"Authentication failed: {mechanism} exchange broke off", str(exc)
                ) from None
            if session.state is SaslState.COMPLETE and token is None:
                assert session.principal is not None
                return Verified(session.principal, mechanism, session.credential_expiry_ms)
            if token is None:
                break
        raise AuthenticationFailed(f"Authentication failed: {mechanism} exchange did not complete")
