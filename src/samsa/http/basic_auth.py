"""HTTP Basic authentication against the broker's users (``/metrics``).

A scraper sends ``Authorization: Basic base64(user:password)`` with every
request; it is checked like a console login (``PasswordCheck``: the login
listener's SASL mechanisms, back-off, delayed failures).  A check that
succeeded is remembered for ``remember_s`` (by a keyed hash of the header, never
the password itself), so a scrape every few seconds does not salt a SCRAM
password each time.  ``authorize`` may then refuse the principal (403 naming
what it lacks: DESCRIBE on the cluster when an authorizer is on).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

from samsa.http.credentials import PasswordCheck
from samsa.http.messages import HttpError, Request
from samsa.security.principal import KafkaPrincipal

REMEMBERED = 1000
"""Successful checks remembered at most."""

Authorize = Callable[[KafkaPrincipal, str], str | None]
"""(principal, client host) -> what the principal lacks, or None when allowed."""


class BasicAuthGate:
    def __init__(
        self,
        check: PasswordCheck,
        *,
        realm: str,
        authorize: Authorize | None = None,
        remember_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.check = check
        self.realm = realm
        self.authorize = authorize
        self.remember_s = remember_s
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._remembered: dict[bytes, tuple[KafkaPrincipal, float]] = {}

    def is_public(self, request: Request) -> bool:
        return False

    async def admit(self, request: Request) -> KafkaPrincipal:
        header = request.headers.get("authorization", "")
        principal = self._recall(header)
        if principal is None:
            username, password = self._credentials(header)
            verified = await self.check.password(request.client, username, password)
            principal = verified.principal
            self._remember(header, principal)
        if self.authorize is not None:
            lacking = self.authorize(principal, request.client_host)
            if lacking is not None:
                raise HttpError(403, f"not authorized: {principal} needs {lacking}")
        return principal

    def _challenge(self, message: str) -> HttpError:
        challenge = f'Basic realm="{self.realm}", charset="UTF-8"'
        return HttpError(401, message, {"WWW-Authenticate": challenge})

    def _credentials(self, header: str) -> tuple[str, str]:
        scheme, _, encoded = header.partition(" ")
        if not header:
            raise self._challenge("authentication required (HTTP Basic, a broker user)")
        if scheme.lower() != "basic":
            raise self._challenge(f"only Basic authentication is taken here, not {scheme!r}")
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise self._challenge("malformed Basic credentials") from None
        username, sep, password = decoded.partition(":")
        if not sep or not username or not password:
            raise self._challenge("Basic credentials need a user name and a password")
        return username, password

    def _fingerprint(self, header: str) -> bytes:
        return hmac.new(self._key, header.encode("utf-8", "replace"), hashlib.sha256).digest()

    def _recall(self, header: str) -> KafkaPrincipal | None:
        if not header:
            return None
        key = self._fingerprint(header)
        found = self._remembered.get(key)
        if found is None:
            return None
        if found[1] <= self._clock():
            del self._remembered[key]
            return None
        return found[0]

    def _remember(self, header: str, principal: KafkaPrincipal) -> None:
        now = self._clock()
        if len(self._remembered) >= REMEMBERED:
            for key in [k for k, (_, until) in self._remembered.items() if until <= now]:
                del self._remembered[key]
            if len(self._remembered) >= REMEMBERED:
                self._remembered.clear()
        self._remembered[self._fingerprint(header)] = (principal, now + self.remember_s)
