"""Login sessions: a random token in an HttpOnly, SameSite=Strict cookie.

A session is made by a successful login and lasts a fixed time (or until the
credential it came from expires, for an OAUTHBEARER token); logging out ends
it at once.  The store keeps only a hash of each token, so what it holds in
memory cannot be replayed.  The cookie is ``Secure`` on a TLS endpoint, never
readable by scripts (``HttpOnly``) and never sent with a request another site
starts (``SameSite=Strict``).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from samsa.security.principal import KafkaPrincipal

MAX_SESSIONS = 10_000
"""Sessions kept at most; past it the one expiring soonest goes (bounded memory)."""


@dataclass(frozen=True, slots=True)
class Session:
    principal: KafkaPrincipal
    mechanism: str
    expires_at: float
    """On the store's clock (monotonic seconds)."""


def _key(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class SessionStore:
    def __init__(
        self,
        lifetime_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        limit: int = MAX_SESSIONS,
    ) -> None:
        self.lifetime_s = lifetime_s
        self._clock = clock
        self._limit = limit
        self._sessions: dict[bytes, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def open(
        self, principal: KafkaPrincipal, mechanism: str, *, ends_in_s: float | None = None
    ) -> tuple[str, Session]:
        """A new session and its token; ``ends_in_s`` caps its life (a token's expiry)."""
        now = self._clock()
        self._drop_expired(now)
        while len(self._sessions) >= self._limit:
            soonest = min(self._sessions, key=lambda k: self._sessions[k].expires_at)
            del self._sessions[soonest]
        life = self.lifetime_s if ends_in_s is None else min(self.lifetime_s, ends_in_s)
        token = secrets.token_urlsafe(32)
        session = Session(principal, mechanism, now + max(life, 0.0))
        self._sessions[_key(token)] = session
        return token, session

    def find(self, token: str | None) -> Session | None:
        """The live session of ``token``; an expired one is forgotten."""
        if not token:
            return None
        key = _key(token)
        session = self._sessions.get(key)
        if session is None:
            return None
        if session.expires_at <= self._clock():
            del self._sessions[key]
            return None
        return session

    def close(self, token: str | None) -> bool:
        """End the session of ``token`` (logout); False if there was none."""
        return bool(token) and self._sessions.pop(_key(token or ""), None) is not None

    def seconds_left(self, session: Session) -> float:
        return max(session.expires_at - self._clock(), 0.0)

    def _drop_expired(self, now: float) -> None:
        expired = [k for k, s in self._sessions.items() if s.expires_at <= now]
        for key in expired:
            del self._sessions[key]


def session_cookie(name: str, token: str, max_age_s: float, *, secure: bool) -> str:
    """A ``Set-Cookie`` value for the session."""
    flags = "; Secure" if secure else ""
    return f"{name}={token}; Path=/; Max-Age={round(max_age_s)}; HttpOnly; SameSite=Strict{flags}"


def cleared_cookie(name: str, *, secure: bool) -> str:
    """A ``Set-Cookie`` value that deletes the session cookie (logout)."""
    return session_cookie(name, "", 0, secure=secure)
