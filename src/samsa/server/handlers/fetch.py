"""Fetch (key 1): long-poll reads served straight from segment files.

The first read happens at once; if fewer than ``min_bytes`` are available the
request parks on its partitions and is answered the moment appends bring
enough bytes, or when ``max_wait_ms`` runs out -- whichever comes first.
Fetch sessions are not kept: every response has session id 0, which tells
clients to keep sending full fetches (Kafka's sessionless mode).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.raft import wire
from samsa.replication.replica_manager import FetchWaiter
from samsa.server.handlers.quorum import handle_raft_request
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker import Broker
    from samsa.server.metrics import BrokerMetrics

API_KEY = 1
READ_COMMITTED = 1
MAX_CLIENT_VERSION = 12


def register(router: Router, broker: Broker, listener: str) -> None:
    raft = broker.node.raft if broker.node.serves_controller_on(listener) else None
    router.register(API_KEY, lambda ctx, req: handle_fetch(broker, raft, ctx, req))


def handle_fetch(broker: Broker, raft: Any, ctx: RequestContext, req: Body) -> Body | Any:
    version = ctx.version
    if wire.is_metadata_fetch(version, req):
        if raft is None:
            return wire.error_response(
                API_KEY, version, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "not a controller listener"
            )
        return handle_raft_request(raft, ctx, API_KEY, req)
    if version > MAX_CLIENT_VERSION:
        return wire.error_response(
            API_KEY, version, ErrorCode.UNSUPPORTED_VERSION, f"Fetch v{version} is for the quorum"
        )
    if version >= 7 and req.get("session_epoch", -1) > 0:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
            "session_id": 0,
            "responses": [],
        }
    if broker.metrics is not None:
        _count_positions(broker.metrics, ctx, req)
    responses, total = read_partitions(broker, req)
    max_wait = req["max_wait_ms"]
    if total >= req["min_bytes"] or max_wait <= 0 or total < 0:
        return _response(broker, responses)
    return _wait_and_read(broker, req, total)


def _count_positions(metrics: BrokerMetrics, ctx: RequestContext, req: Body) -> None:
    connection = ctx.connection
    for topic in req["topics"]:
        name = topic["topic"]
        for preq in topic["partitions"]:
            metrics.on_fetch_position(connection, name, preq["partition"], preq["fetch_offset"])


async def _wait_and_read(broker: Broker, req: Body, available: int) -> Body:
    keys = [(t["topic"], p["partition"]) for t in req["topics"] for p in t["partitions"]]
    waiter = FetchWaiter(req["min_bytes"] - available)
    broker.replicas.park(keys, waiter)
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiter.future), req["max_wait_ms"] / 1000)
    finally:
        broker.replicas.unpark(keys, waiter)
    responses, _ = read_partitions(broker, req)
    return _response(broker, responses)


def _response(broker: Broker, responses: list[dict[str, Any]]) -> Body:
    metrics = broker.metrics
    if metrics is not None:
        for topic in responses:
            size = sum(len(p["records"]) for p in topic["partitions"] if p.get("records"))
            if size:
                metrics.on_fetched(topic["topic"], size)
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}


def read_partitions(broker: Broker, req: Body) -> tuple[list[dict[str, Any]], int]:
    """Read every requested partition; returns the responses and the bytes found
    (-1 when a partition has an error, so the caller answers without waiting)."""
    remaining = req.get("max_bytes", 0x7FFFFFFF)
    read_committed = req.get("isolation_level", 0) == READ_COMMITTED
    total = 0
    errors = False
    first_data = True
    responses = []
    for topic in req["topics"]:
        name = topic["topic"]
        parts = []
        for preq in topic["partitions"]:
            index = preq["partition"]
            partition = broker.replicas.get(name, index)
            if partition is None or not broker.leads(name, index):
                errors = True
                known = name in broker.image.topics
                parts.append(
                    _error(
                        index,
                        ErrorCode.NOT_LEADER_OR_FOLLOWER
                        if known
                        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    )
                )
                continue
            hw = partition.high_watermark
            log_start = partition.log_start_offset
            offset = preq["fetch_offset"]
            records: Any = b""
            if offset < log_start or offset > hw:
                errors = True
                parts.append(_error(index, ErrorCode.OFFSET_OUT_OF_RANGE, hw, log_start))
                continue
            if offset < hw and (remaining > 0 or first_data):
                limit = min(preq["partition_max_bytes"], max(remaining, 0))
                try:
                    data = partition.log.read(offset, limit, min_one=first_data, max_offset=hw)
                except KafkaError as exc:
                    errors = True
                    parts.append(_error(index, exc.code, hw, log_start))
                    continue
                records = data.records
                size = len(records)
                if size:
                    first_data = False
                    remaining -= size
                    total += size
            parts.append(
                {
                    "partition_index": index,
                    "error_code": 0,
                    "high_watermark": hw,
                    "last_stable_offset": hw,
                    "log_start_offset": log_start,
                    "aborted_transactions": [] if read_committed else None,
                    "preferred_read_replica": -1,
                    "records": records,
                }
            )
        responses.append({"topic": name, "partitions": parts})
    return responses, (-1 if errors and total == 0 else total)


def _error(index: int, code: ErrorCode, hw: int = -1, log_start: int = -1) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": code,
        "high_watermark": hw,
        "last_stable_offset": hw,
        "log_start_offset": log_start,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        # Empty, never null: Kafka sends an empty record set with an error, and
        # librdkafka treats a null one as a parse failure and refetches in a
        # tight loop instead of handling the error (e.g. auto.offset.reset).
        "records": b"",
    }
