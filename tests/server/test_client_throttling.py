"""ClientThrottling on the request path: what is counted, what is exempt, and
that a violation stamps the response and mutes the connection."""

from __future__ import annotations

from typing import Any

from samsa.protocol.api import RequestHeader
from samsa.protocol.metadata.quotas import make_entity
from samsa.security.principal import ANONYMOUS
from samsa.security.quotas import ClientQuotaManager, QuotaType, WindowConfig
from samsa.server.connections.client_throttling import ClientThrottling, produced_bytes


class FakeConnection:
    principal = ANONYMOUS

    def __init__(self) -> None:
        self.muted_ms: list[int] = []

    def mute(self, throttle_ms: int) -> None:
        self.muted_ms.append(throttle_ms)


def throttling(key: str, bound: float) -> ClientThrottling:
    manager = ClientQuotaManager(WindowConfig(samples=2, window_ms=1000))
    manager.update({make_entity([("client-id", None)]): {key: bound}})
    return ClientThrottling(manager)


def fetch_request(replica_id: int) -> dict[str, Any]:
    return {"replica_id": replica_id, "max_bytes": 10_000_000, "topics": []}


def fetch_response(size: int) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "responses": [{"topic": "t", "partitions": [{"records": b"x" * size}]}],
    }


def test_only_partitions_appended_count_toward_the_produce_quota() -> None:
    request = {
        "topic_data": [
            {
                "name": "t",
                "partition_data": [
                    {"index": 0, "records": b"a" * 100},
                    {"index": 1, "records": b"b" * 50},
                ],
            }
        ]
    }
    response = {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {"index": 0, "error_code": 0},
                    {"index": 1, "error_code": 6},
                ],
            }
        ]
    }
    assert produced_bytes(request, response) == 100
    assert produced_bytes(request, None) == 150  # acks=0: no answer, all of it


def test_a_consumer_over_its_fetch_quota_is_stamped_and_muted() -> None:
    gate = throttling(QuotaType.FETCH.value, 1000.0)
    header = RequestHeader(1, 12, 1, "consumer")
    conn = FakeConnection()
    bounded = gate.before(1, header, fetch_request(-1), conn)  # type: ignore[arg-type]
    assert bounded["max_bytes"] == 1000  # one window's worth, of two samples
    response = fetch_response(5000)
    gate.after(1, header, bounded, response, conn, 0.001)  # type: ignore[arg-type]
    assert response["throttle_time_ms"] > 0
    assert conn.muted_ms == [response["throttle_time_ms"]]


def test_follower_fetches_are_exempt_from_every_client_quota() -> None:
    for key in (QuotaType.FETCH.value, QuotaType.REQUEST.value):
        gate = throttling(key, 0.001)
        header = RequestHeader(1, 12, 1, "broker-2")
        conn = FakeConnection()
        request = gate.before(1, header, fetch_request(2), conn)  # type: ignore[arg-type]
        assert request["max_bytes"] == 10_000_000
        response = fetch_response(5000)
        gate.after(1, header, request, response, conn, 0.5)  # type: ignore[arg-type]
        assert response["throttle_time_ms"] == 0 and conn.muted_ms == []
