"""Checking a login over HTTP: the listener's SASL mechanisms, slowed like SASL.

``PasswordCheck`` wraps a ``CredentialVerifier`` (the broker's own SASL
mechanisms, in process) with what HTTP needs around it: the per-address
back-off (429 while it lasts), the delay a failed answer waits
(``connection.failed.authentication.delay.ms``, as a SASL listener waits
before it answers a failed login), a log line per attempt naming the user and
the client's address, and the check itself off the event loop, a few at a
time (a SCRAM check salts the password with thousands of hash rounds).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable

from samsa.http.backoff import LoginBackoff
from samsa.http.messages import HttpError
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.verifier import CredentialVerifier, MechanismNotEnabled, Verified

log = logging.getLogger("samsa.http")

CONCURRENT_CHECKS = 2
"""Checks running at once per endpoint: logins from many addresses queue
instead of taking every worker thread the broker's disk work needs."""


class PasswordCheck:
    def __init__(
        self,
        verifier: CredentialVerifier,
        *,
        failed_delay_ms: int,
        what: str,
        backoff: LoginBackoff | None = None,
    ) -> None:
        """``what`` names the surface in log lines ("console login")."""
        self.verifier = verifier
        self.failed_delay_s = failed_delay_ms / 1000
        self.what = what
        self.backoff = backoff if backoff is not None else LoginBackoff()
        self._slots = asyncio.Semaphore(CONCURRENT_CHECKS)

    async def password(
        self, client: tuple[str, int], username: str, password: str, mechanism: str | None = None
    ) -> Verified:
        """The principal; HttpError 401 (after the delay), 429 or 400 otherwise."""
        return await self._check(
            client,
            username or "?",
            lambda: self.verifier.verify_password(username, password, mechanism),
        )

    async def token(self, client: tuple[str, int], token: str) -> Verified:
        return await self._check(client, "(token)", lambda: self.verifier.verify_token(token))

    async def _check(
        self, client: tuple[str, int], user: str, verify: Callable[[], Verified]
    ) -> Verified:
        host, port = client
        wait = self.backoff.begin(host)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise HttpError(
                429,
                f"too many failed logins from {host}: try again in {seconds} s",
                {"Retry-After": str(seconds)},
            )
        try:
            async with self._slots:
                verified = await asyncio.to_thread(verify)
        except MechanismNotEnabled as exc:
            self.backoff.end(host, succeeded=False)
            raise HttpError(400, str(exc)) from None
        except AuthenticationFailed as exc:
            backoff = self.backoff.end(host, succeeded=False)
            detail = f" ({exc.detail})" if exc.detail else ""
            log.warning(
                "%s failed for user %r from %s:%d: %s%s; its next attempt waits %.0f s",
                self.what,
                user,
                host,
                port,
                exc,
                detail,
                backoff,
            )
            await asyncio.sleep(self.failed_delay_s)
            raise HttpError(401, f"login failed: {exc}") from None
        except BaseException:
            self.backoff.end(host, succeeded=False)
            raise
        self.backoff.end(host, succeeded=True)
        log.info(
            "%s: %s (%s) from %s:%d", self.what, verified.principal, verified.mechanism, host, port
        )
        return verified
