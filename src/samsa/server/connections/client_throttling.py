"""Client quotas on the request path: measure, answer at once, then mute (KIP-219).

Kafka's KafkaApis hands each produce's bytes to the produce quota, each fetch
response's bytes to the fetch quota and each request's handler time to the
request quota, and takes the largest throttle time.  The response carries it
in ``throttle_time_ms`` and goes out at once; then the connection is muted --
nothing more is read from it -- for that long, so a throttled client cannot
make the broker queue more of its data (KIP-219).  Clients that know KIP-219
(librdkafka, the Java client) hold their own next request back as well.

A fetch is bounded before it is read: a consumer over its quota is not sent
more than the quota allows over the window (Kafka's
``getMaxValueInQuotaWindow``).  Follower fetches, ApiVersions and SASL
requests are never throttled.

The router calls in only when ``active`` is true: with no quota set anywhere
the request path pays one attribute read.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from samsa.security.quotas import ClientQuotaManager, QuotaType

if TYPE_CHECKING:
    from samsa.protocol.api import RequestHeader
    from samsa.server.connections.socket_server import Connection

PRODUCE, FETCH, API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 0, 1, 18, 17, 36
# Inter-broker and quorum traffic (Kafka exempts cluster actions from request quotas).
EXEMPT_FROM_REQUEST_QUOTA = frozenset(
    {API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE, 52, 53, 54, 55, 56, 62, 63, 64, 67, 80, 81}
)
_REQUEST_PERCENT_PER_SECOND = 100.0


def _is_follower_fetch(request: dict[str, Any]) -> bool:
    state = request.get("replica_state")
    replica_id = state.get("replica_id", -1) if state else request.get("replica_id", -1)
    return int(replica_id) >= 0


def _topic_key(topic: dict[str, Any]) -> str | bytes:
    """Produce v13+ names topics by id (the answer has both), older versions by name."""
    topic_id = topic.get("topic_id")
    return bytes(topic_id) if topic_id and any(topic_id) else str(topic["name"])


def produced_bytes(request: dict[str, Any], response: dict[str, Any] | None) -> int:
    """Bytes of the partitions appended (all of them for acks=0, which has no answer)."""
    failed: set[tuple[str | bytes, int]] = set()
    if response is not None:
        for topic in response["responses"]:
            for part in topic["partition_responses"]:
                if part["error_code"]:
                    failed.add((_topic_key(topic), part["index"]))
    total = 0
    for topic in request["topic_data"]:
        name = _topic_key(topic)
        for part in topic["partition_data"]:
            records = part["records"]
            if records is not None and (name, part["index"]) not in failed:
                total += len(records)
    return total


def fetched_bytes(response: dict[str, Any]) -> int:
    total = 0
    for topic in response.get("responses", ()):
        for part in topic["partitions"]:
            records = part.get("records")
            if records:
                total += len(records)
    return total


class ClientThrottling:
    """The request path's side of ``ClientQuotaManager``; one per broker."""

    def __init__(self, manager: ClientQuotaManager) -> None:
        self.manager = manager

    @property
    def active(self) -> bool:
        return self.manager.any_enabled

    def before(
        self, api_key: int, header: RequestHeader, request: dict[str, Any], conn: Connection
    ) -> dict[str, Any]:
        """The request as it may be served: a fetch bounded by the consumer's quota."""
        manager = self.manager
        if api_key != FETCH or not manager.enabled(QuotaType.FETCH):
            return request
        if not manager.applies(QuotaType.FETCH, conn.principal.name, header.client_id or ""):
            return request
        if _is_follower_fetch(request):
            return request
        most = manager.max_value_in_window(
            QuotaType.FETCH, conn.principal.name, header.client_id or ""
        )
        if most is None or most >= request.get("max_bytes", 0x7FFFFFFF):
            return request
        return {**request, "max_bytes": most}

    def after(
        self,
        api_key: int,
        header: RequestHeader,
        request: dict[str, Any],
        response: dict[str, Any] | None,
        conn: Connection,
        seconds: float,
    ) -> None:
        """Record the request's cost; stamp the throttle time and mute the connection."""
        if api_key == FETCH and _is_follower_fetch(request):
            return  # replication is exempt from every client quota, as in Kafka
        manager = self.manager
        user, client_id = conn.principal.name, header.client_id or ""
        now_ms = time.time_ns() // 1_000_000
        throttle_ms = 0
        if api_key == PRODUCE and manager.applies(QuotaType.PRODUCE, user, client_id):
            size = produced_bytes(request, response)
            throttle_ms = manager.record(QuotaType.PRODUCE, user, client_id, size, now_ms)
        elif (
            api_key == FETCH
            and response is not None
            and manager.applies(QuotaType.FETCH, user, client_id)
        ):
            size = fetched_bytes(response)
            throttle_ms = manager.record(QuotaType.FETCH, user, client_id, size, now_ms)
        if api_key not in EXEMPT_FROM_REQUEST_QUOTA and manager.applies(
            QuotaType.REQUEST, user, client_id
        ):
            used = seconds * _REQUEST_PERCENT_PER_SECOND
            throttle_ms = max(
                throttle_ms, manager.record(QuotaType.REQUEST, user, client_id, used, now_ms)
            )
        if throttle_ms <= 0:
            return
        if response is not None:
            response["throttle_time_ms"] = max(response.get("throttle_time_ms") or 0, throttle_ms)
        conn.mute(throttle_ms)
