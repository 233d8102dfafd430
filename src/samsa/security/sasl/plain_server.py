"""PLAIN on the server (Kafka's PlainSaslServer): one token, checked against the JAAS users."""

from __future__ import annotations

import hmac

from samsa.errors import DecodeError
from samsa.protocol.sasl.plain import parse_plain_token
from samsa.security.sasl.mechanism import AuthenticationFailed

INVALID = "Authentication failed: Invalid username or password"


class PlainServer:
    mechanism = "PLAIN"

    def __init__(self, users: dict[str, str]) -> None:
        self._users = users
        self._user = ""
        self.attempted_user = ""
        self._complete = False

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def authorization_id(self) -> str:
        return self._user

    def evaluate(self, token: bytes) -> bytes:
        if self._complete:
            raise AuthenticationFailed("Authentication failed: PLAIN exchange already complete")
        try:
            authzid, username, password = parse_plain_token(token)
        except DecodeError as exc:
            raise AuthenticationFailed(f"Authentication failed: {exc}") from None
        self.attempted_user = username
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        if authzid and authzid != username:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        expected = self._users.get(username)
        # Compare even for unknown users, so timing does not tell which exist.
        if not hmac.compare_digest((expected or "\0").encode(), password.encode()) or (
            expected is None
        ):
            raise AuthenticationFailed(INVALID)
        self._user = username
        self._complete = True
        return b""
