"""OAUTHBEARER on the server (Kafka's OAuthBearerSaslServer).

One client message carries the token.  A refused token is answered with
Kafka's JSON error challenge; the client's lone ``^A`` acknowledgement then
fails the exchange with that JSON as the message.  An authorization id, when
given, must equal the token's principal.  ``token_expiry_ms`` is what limits
the session (KIP-368: a connection must re-authenticate before it).
"""

from __future__ import annotations

from collections.abc import Callable

from samsa.errors import DecodeError
from samsa.protocol.sasl.oauthbearer import KVSEP, MECHANISM, parse_client_message
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.oauth_validation import TokenRefused, TokenValidator


class OAuthBearerServer:
    mechanism = MECHANISM

    def __init__(self, validator: TokenValidator, clock: Callable[[], int]) -> None:
        self._validator = validator
        self._clock = clock
        self._principal = ""
        self.attempted_user = ""
        self._error: TokenRefused | None = None
        self._complete = False
        self.token_expiry_ms: int | None = None

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def authorization_id(self) -> str:
        return self._principal

    def evaluate(self, token: bytes) -> bytes:
        if self._complete:
            raise AuthenticationFailed(
                "Authentication failed: OAUTHBEARER exchange already complete"
            )
        if self._error is not None:
            error, self._error = self._error, None
            if token == KVSEP.encode():
                raise AuthenticationFailed(error.json_error().decode(), str(error))
            raise AuthenticationFailed("Authentication failed: expected the client's ^A")
        try:
            jwt, authzid, _extensions = parse_client_message(token)
        except DecodeError as exc:
            raise AuthenticationFailed(str(exc)) from None
        try:
            validated = self._validator.validate(jwt, self._clock())
        except TokenRefused as refused:
            self._error = refused
            return refused.json_error()
        self.attempted_user = validated.principal
        if authzid and authzid != validated.principal:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is "
                "different from the token's principal name"
            )
        self._principal = validated.principal
        self.token_expiry_ms = validated.expires_ms
        self._complete = True
        return b""
