"""Per-node connection state and reconnect backoff (Kafka's ClusterConnectionStates).

States: DISCONNECTED -> CONNECTING -> CHECKING_API_VERSIONS -> READY, and back to
DISCONNECTED on any failure.  Each consecutive failure doubles the wait before
the next attempt, from ``reconnect.backoff.ms`` up to ``reconnect.backoff.max.ms``
with +-20 % jitter, so a dead broker is not hammered and a fleet of clients does
not reconnect in lockstep.  A successful ApiVersions exchange resets the count.

When a broker closes a connection while a request waits for its answer, the
state it was in is kept (:class:`PeerClose`): a listener that wants TLS or SASL
closes a plain client's connection at once, and a caller that then runs out of
time can say so (:meth:`ClusterConnectionStates.peer_close_hint`) instead of
only "no response".
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["ClusterConnectionStates", "ConnectionState", "PeerClose"]

log = logging.getLogger("samsa.client.network.network_client")


class ConnectionState(Enum):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CHECKING_API_VERSIONS = "checking_api_versions"
    READY = "ready"


@dataclass(slots=True)
class NodeConnectionState:
    state: ConnectionState = ConnectionState.DISCONNECTED
    last_attempt_ms: int = 0
    failures: int = 0
    backoff_ms: int = 0
    # api_key -> version chosen for this connection (valid for this connection only)
    versions: dict[int, int] = field(default_factory=dict)
    answered: bool = False
    """Whether this connection answered anything but ApiVersions."""


@dataclass(frozen=True, slots=True)
class PeerClose:
    """A broker closed a connection of ours while a request waited for its answer."""

    node_id: int
    state: ConnectionState
    """Where the connection was: CHECKING_API_VERSIONS (not even ApiVersions was
    answered) or READY (past the handshake and, with SASL, the login)."""


class ClusterConnectionStates:
    def __init__(self, backoff_ms: int, backoff_max_ms: int, rng: random.Random | None = None):
        self._base = max(0, backoff_ms)
        self._max = max(self._base, backoff_max_ms)
        self._rng = rng or random.Random()
        self._nodes: dict[int, NodeConnectionState] = {}
        self.last_peer_close: PeerClose | None = None
        """The last close by a broker with a request unanswered, until one answers."""

    def get(self, node_id: int) -> NodeConnectionState:
        st = self._nodes.get(node_id)
        if st is None:
            st = self._nodes[node_id] = NodeConnectionState()
        return st

    def state(self, node_id: int) -> ConnectionState:
        st = self._nodes.get(node_id)
        return st.state if st else ConnectionState.DISCONNECTED

    def can_connect(self, node_id: int, now_ms: int) -> bool:
        st = self._nodes.get(node_id)
        if st is None:
            return True
        return (
            st.state is ConnectionState.DISCONNECTED
            and now_ms - st.last_attempt_ms >= st.backoff_ms
        )

    def connection_delay_ms(self, node_id: int, now_ms: int) -> int:
        """0 if a connect may start now; the remaining backoff if disconnected;
        a large value while a connect is under way (readiness arrives as an event)."""
        st = self._nodes.get(node_id)
        if st is None:
            return 0
        if st.state is ConnectionState.DISCONNECTED:
            return max(0, st.last_attempt_ms + st.backoff_ms - now_ms)
        return 2**31 - 1

    def connecting(self, node_id: int, now_ms: int) -> None:
        st = self.get(node_id)
        st.state = ConnectionState.CONNECTING
        st.last_attempt_ms = now_ms
        st.versions = {}
        st.answered = False

    def checking_api_versions(self, node_id: int) -> None:
        self.get(node_id).state = ConnectionState.CHECKING_API_VERSIONS

    def ready(self, node_id: int, versions: dict[int, int]) -> None:
        st = self.get(node_id)
        st.state = ConnectionState.READY
        st.versions = versions
        st.failures = 0
        st.backoff_ms = 0

    def disconnected(self, node_id: int, now_ms: int, failed: bool = True) -> None:
        """Mark closed.  ``failed`` False (idle reaping) keeps backoff at zero."""
        st = self.get(node_id)
        was_ready = st.state is ConnectionState.READY
        st.state = ConnectionState.DISCONNECTED
        st.versions = {}
        if not failed:
            st.backoff_ms = 0
            return
        if was_ready:
            # A connection that worked and then dropped gets the base backoff
            # (Kafka resets on success), a connect that never worked grows it.
            st.failures = 0
        st.last_attempt_ms = now_ms
        exp = min(self._max, self._base * (2**st.failures))
        st.failures += 1
        jitter = 1.0 + self._rng.uniform(-0.2, 0.2)
        st.backoff_ms = int(min(self._max, exp) * jitter) if exp else 0

    def is_ready(self, node_id: int) -> bool:
        st = self._nodes.get(node_id)
        return st is not None and st.state is ConnectionState.READY

    def remove(self, node_id: int) -> None:
        self._nodes.pop(node_id, None)

    def closed_by_peer(self, node_id: int, waiting: int, why: object = None) -> None:
        """The broker closed the connection (``why``: the read error, if any),
        with ``waiting`` requests unanswered on it; called before ``disconnected``."""
        if why is None:
            log.info("node %d closed the connection", node_id)
        else:
            log.info("read from node %d failed: %s", node_id, why)
        st = self.get(node_id)
        if not waiting or st.answered:
            return  # an idle close, or a listener that spoke to us: nothing to tell
        if st.state in (ConnectionState.CHECKING_API_VERSIONS, ConnectionState.READY):
            self.last_peer_close = PeerClose(node_id, st.state)

    def answered(self, node_id: int) -> None:
        """A request other than ApiVersions got its answer on ``node_id``'s connection."""
        self.get(node_id).answered = True
        self.last_peer_close = None

    def peer_close_hint(self, *, tls: bool, sasl: bool) -> str | None:
        """Why the broker probably closed our connections, for a client with or
        without TLS and SASL settings; None when the closes do not tell."""
        close = self.last_peer_close
        if close is None:
            return None
        if close.state is ConnectionState.CHECKING_API_VERSIONS and not tls:
            return (
                "the broker closed the connection before any answer; the listener "
                "probably wants TLS (security.protocol=SSL or SASL_SSL, ssl.truststore.location)"
            )
        if close.state is ConnectionState.READY and not sasl:
            return (
                "the broker closed the connection unanswered; the listener probably wants "
                "SASL (security.protocol=SASL_PLAINTEXT or SASL_SSL, sasl.mechanism, "
                "sasl.jaas.config)"
            )
        return None
