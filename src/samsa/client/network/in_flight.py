"""Requests sent to each broker and not yet answered (Kafka's InFlightRequests).

Kafka brokers answer the requests of one connection in order, so each node has
a FIFO: a response always belongs to the oldest request, and its correlation id
must match.  The queue length is what ``max.in.flight.requests.per.connection``
bounds.  Requests that expect no response (acks=0 produce) never enter it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.api import decode_response

__all__ = ["ClientRequest", "ClientResponse", "InFlightRequests", "decode_answer"]

API_VERSIONS = 18


@dataclass(slots=True)
class ClientRequest:
    """A request for one node; the network client fills in version and correlation id."""

    node_id: int
    api_key: int
    body: dict[str, Any]
    callback: Callable[[ClientResponse], None] | None = None
    expect_response: bool = True
    created_ms: int = 0
    # How long this request may wait for its response; None means the client's
    # request.timeout.ms.  JoinGroup waits for the whole rebalance, so Kafka's
    # consumer gives it the rebalance timeout plus a margin.
    timeout_ms: int | None = None
    # Set by NetworkClient.send:
    api_version: int = -1
    correlation_id: int = -1
    send_ms: int = 0
    request_timeout_ms: int = 30000


def decode_answer(req: ClientRequest, frame: bytes | bytearray) -> tuple[int, dict[str, Any]]:
    """The correlation id and body of the answer to ``req``."""
    view = memoryview(frame)
    try:
        return decode_response(req.api_key, req.api_version, view)
    except DecodeError:
        if req.api_key != API_VERSIONS or req.api_version == 0:
            raise
        # A broker that does not know our ApiVersions version answers in v0.
        return decode_response(API_VERSIONS, 0, view)


@dataclass(slots=True)
class ClientResponse:
    """The outcome of one request: a decoded body, or why there is none."""

    request: ClientRequest
    received_ms: int
    body: dict[str, Any] | None = None
    disconnected: bool = False
    timed_out: bool = False
    version_mismatch: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.body is not None


class InFlightRequests:
    """Per-node FIFO of outstanding requests (oldest first)."""

    __slots__ = ("_by_node", "_count", "max_per_connection")

    def __init__(self, max_per_connection: int) -> None:
        self.max_per_connection = max_per_connection
        self._by_node: dict[int, deque[ClientRequest]] = {}
        self._count = 0

    def add(self, request: ClientRequest) -> None:
        self._by_node.setdefault(request.node_id, deque()).append(request)
        self._count += 1

    def complete_next(self, node_id: int) -> ClientRequest:
        """Pop the oldest request of ``node_id`` (the one a response answers)."""
        self._count -= 1
        return self._by_node[node_id].popleft()

    def can_send_more(self, node_id: int) -> bool:
        q = self._by_node.get(node_id)
        return q is None or len(q) < self.max_per_connection

    def count(self, node_id: int | None = None) -> int:
        if node_id is None:
            return self._count
        q = self._by_node.get(node_id)
        return len(q) if q else 0

    def clear_all(self, node_id: int) -> list[ClientRequest]:
        """Remove and return every request of a node, oldest first (on disconnect)."""
        q = self._by_node.pop(node_id, None)
        if not q:
            return []
        self._count -= len(q)
        return list(q)

    def nodes_with_timeouts(self, now_ms: int) -> list[int]:
        """Nodes with a request that has waited longer than its own timeout.

        Every request is checked, not only the oldest: timeouts differ per
        request (a parked JoinGroup may wait minutes, a heartbeat behind it not).
        """
        return [
            node
            for node, q in self._by_node.items()
            if any(now_ms - r.send_ms > r.request_timeout_ms for r in q)
        ]

    def next_timeout_ms(self, now_ms: int) -> int | None:
        """Milliseconds until the earliest request timeout, or None if idle."""
        best: int | None = None
        for q in self._by_node.values():
            for r in q:
                left = r.send_ms + r.request_timeout_ms - now_ms
                best = left if best is None or left < best else best
        return None if best is None else max(0, best)
