"""SASL login on each connection, and re-login before the session ends (KIP-368).

Kafka's SaslClientAuthenticator, for the NetworkClient's thread: after
ApiVersions, SaslHandshake v1 then SaslAuthenticate until the mechanism is
done.  When the broker's last SaslAuthenticate gives a ``session_lifetime_ms``,
the login is repeated on the same connection at 85-95% of it (a random point,
as Kafka's clients pick, so many connections do not log in at once).  While a
re-login runs the connection takes no new requests (a Kafka broker reads
nothing else until it is done); requests already in flight complete as usual.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from samsa.client.network.in_flight import ClientRequest, ClientResponse
from samsa.client.network.sasl_client import SaslClientExchange, SaslSettings
from samsa.errors import DecodeError

log = logging.getLogger(__name__)

SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36

Send = Callable[[ClientRequest, int, int], None]
"""(request, api version, now_ms): write a request on its node's connection."""


class SaslLogin:
    def __init__(
        self,
        settings: SaslSettings,
        send: Send,
        ready: Callable[[int, dict[int, int]], None],
        failed: Callable[[int, int, str], None],
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self._send = send
        self._ready = ready
        self._failed = failed
        self._rng = rng or random.Random()
        self._versions: dict[int, dict[int, int]] = {}
        self._due_ms: dict[int, int] = {}
        self.relogging: set[int] = set()
        """Nodes re-authenticating now: they take no new requests."""

    def start(self, node_id: int, versions: dict[int, int], now_ms: int) -> None:
        """Log in on a connection whose ApiVersions just completed."""
        if SASL_HANDSHAKE not in versions or SASL_AUTHENTICATE not in versions:
            self._failed(node_id, now_ms, "the broker does not offer SASL on this listener")
            return
        self._versions[node_id] = versions
        self._handshake(node_id, now_ms)

    def forget(self, node_id: int) -> None:
        """The connection is gone."""
        self._versions.pop(node_id, None)
        self._due_ms.pop(node_id, None)
        self.relogging.discard(node_id)

    def wait_ms(self, now_ms: int) -> int | None:
        """How long until the next re-login is due (None: none planned)."""
        if not self._due_ms:
            return None
        return max(0, min(self._due_ms.values()) - now_ms)

    def relogin_due(self, now_ms: int, idle: Callable[[int], bool]) -> None:
        """Start the re-logins that are due on connections with nothing unsent."""
        for node_id, due_ms in list(self._due_ms.items()):
            if due_ms <= now_ms and idle(node_id):
                del self._due_ms[node_id]
                self.relogging.add(node_id)
                log.debug("re-authenticating with node %d", node_id)
                self._handshake(node_id, now_ms)

    def _handshake(self, node_id: int, now_ms: int) -> None:
        mechanism = self.settings.mechanism

        def on_handshake(resp: ClientResponse) -> None:
            if resp.body is None:
                return
            if resp.body["error_code"] != 0:
                offered = ", ".join(resp.body.get("mechanisms") or [])
                self._failed(node_id, resp.received_ms, f"{mechanism} refused (offered: {offered})")
                return
            exchange = self.settings.exchange()
            self._token(node_id, exchange, exchange.first(), resp.received_ms)

        request = ClientRequest(
            node_id, SASL_HANDSHAKE, {"mechanism": mechanism}, on_handshake, created_ms=now_ms
        )
        self._send(request, 1, now_ms)

    def _token(self, node_id: int, exchange: SaslClientExchange, token: bytes, now_ms: int) -> None:
        def on_answer(resp: ClientResponse) -> None:
            if resp.body is None:
                return
            body = resp.body
            if body["error_code"] != 0:
                self._failed(node_id, resp.received_ms, body.get("error_message") or "")
                return
            try:
                following = exchange.next(bytes(body["auth_bytes"]))
            except DecodeError as exc:
                self._failed(node_id, resp.received_ms, str(exc))
                return
            if following is not None:
                self._token(node_id, exchange, following, resp.received_ms)
                return
            lifetime_ms = int(body.get("session_lifetime_ms") or 0)
            if lifetime_ms > 0:
                share = 0.85 + 0.10 * self._rng.random()
                self._due_ms[node_id] = resp.received_ms + int(lifetime_ms * share)
            if node_id in self.relogging:
                self.relogging.discard(node_id)
            else:
                self._ready(node_id, self._versions[node_id])

        request = ClientRequest(
            node_id, SASL_AUTHENTICATE, {"auth_bytes": token}, on_answer, created_ms=now_ms
        )
        self._send(request, self._versions[node_id][SASL_AUTHENTICATE], now_ms)
