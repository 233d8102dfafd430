"""NetworkClient: requests to brokers over non-blocking connections (Kafka's NetworkClient).

One thread -- the producer's Sender, later the consumer's -- owns the client and
drives it with ``poll(timeout_ms, now_ms)``: the call writes queued requests,
reads responses, completes connects, runs the ApiVersions handshake on every new
connection, fails requests that outlive ``request.timeout.ms`` (closing their
connection, because a broker answering out of order is not recoverable), reaps
idle connections, and keeps cluster metadata fresh.  Responses are returned and
their callbacks run on the polling thread.  ``wakeup()`` is the one method other
threads may call.

API versions: each connection negotiates per API the highest version both
sides know (``min(our max, broker max)``), as the Java client does; requests
are encoded at that version.  Time is passed in (``now_ms``) so tests can drive
the client with a manual clock; ``clock_ms`` is read only after a blocking
select, when the passed-in time is stale.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from samsa.client.metadata import Metadata
from samsa.client.network.connection import BrokerConnection, FramingError, SocketLike, open_socket
from samsa.client.network.connection_states import ClusterConnectionStates, ConnectionState
from samsa.client.network.in_flight import ClientRequest, ClientResponse, InFlightRequests
from samsa.client.network.sasl_login import SaslLogin
from samsa.client.network.security import ClientSecurity
from samsa.client.network.selector import Selector, SelectorLike
from samsa.client.network.tls_socket import TlsSocket
from samsa.client.network.versions import CLIENT_MAX_VERSIONS, CLIENT_MIN_VERSIONS
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.api import decode_response, encode_request_parts
from samsa.protocol.messages import APIS

__all__ = ["CLIENT_MAX_VERSIONS", "CLIENT_MIN_VERSIONS", "NetworkClient"]

log = logging.getLogger(__name__)

API_VERSIONS = 18
METADATA = 3
_CLIENT_SOFTWARE_VERSION = "0.1.0"

Connector = Callable[[str, int], SocketLike]


def _default_clock() -> int:
    return int(time.monotonic() * 1000)


class NetworkClient:
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

    # -- sending -----------------------------------------------------------------
    def send(self, request: ClientRequest, now_ms: int) -> None:
        """Queue ``request``; the node must be ``ready``.  Raises if it is not."""
        node_id = request.node_id
        if not self.is_ready(node_id):
            raise RuntimeError(f"node {node_id} is not ready for a request")
        version = self.states.get(node_id).versions.get(request.api_key)
        if version is None:
            resp = ClientResponse(request, now_ms, version_mismatch="broker lacks this API")
            self._completed.append(resp)
            return
        self._do_send(request, version, now_ms)

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

    # -- polling -----------------------------------------------------------------
    def wakeup(self) -> None:
        self._selector.wakeup()

    def poll(self, timeout_ms: int, now_ms: int) -> list[ClientResponse]:
        """One round of I/O; returns completed responses after running their callbacks."""
        if self._completed:
            timeout_ms = 0
        meta_wait = self._maybe_update_metadata(now_ms)
        timeout_ms = min(timeout_ms, meta_wait)
        req_wait = self.in_flight.next_timeout_ms(now_ms)
        if req_wait is not None:
            timeout_ms = min(timeout_ms, req_wait)
        login_wait = None if self._login is None else self._login.wait_ms(now_ms)
        if login_wait is not None:
            timeout_ms = min(timeout_ms, login_wait)
        events = self._selector.select(max(0, timeout_ms))
        now_ms = self._clock()
        for node_id, readable, writable in events:
            conn = self._conns.get(node_id)
            if conn is None:
                continue
            if self.states.state(node_id) is ConnectionState.CONNECTING:
                if writable:
                    self._on_connected(node_id, now_ms)
                continue
            if writable:
                self._write(node_id, conn, now_ms)
            if readable and node_id in self._conns:
                self._read(node_id, conn, now_ms)
        self._handle_timeouts(now_ms)
        self._reap_idle(now_ms)
        if self._login is not None:
            self._login.relogin_due(now_ms, self._can_relogin)
        done, self._completed = self._completed, []
        for resp in done:
            cb = resp.request.callback
            if cb is not None:
                cb(resp)
        return done

    def _read(self, node_id: int, conn: BrokerConnection, now_ms: int) -> None:
        try:
            frames = conn.read()
        except (OSError, FramingError) as exc:
            log.info("read from node %d failed: %s", node_id, exc)
            self._disconnect(node_id, now_ms)
            return
        if frames is None:
            log.info("node %d closed the connection", node_id)
            self._disconnect(node_id, now_ms)
            return
        self._last_active[node_id] = now_ms
        for frame in frames:
            if self.in_flight.count(node_id) == 0:
                log.warning("node %d sent an unsolicited response; closing", node_id)
                self._disconnect(node_id, now_ms)
                return
            req = self.in_flight.complete_next(node_id)
            key = req.api_key
            self.response_bytes_received[key] = (
                self.response_bytes_received.get(key, 0) + 4 + len(frame)
            )
            try:
                corr, body = self._decode(req, frame)
            except DecodeError as exc:
                log.warning("bad %s response from node %d: %s", req.api_key, node_id, exc)
                self._completed.append(ClientResponse(req, now_ms, disconnected=True))
                self._disconnect(node_id, now_ms)
                return
            if corr != req.correlation_id:
                log.warning(
                    "node %d answered correlation id %d, expected %d; closing",
                    node_id,
                    corr,
                    req.correlation_id,
                )
                self._completed.append(ClientResponse(req, now_ms, disconnected=True))
                self._disconnect(node_id, now_ms)
                return
            self._completed.append(ClientResponse(req, now_ms, body=body))

    @staticmethod
    def _decode(req: ClientRequest, frame: bytes | bytearray) -> tuple[int, dict[str, Any]]:
        view = memoryview(frame)
        try:
            return decode_response(req.api_key, req.api_version, view)
        except DecodeError:
            if req.api_key != API_VERSIONS or req.api_version == 0:
                raise
            # A broker that does not know our ApiVersions version answers in v0.
            return decode_response(API_VERSIONS, 0, view)

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

    # -- metadata ------------------------------------------------------------------
    def least_loaded_node(self, now_ms: int) -> int | None:
        """A ready node with the fewest in-flight requests, else one we may connect to."""
        best: int | None = None
        best_load = 2**31
        fallback: int | None = None
        for node_id in self.metadata.cluster.nodes:
            if self.is_ready(node_id):
                load = self.in_flight.count(node_id)
                if load < best_load:
                    best, best_load = node_id, load
            elif fallback is None and (
                node_id in self._conns or self.states.can_connect(node_id, now_ms)
            ):
                fallback = node_id
        return best if best is not None else fallback

    def _maybe_update_metadata(self, now_ms: int) -> int:
        """Send a Metadata request if one is due; returns ms until the next check."""
        wait = self.metadata.time_to_next_update_ms(now_ms)
        if wait > 0 or self._metadata_in_flight is not None:
            return wait if self._metadata_in_flight is None else self.request_timeout_ms
        node_id = self.least_loaded_node(now_ms)
        if node_id is None:
            return self.metadata.refresh_backoff_ms
        if not self.ready(node_id, now_ms):
            return self.metadata.refresh_backoff_ms
        version = self.states.get(node_id).versions.get(METADATA, 1)
        topics = [{"topic_id": b"\x00" * 16, "name": t} for t in self.metadata.topics()]
        body = {
            "topics": topics,
            "allow_auto_topic_creation": True,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
        req = ClientRequest(node_id, METADATA, body, self._on_metadata, created_ms=now_ms)
        self._metadata_in_flight = node_id
        self._do_send(req, version, now_ms)
        return self.request_timeout_ms

    def _on_metadata(self, resp: ClientResponse) -> None:
        self._metadata_in_flight = None
        if resp.body is None:
            self.metadata.failed_update(resp.received_ms)
            return
        self.metadata.update(resp.body, resp.received_ms)

    # -- lifecycle -----------------------------------------------------------------
    def in_flight_count(self, node_id: int | None = None) -> int:
        return self.in_flight.count(node_id)

    def has_in_flight(self) -> bool:
        return self.in_flight.count() > 0 or bool(self._unsent_no_response)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        now_ms = self._clock()
        for node_id in list(self._conns):
            self._disconnect(node_id, now_ms, failed=False)
        self._selector.close()
