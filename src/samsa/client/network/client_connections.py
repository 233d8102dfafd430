"""The NetworkClient's connections: connect, handshake, write, tear down (see network_client.py).

Split from the client so each file holds one concern: this base holds every
connection's life -- opening it, the ApiVersions handshake that fixes the
version of each API on it (and the SASL login after it, see sasl_login),
writing requests to it, and closing it on an error, a timeout or idleness,
failing what was in flight there -- and network_client.py the requests and
responses over them: send, poll, read, and the metadata refresh.

API versions: each connection negotiates per API the highest version both
sides know (``min(our max, broker max)``), as the Java client does; requests
are encoded at that version.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from samsa.client.metadata import Metadata
from samsa.client.network.connection import BrokerConnection, SocketLike, open_socket
from samsa.client.network.connection_states import ClusterConnectionStates, ConnectionState
from samsa.client.network.in_flight import ClientRequest, ClientResponse, InFlightRequests
from samsa.client.network.sasl_login import SaslLogin
from samsa.client.network.security import ClientSecurity
from samsa.client.network.selector import Selector, SelectorLike
from samsa.client.network.tls_socket import TlsSocket
from samsa.client.network.versions import CLIENT_MAX_VERSIONS, CLIENT_MIN_VERSIONS
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.api import encode_request_parts
from samsa.protocol.messages import APIS

log = logging.getLogger("samsa.client.network.network_client")

API_VERSIONS = 18
_CLIENT_SOFTWARE_VERSION = "0.1.0"

Connector = Callable[[str, int], SocketLike]


def _default_clock() -> int:
    return int(time.monotonic() * 1000)


class ClientConnections:
    """The per-node connections of a NetworkClient and their life."""

    def __init__(
        self,
        metadata: Metadata,
        *,
        client_id: str = "samsa",
        max_in_flight: int = 5,
        request_timeout_ms: int = 30000,
        reconnect_backoff_ms: int = 50,
        reconnect_backoff_max_ms: int = 1000,
        connections_max_idle_ms: int = 540000,
        connection_setup_timeout_ms: int = 10000,
        send_buffer_bytes: int = 131072,
        receive_buffer_bytes: int = 65536,
        keepalive: bool = True,
        nodelay: bool = True,
        selector: SelectorLike | None = None,
        connector: Connector | None = None,
        clock_ms: Callable[[], int] = _default_clock,
        security: ClientSecurity | None = None,
    ) -> None:
        self.metadata = metadata
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.connections_max_idle_ms = connections_max_idle_ms
        self.connection_setup_timeout_ms = connection_setup_timeout_ms
        self.in_flight = InFlightRequests(max_in_flight)
        self.states = ClusterConnectionStates(reconnect_backoff_ms, reconnect_backoff_max_ms)
        self._selector: SelectorLike = selector or Selector()
        self._connector: Connector = connector or (
            lambda h, p: open_socket(
                h, p, send_buffer_bytes, receive_buffer_bytes, keepalive, nodelay
            )
        )
        self.security = security or ClientSecurity()
        ssl_context = self.security.ssl_context
        if ssl_context is not None:
            plain = self._connector
            self._connector = lambda h, p: TlsSocket(plain(h, p), ssl_context, h)  # type: ignore[arg-type]
        self.authentication_failure: str | None = None
        """Why the last SASL login failed (the broker's message), if it did."""
        # Bytes and requests written, and response bytes read, per api key (Kafka's
        # outgoing/incoming-byte-total, by request type): what an incremental fetch
        # session saves is measured here.
        self.request_bytes_sent: dict[int, int] = {}
        self.requests_sent: dict[int, int] = {}
        self.response_bytes_received: dict[int, int] = {}
        self._login = (
            None
            if self.security.sasl is None
            else SaslLogin(
                self.security.sasl,
                lambda request, version, now_ms: self._do_send(request, version, now_ms),
                self._logged_in,
                self._sasl_failed,
            )
        )
        self._clock = clock_ms
        self._conns: dict[int, BrokerConnection] = {}
        self._last_active: dict[int, int] = {}
        self._correlation = 0
        self._completed: list[ClientResponse] = []  # fired on the next poll
        self._unsent_no_response: list[ClientRequest] = []
        self._metadata_in_flight: int | None = None  # node id
        self._closed = False

    # -- connection management ------------------------------------------------
    def is_ready(self, node_id: int) -> bool:
        """Connected, handshake done, room in flight and the last request written."""
        conn = self._conns.get(node_id)
        return (
            conn is not None
            and self.states.is_ready(node_id)
            and not conn.has_pending_writes
            and self.in_flight.can_send_more(node_id)
            and (self._login is None or node_id not in self._login.relogging)
        )

    def ready(self, node_id: int, now_ms: int) -> bool:
        """True if a request can be sent to ``node_id`` now; else start connecting."""
        if self.is_ready(node_id):
            return True
        if self.states.can_connect(node_id, now_ms):
            self._initiate_connect(node_id, now_ms)
        return False

    def connection_delay_ms(self, node_id: int, now_ms: int) -> int:
        return self.states.connection_delay_ms(node_id, now_ms)

    def connection_failed(self, node_id: int) -> bool:
        st = self.states.get(node_id)
        return st.state is ConnectionState.DISCONNECTED and st.failures > 0

    def api_version(self, node_id: int, api_key: int) -> int | None:
        return self.states.get(node_id).versions.get(api_key)

    def _initiate_connect(self, node_id: int, now_ms: int) -> None:
        node = self.metadata.cluster.nodes.get(node_id)
        if node is None:
            return
        self.states.connecting(node_id, now_ms)
        try:
            sock = self._connector(node.host, node.port)
        except OSError as exc:
            log.warning("connect to node %d (%s:%d) failed: %s", node_id, node.host, node.port, exc)
            self.states.disconnected(node_id, now_ms)
            self.metadata.request_update()
            return
        self._conns[node_id] = BrokerConnection(node_id, sock)
        self._last_active[node_id] = now_ms
        self._selector.register(node_id, sock, True)

    def _on_connected(self, node_id: int, now_ms: int) -> None:
        conn = self._conns[node_id]
        err = 0
        getsockopt = getattr(conn.sock, "getsockopt", None)
        if getsockopt is not None:
            import socket

            err = getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            log.warning("connect to node %d failed: errno %d", node_id, err)
            self._disconnect(node_id, now_ms)
            return
        self.states.checking_api_versions(node_id)
        self._send_api_versions(node_id, 3, now_ms)

    def _send_api_versions(self, node_id: int, version: int, now_ms: int) -> None:
        body = {
            "client_software_name": "samsa",
            "client_software_version": _CLIENT_SOFTWARE_VERSION,
        }
        req = ClientRequest(node_id, API_VERSIONS, body, self._on_api_versions, created_ms=now_ms)
        self._do_send(req, version, now_ms)

    def _on_api_versions(self, resp: ClientResponse) -> None:
        node_id = resp.request.node_id
        now_ms = resp.received_ms
        if resp.body is None:
            return  # disconnect already handled
        code = resp.body["error_code"]
        if code == ErrorCode.UNSUPPORTED_VERSION and resp.request.api_version > 0:
            self._send_api_versions(node_id, 0, now_ms)
            return
        if code != 0:
            log.warning("ApiVersions to node %d failed with error %d", node_id, code)
            self._disconnect(node_id, now_ms)
            return
        versions: dict[int, int] = {}
        for entry in resp.body["api_keys"]:
            api = APIS.get(entry["api_key"])
            if api is None:
                continue
            low = max(entry["min_version"], CLIENT_MIN_VERSIONS.get(api.key, api.valid[0]))
            # The advertised range is what this code implements; a schema may know
            # newer versions (Fetch 13+ name topics by id) that only the quorum uses.
            high = min(
                entry["max_version"],
                api.advertised_range[1],
                CLIENT_MAX_VERSIONS.get(api.key, api.advertised_range[1]),
            )
            if low <= high:
                versions[api.key] = high
        if self._login is None:
            self.states.ready(node_id, versions)
            return
        self._login.start(node_id, versions, now_ms)

    def _logged_in(self, node_id: int, versions: dict[int, int]) -> None:
        self.authentication_failure = self.metadata.fatal = None
        self.states.ready(node_id, versions)

    def _can_relogin(self, node_id: int) -> bool:
        conn = self._conns.get(node_id)
        return conn is not None and self.states.is_ready(node_id) and not conn.has_pending_writes

    def _sasl_failed(self, node_id: int, now_ms: int, why: str) -> None:
        """As Kafka's client: a refused login fails waits at once, not at a timeout."""
        self.authentication_failure = why
        self.metadata.fatal = KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, why)
        log.error("SASL authentication with node %d failed: %s", node_id, why)
        self._disconnect(node_id, now_ms)

    def _disconnect(
        self, node_id: int, now_ms: int, timed_out: bool = False, failed: bool = True
    ) -> None:
        conn = self._conns.pop(node_id, None)
        self._last_active.pop(node_id, None)
        if self._login is not None:
            self._login.forget(node_id)
        if conn is not None:
            self._selector.unregister(node_id)
            conn.close()
        self.states.disconnected(node_id, now_ms, failed=failed)
        for req in self.in_flight.clear_all(node_id):
            self._completed.append(
                ClientResponse(req, now_ms, disconnected=True, timed_out=timed_out)
            )
        self._unsent_no_response = [r for r in self._unsent_no_response if r.node_id != node_id]
        if self._metadata_in_flight == node_id:
            self._metadata_in_flight = None
            self.metadata.failed_update(now_ms)
        if failed:
            self.metadata.request_update()

    def close_node(self, node_id: int, now_ms: int) -> None:
        self._disconnect(node_id, now_ms, failed=False)

    def _do_send(self, request: ClientRequest, version: int, now_ms: int) -> None:
        node_id = request.node_id
        conn = self._conns[node_id]
        self._correlation = (self._correlation + 1) & 0x7FFFFFFF
        request.api_version = version
        request.correlation_id = self._correlation
        request.send_ms = now_ms
        request.request_timeout_ms = (
            self.request_timeout_ms if request.timeout_ms is None else request.timeout_ms
        )
        parts = encode_request_parts(
            request.api_key, version, request.correlation_id, self.client_id, request.body
        )
        conn.enqueue_parts(parts)
        key, size = request.api_key, 4 + int.from_bytes(bytes(parts[0][:4]), "big")
        self.request_bytes_sent[key] = self.request_bytes_sent.get(key, 0) + size
        self.requests_sent[key] = self.requests_sent.get(key, 0) + 1
        if request.expect_response:
            self.in_flight.add(request)
        else:
            self._unsent_no_response.append(request)
        self._last_active[node_id] = now_ms
        self._write(node_id, conn, now_ms)

    def _write(self, node_id: int, conn: BrokerConnection, now_ms: int) -> None:
        try:
            done = conn.write()
        except OSError as exc:
            log.info("write to node %d failed: %s", node_id, exc)
            self._disconnect(node_id, now_ms)
            return
        if done and self._unsent_no_response:
            keep: list[ClientRequest] = []
            for req in self._unsent_no_response:
                if req.node_id == node_id:
                    self._completed.append(ClientResponse(req, now_ms))
                else:
                    keep.append(req)
            self._unsent_no_response = keep
        st = self.states.state(node_id)
        self._selector.register(node_id, conn.sock, not done or st is ConnectionState.CONNECTING)

    def _handle_timeouts(self, now_ms: int) -> None:
        for node_id in self.in_flight.nodes_with_timeouts(now_ms):
            log.warning("request to node %d timed out; closing the connection", node_id)
            self._disconnect(node_id, now_ms, timed_out=True)
        for node_id, conn in list(self._conns.items()):
            st = self.states.get(node_id)
            if (
                st.state is ConnectionState.CONNECTING
                and now_ms - st.last_attempt_ms > self.connection_setup_timeout_ms
            ):
                del conn
                self._disconnect(node_id, now_ms, timed_out=True)

    def _reap_idle(self, now_ms: int) -> None:
        limit = self.connections_max_idle_ms
        if limit < 0:
            return
        for node_id, last in list(self._last_active.items()):
            if now_ms - last > limit and self.in_flight.count(node_id) == 0:
                log.debug("closing idle connection to node %d", node_id)
                self._disconnect(node_id, now_ms, failed=False)
