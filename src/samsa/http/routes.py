"""Which handler answers a request: exact paths first, then path prefixes.

GET routes also answer HEAD; only POST routes take POST, and a POST to a path
that only GET serves is 405 with ``Allow``.  A ``Gate`` (the endpoint's login
check) admits each request to a route that is not public, or refuses it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from samsa.http.messages import Request, Response
from samsa.security.principal import KafkaPrincipal

Handler = Callable[[Request], Response | Awaitable[Response]]


class Gate(Protocol):
    """Who may use an endpoint: a login check."""

    def is_public(self, request: Request) -> bool:
        """Served without a login (a login page and its files)."""
        ...

    async def admit(self, request: Request) -> KafkaPrincipal:
        """The principal the request is made by; raises HttpError (401 when it
        carries no valid credentials, 429 while its address backs off)."""
        ...


class Routes:
    def __init__(self, get: dict[str, Handler], post: dict[str, Handler] | None = None) -> None:
        self._tables = {"GET": _table(get), "POST": _table(post or {})}

    def find(self, method: str, path: str) -> Handler | None:
        exact, prefixes = self._tables["POST" if method == "POST" else "GET"]
        handler = exact.get(path)
        if handler is None:
            for prefix, candidate in prefixes:
                if path.startswith(prefix):
                    return candidate
        return handler


def _table(routes: dict[str, Handler]) -> tuple[dict[str, Handler], list[tuple[str, Handler]]]:
    """Exact paths, and path prefixes (``/x/*``) longest first."""
    exact = {p: h for p, h in routes.items() if not p.endswith("/*")}
    prefixes = sorted(
        ((p[:-1], h) for p, h in routes.items() if p.endswith("/*")), key=lambda item: -len(item[0])
    )
    return exact, prefixes
