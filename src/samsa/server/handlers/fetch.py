"""Fetch (key 1): long-poll reads served straight from segment files.

The first read happens at once; if fewer than ``min_bytes`` are available the
request parks on its partitions and is answered the moment appends bring
enough bytes, or when ``max_wait_ms`` runs out -- whichever comes first.
Fetch sessions (KIP-227, fetch_sessions.py): a request at session epoch 0
opens one, later ones name only changed partitions and get answered only the
partitions with news; a request at epoch -1 is sessionless (session id 0).
An incremental fetch reads only the partitions it names and those changed
since its session last read them, and its long poll parks once for the whole
session, so an idle session costs the same at 10 or 10,000 partitions.
From v13 a client names topics by id; the router hands this handler their
names (topic_ids.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from samsa.errors import ErrorCode, KafkaError
from samsa.raft.rpc import wire
from samsa.replication.leader.fetch_responses import REMOTE_READ, fetch_error
from samsa.replication.replica_manager import FetchWaiter
from samsa.replication.tiering import remote_reads
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.fetch_sessions.cache import FINAL_EPOCH, FetchContext
from samsa.server.handlers.quorum import handle_raft_request

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi
    from samsa.server.observability.metrics import BrokerMetrics

API_KEY = 1
READ_COMMITTED = 1


def register(router: Router, broker: BrokerApi, listener: str) -> None:
    raft = broker.raft_on(listener)
    router.register(API_KEY, lambda ctx, req: handle_fetch(broker, raft, ctx, req))


def handle_fetch(broker: BrokerApi, raft: Any, ctx: RequestContext, req: Body) -> Body | Any:
    version = ctx.version
    if wire.is_metadata_fetch(version, req):
        if raft is None:
            return wire.error_response(
                API_KEY, version, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "not a controller listener"
            )
        return handle_raft_request(raft, ctx, API_KEY, req)
    replica_id = _replica_id(req)
    session = _session_context(broker, req, version, replica_id)
    if isinstance(session, ErrorCode):
        return {"throttle_time_ms": 0, "error_code": session, "session_id": 0, "responses": []}
    if session.incremental:
        req = {**req, "topics": session.topics}
    if broker.metrics is not None and replica_id < 0:  # replication is no consumer's progress
        _count_positions(broker.metrics, ctx, req)
    remote: list[RemotePart] = []
    responses, total = read_partitions(broker, req, remote=remote)
    if remote:  # below a tiered log's local start: the remote tier answers at once
        return _with_remote_reads(broker, session, responses, remote, req)
    max_wait = req["max_wait_ms"]
    if total >= req["min_bytes"] or max_wait <= 0 or total < 0:
        return _response(broker, session, responses)
    keys = session.partition_keys()
    if replica_id >= 0 and broker.replicas.follower_must_refetch(replica_id, keys, max_wait):
        return _response(broker, session, responses)
    return _wait_and_read(broker, session, req, total, replica_id)


def _session_context(
    broker: BrokerApi, req: Body, version: int, replica_id: int
) -> FetchContext | ErrorCode:
    """The request's fetch session; before v7 there are none (sessionless)."""
    if version < 7:
        req = {**req, "session_id": 0, "session_epoch": FINAL_EPOCH}
    return broker.fetch_sessions.new_context(
        req, wall_ms(), privileged=replica_id >= 0, replica_id=replica_id
    )


def _count_positions(metrics: BrokerMetrics, ctx: RequestContext, req: Body) -> None:
    connection = ctx.connection
    for topic in req["topics"]:
        name = topic["topic"]
        for preq in topic["partitions"]:
            metrics.on_fetch_position(connection, name, preq["partition"], preq["fetch_offset"])


async def _wait_and_read(
    broker: BrokerApi,
    session: FetchContext,
    req: Body,
    available: int,
    replica_id: int,
) -> Body:
    """Park until enough bytes arrive or the wait runs out, then read again: a
    session reads again only what it read first and what changed meanwhile."""
    waiter = FetchWaiter(req["min_bytes"] - available, replica_id=replica_id)
    keys = None if session.park(waiter) else list(session.partition_keys())
    if keys is not None:
        broker.replicas.park(keys, waiter)
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiter.future), req["max_wait_ms"] / 1000)
    finally:
        if keys is None:
            session.unpark(waiter)
        else:
            broker.replicas.unpark(keys, waiter)
    req = {**req, "topics": session.reread_topics()}
    responses, _ = read_partitions(broker, req, update_fetch_state=False)
    return _response(broker, session, responses)


