"""SASL before anything else on a SASL listener (Kafka's SaslServerAuthenticator).

Until a connection has authenticated, only ApiVersions, SaslHandshake and then
SaslAuthenticate are answered; any other request closes the connection, as
Kafka does.  A SaslHandshake v0 client sends raw tokens next (each one a bare
size-prefixed frame); v1 clients wrap them in SaslAuthenticate (KIP-152).
A failed login is answered with Kafka's error after
``connection.failed.authentication.delay.ms``, then the connection closes;
each failure is logged once with the peer's address.  The mechanisms
themselves are sans-I/O state machines from ``samsa.security``.

Re-authentication (KIP-368): with ``connections.max.reauth.ms`` set, or a
credential that expires (an OAUTHBEARER token, a delegation token), the final
SaslAuthenticate (v1+) tells the client its ``session_lifetime_ms``: the
shorter of the two, as Kafka's ``SaslServerAuthenticator`` computes it.  A client that authenticated with
v1+ may send SaslHandshake and SaslAuthenticate again on the live connection;
the requests around them are served as usual, and the principal and mechanism
must stay the same.  Any other request arriving after the session expired
closes the connection, as Kafka does.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.api import API_VERSIONS_KEY, decode_request, encode_response, peek_header
from samsa.protocol.messages import APIS
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.session import MechanismFactory, SaslServerSession, SaslState
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.connections.socket_server import CloseConnection, Connection, Dispatch

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
_SIZE = struct.Struct(">i")

log = logging.getLogger("samsa.server")


@dataclass
class _Exchange:
    session: SaslServerSession
    raw_tokens: bool = False
    authenticate_version: int = 0
    expires_at: float | None = None
    """time.monotonic() when the authenticated session ends (KIP-368), if it does."""
    reauthenticating: bool = False
    mechanism: str = ""
    """The mechanism the connection authenticated with (a re-login must keep it)."""


class SaslGate:
    """Wraps a listener's dispatch so unauthenticated connections only log in."""

    def __init__(
        self,
        inner: Dispatch,
        mechanisms: Mapping[str, MechanismFactory],
        *,
        failed_delay_ms: int,
        max_reauth_ms: int = 0,
    ) -> None:
        self._inner = inner
        self._mechanisms = mechanisms
        self.failed_delay_ms = failed_delay_ms
        self.max_reauth_ms = max_reauth_ms

    def dispatch(self, frame: bytes | bytearray, conn: Connection) -> Any:
        exchange: _Exchange | None = conn.sasl
        if conn.authenticated:
            if exchange is None or len(frame) < 2:
                return self._inner(frame, conn)
            api_key = (frame[0] << 8) | frame[1]
            if api_key == SASL_HANDSHAKE_KEY and exchange.authenticate_version >= 1:
                if not exchange.reauthenticating:
                    exchange.session = SaslServerSession(self._mechanisms)
                    exchange.reauthenticating = True
            elif not (api_key == SASL_AUTHENTICATE_KEY and exchange.reauthenticating):
                if exchange.expires_at is not None and time.monotonic() >= exchange.expires_at:
                    raise CloseConnection(
                        f"the SASL session of {conn.principal} expired without "
                        "re-authentication (connections.max.reauth.ms or the credential's expiry)"
                    )
                return self._inner(frame, conn)
        if exchange is None:
            exchange = conn.sasl = _Exchange(SaslServerSession(self._mechanisms))
        if exchange.raw_tokens:
            return self._raw_token(exchange, bytes(frame), conn)
        try:
            api_key, version, correlation_id = peek_header(memoryview(frame))
        except DecodeError as exc:
            raise CloseConnection(f"malformed request during SASL authentication: {exc}") from None
        state = exchange.session.state
        if api_key == API_VERSIONS_KEY and state is SaslState.HANDSHAKE:
            return self._inner(frame, conn)
        if api_key == SASL_HANDSHAKE_KEY and state is SaslState.HANDSHAKE:
            body = self._decode(frame)
            return self._handshake(exchange, body["mechanism"], version, correlation_id, conn)
        if api_key == SASL_AUTHENTICATE_KEY and state is SaslState.AUTHENTICATE:
            body = self._decode(frame)
            return self._authenticate(
                exchange, bytes(body["auth_bytes"]), version, correlation_id, conn
            )
        name = APIS[api_key].name if api_key in APIS else f"api key {api_key}"
        raise CloseConnection(
            f"unexpected {name} request during SASL authentication ({state.value} stage); "
            "the client must authenticate first"
        )

    @staticmethod
    def _decode(frame: bytes | bytearray) -> dict[str, Any]:
        try:
            return decode_request(memoryview(frame))[1]
        except DecodeError as exc:
            raise CloseConnection(f"malformed SASL request: {exc}") from None

    def _handshake(
        self,
        exchange: _Exchange,
        mechanism: str,
        version: int,
        correlation_id: int,
        conn: Connection,
    ) -> Any:
        error = exchange.session.handshake(mechanism)
        if (
            exchange.reauthenticating
            and error == ErrorCode.NONE
            and mechanism != exchange.mechanism
        ):
            error = ErrorCode.ILLEGAL_SASL_STATE
        body = {"error_code": error, "mechanisms": exchange.session.enabled}
        response = encode_response(SASL_HANDSHAKE_KEY, version, correlation_id, body)
        if error:
            why = (
                f"re-authentication with {mechanism} instead of {exchange.mechanism}"
                if error == ErrorCode.ILLEGAL_SASL_STATE
                else f"unsupported SASL mechanism {mechanism!r}"
            )
            return self._fail(conn, response, why)
        exchange.raw_tokens = version == 0
        return response

    def _authenticate(
        self, exchange: _Exchange, token: bytes, version: int, correlation_id: int, conn: Connection
    ) -> Any:
        session = exchange.session
        try:
            answer = session.authenticate(token)
        except AuthenticationFailed as exc:
            body = {
                "error_code": ErrorCode.SASL_AUTHENTICATION_FAILED,
                "error_message": str(exc),
                "auth_bytes": b"",
            }
            response = encode_response(SASL_AUTHENTICATE_KEY, version, correlation_id, body)
            return self._fail(conn, response, _failure(session, exc))
        exchange.authenticate_version = version
        lifetime_ms = 0
        if session.state is SaslState.COMPLETE:
            refused = self._complete(exchange, conn)
            if refused:
                body = {
                    "error_code": ErrorCode.SASL_AUTHENTICATION_FAILED,
                    "error_message": refused,
                    "auth_bytes": b"",
                }
                response = encode_response(SASL_AUTHENTICATE_KEY, version, correlation_id, body)
                return self._fail(conn, response, refused)
            lifetime_ms = self._start_session(exchange)
        body = {
            "error_code": 0,
            "error_message": None,
            "auth_bytes": answer,
            "session_lifetime_ms": lifetime_ms,
        }
        return encode_response(SASL_AUTHENTICATE_KEY, version, correlation_id, body)

    def _raw_token(self, exchange: _Exchange, token: bytes, conn: Connection) -> Any:
        session = exchange.session
        try:
            answer = session.authenticate(token)
        except AuthenticationFailed as exc:
            return self._fail(conn, None, _failure(session, exc))
        if session.state is SaslState.COMPLETE:
            self._complete(exchange, conn)
            self._start_session(exchange)
        return [_SIZE.pack(len(answer)), answer]

    @staticmethod
    def _complete(exchange: _Exchange, conn: Connection) -> str:
        """Log the connection in; a refusal reason if a re-login changed the principal."""
        session = exchange.session
        assert session.principal is not None
        if exchange.reauthenticating:
            exchange.reauthenticating = False
            if session.principal != conn.principal:
                return (
                    "Cannot change principals during re-authentication from "
                    f"{conn.principal}: {session.principal}"
                )
            log.debug("%s re-authenticated as %s", conn.peer, session.principal)
            return ""
        conn.authenticated_as(session.principal)
        exchange.mechanism = session.mechanism
        log.debug("%s authenticated as %s with %s", conn.peer, session.principal, session.mechanism)
        return ""

    def _start_session(self, exchange: _Exchange) -> int:
        """The session lifetime to tell the client (0: none), as Kafka computes it:
        connections.max.reauth.ms, or less when the credential (an OAUTHBEARER
        token, a delegation token) expires sooner; the credential's expiry alone
        when connections.max.reauth.ms is not set (so a token's session ends by
        the token's expiry unless the client logs in again)."""
        exchange.expires_at = None
        credential_expiry_ms = exchange.session.credential_expiry_ms
        if self.max_reauth_ms <= 0 and credential_expiry_ms is None:
            return 0
        lifetime_ms = self.max_reauth_ms if self.max_reauth_ms > 0 else None
        if credential_expiry_ms is not None:
            left_ms = credential_expiry_ms - time.time_ns() // 1_000_000
            lifetime_ms = left_ms if lifetime_ms is None else min(lifetime_ms, left_ms)
        if lifetime_ms is None or lifetime_ms <= 0:
            return 0
        exchange.expires_at = time.monotonic() + lifetime_ms / 1000
        return lifetime_ms

    async def _fail(self, conn: Connection, response: list[Any] | None, reason: str) -> None:
        """Kafka's delayed close: the answer (if any) after the delay, then hang up."""
        await asyncio.sleep(self.failed_delay_ms / 1000)
        if response is not None:
            conn.write(response)
        conn.close(reason)


def _failure(session: SaslServerSession, exc: AuthenticationFailed) -> str:
    user = f" (user {session.attempted_user!r})" if session.attempted_user else ""
    detail = f": {exc.detail}" if exc.detail else ""
    return f"{session.mechanism or 'SASL'} authentication failed{user}: {exc}{detail}"


def register_after_login(router: Router) -> None:
    """A SASL listener's ApiVersions lists both SASL APIs; once a connection
    is authenticated they answer ILLEGAL_SASL_STATE, as Kafka's KafkaApis does."""

    def handshake(ctx: RequestContext, body: Body) -> Body:
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}

    def authenticate(ctx: RequestContext, body: Body) -> Body:
        return {
            "error_code": ErrorCode.ILLEGAL_SASL_STATE,
            "error_message": "SaslAuthenticate request received after successful authentication",
            "auth_bytes": b"",
            "session_lifetime_ms": 0,
        }

    router.register(SASL_HANDSHAKE_KEY, handshake)
    router.register(SASL_AUTHENTICATE_KEY, authenticate)
