"""NetworkClient: requests to brokers over non-blocking connections (Kafka's NetworkClient).

One thread -- the producer's Sender, later the consumer's -- owns the client and
drives it with ``poll(timeout_ms, now_ms)``: the call writes queued requests,
reads responses, completes connects, runs the ApiVersions handshake on every new
connection, fails requests that outlive ``request.timeout.ms`` (closing their
connection, because a broker answering out of order is not recoverable), reaps
idle connections, and keeps cluster metadata fresh.  Responses are returned and
their callbacks run on the polling thread.  ``wakeup()`` is the one method other
threads may call.

The connections' life -- connect, the ApiVersions handshake that fixes each
API's version, SASL login, writes, disconnects, timeouts, idle reaping -- is
the ClientConnections base (client_connections); this module holds the
requests and responses over them and the metadata refresh.  Time is passed
in (``now_ms``) so tests can drive the client with a manual clock;
``clock_ms`` is read only after a blocking select, when the passed-in time
is stale.
"""

from __future__ import annotations

import logging

from samsa.client.network.client_connections import API_VERSIONS, ClientConnections
from samsa.client.network.connection import BrokerConnection, FramingError
from samsa.client.network.connection_states import ConnectionState
from samsa.client.network.in_flight import (
    ClientRequest,
    ClientResponse,
    decode_answer,
)
from samsa.client.network.versions import CLIENT_MAX_VERSIONS, CLIENT_MIN_VERSIONS
from samsa.errors import DecodeError

__all__ = ["CLIENT_MAX_VERSIONS", "CLIENT_MIN_VERSIONS", "NetworkClient"]

log = logging.getLogger(__name__)

METADATA = 3


class NetworkClient(ClientConnections):
    """Requests to brokers and their responses, over ``ClientConnections``."""

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
            self.states.closed_by_peer(node_id, self.in_flight.count(node_id), exc)
            self._disconnect(node_id, now_ms)
            return
        if frames is None:
            self.states.closed_by_peer(node_id, self.in_flight.count(node_id))
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
                corr, body = decode_answer(req, frame)
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
            if key != API_VERSIONS:
                self.states.answered(node_id)  # this listener speaks to us
            self._completed.append(ClientResponse(req, now_ms, body=body))

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