def _response(broker: BrokerApi, session: FetchContext, responses: list[dict[str, Any]]) -> Body:
    metrics = broker.metrics
    if metrics is not None:
        for topic in responses:
            size = sum(len(p["records"]) for p in topic["partitions"] if p.get("records"))
            if size:
                metrics.on_fetched(topic["topic"], size)
    session_id, responses = session.finish(responses, wall_ms())
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": session_id,
        "responses": responses,
    }


def _replica_id(req: Body) -> int:
    state = req.get("replica_state")
    if state:
        return int(state.get("replica_id", -1))
    return int(req.get("replica_id", -1))


def read_partitions(
    broker: BrokerApi,
    req: Body,
    *,
    update_fetch_state: bool = True,
    remote: list[RemotePart] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Read every requested partition; returns the responses and the bytes found
    (-1 when a partition has an error or a follower must truncate, so the
    caller answers without waiting).

    Consumers read below the high watermark; followers (``replica_id`` >= 0) up
    to the log end, and their fetch offsets move the high watermark and the ISR
    (``update_fetch_state``: the first read of a request, not the re-read after
    a long poll).  Entries below a tiered log's local start come back without
    records; ``remote`` collects them for ``_with_remote_reads``."""
    remaining = req.get("max_bytes", 0x7FFFFFFF)
    read_committed = req.get("isolation_level", 0) == READ_COMMITTED
    replica_id = _replica_id(req)
    replicas = broker.replicas
    now = wall_ms()
    total = 0
    stop_waiting = False
    first_data = True
    responses = []
    for topic in req["topics"]:
        name = topic["topic"]
        parts = []
        for preq in topic["partitions"]:
            entry = replicas.read_fetch_partition(
                name,
                preq,
                replica_id=replica_id,
                max_bytes=min(preq["partition_max_bytes"], max(remaining, 0)),
                min_one=first_data,
                now_ms=now,
                update_fetch_state=update_fetch_state,
                read_committed=read_committed,
            )
            if entry["error_code"] or entry.get("diverging_epoch"):
                stop_waiting = True
            remote_offset = entry.pop(REMOTE_READ, None)
            if remote_offset is not None and remote is not None:
                remote.append(RemotePart(name, entry, remote_offset, preq, first_data))
            records = entry.get("records")
            size = len(records) if records else 0
            if size:
                first_data = False
                remaining -= size
                total += size
            parts.append(entry)
        responses.append({"topic": name, "partitions": parts})
    return responses, (-1 if stop_waiting and total == 0 else total)


class RemotePart(NamedTuple):
    """A partition of a fetch that the remote tier answers."""

    topic: str
    entry: dict[str, Any]
    fetch_offset: int
    request: dict[str, Any]
    min_one: bool


async def _with_remote_reads(
    broker: BrokerApi,
    session: FetchContext,
    responses: list[dict[str, Any]],
    remote: list[RemotePart],
    req: Body,
) -> Body:
    """Fill the entries below their log's local start from the remote tier
    (all at once, each bounded by remote.fetch.max.wait.ms), then answer."""
    read_committed = req.get("isolation_level", 0) == READ_COMMITTED
    max_bytes = req.get("max_bytes", 0x7FFFFFFF)
    await asyncio.gather(
        *(_read_remote(broker, part, max_bytes, read_committed) for part in remote)
    )
    return _response(broker, session, responses)


async def _read_remote(
    broker: BrokerApi, part: RemotePart, max_bytes: int, read_committed: bool
) -> None:
    index = part.request["partition"]
    tiering = broker.replicas.tiering
    partition = broker.replicas.get(part.topic, index)
    try:
        if tiering is None or partition is None:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, "tiered storage is off here")
        read = await remote_reads.fetch(
            tiering,
            partition,
            part.fetch_offset,
            min(part.request["partition_max_bytes"], max_bytes),
            min_one=part.min_one,
            read_committed=read_committed,
        )
    except KafkaError as exc:
        part.entry.update(
            fetch_error(
                index,
                exc.code,
                partition,
                with_offsets=exc.code is ErrorCode.OFFSET_OUT_OF_RANGE,
            )
        )
        return
    part.entry["records"] = read.records
    if read_committed:
        part.entry["aborted_transactions"] = [
            {"producer_id": t.producer_id, "first_offset": t.first_offset}
            for t in read.aborted or ()
        ]


def wall_ms() -> int:
    return time.time_ns() // 1_000_000
