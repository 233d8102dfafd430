"""Outgoing requests: ids, one in flight per destination, timeouts and backoff.

Kafka's RequestManager/ConnectionState in sans-I/O form.  The machine sends at
most one request to a node at a time; a response is accepted only if it answers
the request still in flight (so duplicates, late answers and answers to requests
of a previous role are dropped).  A failed or timed-out request makes the
destination wait ``retry_backoff_ms`` before the next one.  Changing role resets
everything, as Kafka's ``resetConnections`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.raft.messages import RaftRequest

__all__ = ["InFlightRequest", "RequestManager"]


@dataclass(frozen=True, slots=True)
class InFlightRequest:
    request_id: int
    destination_id: int
    message: RaftRequest
    deadline_ms: int


class RequestManager:
    """Book-keeping of requests in flight; owned by one machine."""

    def __init__(self, request_timeout_ms: int, retry_backoff_ms: int) -> None:
        self._request_timeout_ms = request_timeout_ms
        self._retry_backoff_ms = retry_backoff_ms
        self._next_request_id = 1
        self._in_flight: dict[int, InFlightRequest] = {}
        self._by_destination: dict[int, int] = {}
        self._backoff_until: dict[int, int] = {}

    def is_ready(self, destination_id: int, now_ms: int) -> bool:
        """No request in flight to it and not backing off."""
        return (
            destination_id not in self._by_destination
            and self._backoff_until.get(destination_id, 0) <= now_ms
        )

    def has_in_flight(self, destination_id: int) -> bool:
        return destination_id in self._by_destination

    def register(self, destination_id: int, message: RaftRequest, now_ms: int) -> InFlightRequest:
        request = InFlightRequest(
            self._next_request_id, destination_id, message, now_ms + self._request_timeout_ms
        )
        self._next_request_id += 1
        self._in_flight[request.request_id] = request
        self._by_destination[destination_id] = request.request_id
        return request

    def complete(self, request_id: int) -> InFlightRequest | None:
        """The request answered by a response, or ``None`` if it is no longer expected."""
        request = self._in_flight.pop(request_id, None)
        if request is not None:
            del self._by_destination[request.destination_id]
        return request

    def fail(self, request_id: int, now_ms: int) -> InFlightRequest | None:
        request = self.complete(request_id)
        if request is not None:
            self.back_off(request.destination_id, now_ms)
        return request

    def back_off(self, destination_id: int, now_ms: int) -> None:
        self._backoff_until[destination_id] = now_ms + self._retry_backoff_ms

    def expire(self, now_ms: int) -> list[InFlightRequest]:
        """Remove and return the requests whose timeout passed (their destinations back off)."""
        expired = [r for r in self._in_flight.values() if r.deadline_ms <= now_ms]
        for request in expired:
            self.fail(request.request_id, now_ms)
        return expired

    def reset_all(self) -> None:
        self._in_flight.clear()
        self._by_destination.clear()
        self._backoff_until.clear()

    def next_deadline(self, now_ms: int) -> int | None:
        """The earliest request timeout or end of a backoff still ahead."""
        times = [r.deadline_ms for r in self._in_flight.values()]
        times += [t for t in self._backoff_until.values() if t > now_ms]
        return min(times) if times else None
