"""What every server-side SASL mechanism is: tokens in, tokens out, then a name."""

from __future__ import annotations

from typing import Protocol


class AuthenticationFailed(Exception):
    """The client's credentials are wrong or its token is malformed.

    The message is what the client is told (Kafka's wording), so it never
    says which of user name and password was wrong; ``detail`` is for the
    broker's own log.
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class SaslServer(Protocol):
    mechanism: str

    @property
    def complete(self) -> bool: ...

    @property
    def authorization_id(self) -> str:
        """The authenticated user name (valid once complete)."""
        ...

    @property
    def attempted_user(self) -> str:
        """The user name the client gave, for the log (even when refused)."""
        ...

    def evaluate(self, token: bytes) -> bytes:
        """The challenge to send back; raises AuthenticationFailed."""
        ...
