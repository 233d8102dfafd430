"""Logging in to a page-serving endpoint (the console): a session cookie.

``POST /api/login`` takes ``{"username", "password", "mechanism"?}`` (or
``{"token"}`` where OAUTHBEARER is on) as JSON and answers the principal with
a session cookie; ``POST /api/logout`` ends the session; ``GET /api/whoami``
says who is logged in; ``GET /api/login`` says which mechanisms are offered
(the login form asks).  Every other route but the public ones (the pages and
their files) answers 401 without a live session.  ``SessionLogin`` is the
endpoint's ``Gate``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from samsa.http.credentials import PasswordCheck
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.http.routes import Handler
from samsa.http.sessions import SessionStore, cleared_cookie, session_cookie
from samsa.security.principal import KafkaPrincipal
from samsa.security.sasl.verifier import Verified

COOKIE = "samsa_session"
LOGIN, LOGOUT, WHOAMI = "/api/login", "/api/logout", "/api/whoami"


class SessionLogin:
    def __init__(
        self,
        check: PasswordCheck,
        sessions: SessionStore,
        *,
        secure: bool,
        public: Iterable[str] = (),
        cookie: str = COOKIE,
    ) -> None:
        """``public``: paths served without a login (``/x/*`` for a prefix);
        ``secure``: the endpoint is TLS, so the cookie is ``Secure``."""
        self.check = check
        self.sessions = sessions
        self.secure = secure
        self.cookie = cookie
        paths = {*public, LOGIN, LOGOUT}
        self._exact = frozenset(p for p in paths if not p.endswith("/*"))
        self._prefixes = tuple(p[:-1] for p in paths if p.endswith("/*"))

    # ------------------------------------------------------------------ Gate
    def is_public(self, request: Request) -> bool:
        return request.path in self._exact or request.path.startswith(self._prefixes)

    async def admit(self, request: Request) -> KafkaPrincipal:
        session = self.sessions.find(request.cookie(self.cookie))
        if session is None:
            raise HttpError(
                401, "log in first (POST /api/login), or log in again: the session ended"
            )
        return session.principal

    # ------------------------------------------------------------------ routes
    def routes(self) -> tuple[dict[str, Handler], dict[str, Handler]]:
        """(GET routes, POST routes) of the login API."""
        return {LOGIN: self.offered, WHOAMI: self.whoami}, {LOGIN: self.login, LOGOUT: self.logout}

    def offered(self, _: Request) -> Response:
        verifier = self.check.verifier
        return json_response(
            {
                "login": True,
                "mechanisms": verifier.password_mechanisms,
                "token": verifier.accepts_tokens,
            }
        )

    def whoami(self, request: Request) -> Response:
        session = self.sessions.find(request.cookie(self.cookie))
        if session is None:
            raise HttpError(401, "not logged in")
        return json_response(
            {
                "principal": str(session.principal),
                "mechanism": session.mechanism,
                "expires_in_s": round(self.sessions.seconds_left(session)),
            }
        )

    async def login(self, request: Request) -> Response:
        body = _json_body(request)
        token = body.get("token")
        if token is not None:
            if not isinstance(token, str) or not token:
                raise HttpError(400, "token must be a non-empty string")
            verified = await self.check.token(request.client, token)
        else:
            username, password = body.get("username"), body.get("password")
            mechanism = body.get("mechanism") or None
            if not isinstance(username, str) or not username:
                raise HttpError(400, "username is required")
            if not isinstance(password, str) or not password:
                raise HttpError(400, "password is required")
            if mechanism is not None and not isinstance(mechanism, str):
                raise HttpError(400, "mechanism must be a string")
            verified = await self.check.password(request.client, username, password, mechanism)
        return self._start(request, verified)

    def _start(self, request: Request, verified: Verified) -> Response:
        ends_in_s = None
        if verified.expires_ms is not None:
            ends_in_s = verified.expires_ms / 1000 - time.time()
        token, session = self.sessions.open(
            verified.principal, verified.mechanism, ends_in_s=ends_in_s
        )
        left = self.sessions.seconds_left(session)
        cookie = session_cookie(self.cookie, token, left, secure=self.secure)
        answer = {
            "principal": str(verified.principal),
            "mechanism": verified.mechanism,
            "expires_in_s": round(left),
        }
        return json_response(answer, headers={"Set-Cookie": cookie})

    def logout(self, request: Request) -> Response:
        closed = self.sessions.close(request.cookie(self.cookie))
        cookie = cleared_cookie(self.cookie, secure=self.secure)
        return json_response({"logged_out": closed}, headers={"Set-Cookie": cookie})


def _json_body(request: Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise HttpError(415, "this takes a JSON body (Content-Type: application/json)")
    try:
        body = json.loads(request.body or b"{}")
    except ValueError as exc:
        raise HttpError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    return body
