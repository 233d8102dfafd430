"""Per-topic checks of the data-path APIs: Produce, Fetch, ListOffsets,
OffsetForLeaderEpoch, DeleteRecords, DescribeProducers.

The split is the same for all of them: topics the caller may not use leave the
request, and come back in the response with TOPIC_AUTHORIZATION_FAILED on each
of their partitions; a request whose topics are all allowed (the steady state)
goes to the handler untouched.  The per-API differences are field names, held
in a ``TopicShape``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.base import (
    TOPIC,
    TRANSACTIONAL_ID,
    append_entries,
    can,
    can_cluster,
    then,
)
from samsa.server.access.base import (
    guard as guard_one,
)
from samsa.server.connections.router import Body, Handler, HandlerResult, RequestContext, Router

PRODUCE, FETCH, LIST_OFFSETS, DELETE_RECORDS = 0, 1, 2, 21
OFFSET_FOR_LEADER_EPOCH, DESCRIBE_PRODUCERS = 23, 61
_Op = AclOperation


@dataclass(frozen=True, slots=True)
class TopicShape:
    """Where a request and its response keep their topics and partitions."""

    topics: str = "topics"
    name: str = "name"
    partitions: str = "partitions"
    index: str = "partition_index"
    resp_topics: str = "topics"
    resp_name: str = "name"
    resp_partitions: str = "partitions"
    resp_index: str = "partition_index"


PLAIN = TopicShape()
PRODUCE_SHAPE = TopicShape(
    "topic_data",
    "name",
    "partition_data",
    "index",
    "responses",
    "name",
    "partition_responses",
    "index",
)
FETCH_SHAPE = TopicShape("topics", "topic", "partitions", "partition", "responses", "topic")
EPOCH_SHAPE = TopicShape(
    "topics", "topic", "partitions", "partition", "topics", "topic", "partitions", "partition"
)
PRODUCERS_SHAPE = TopicShape(partitions="partition_indexes")


def split_topics(
    req: Body,
    shape: TopicShape,
    allowed: Callable[[str], bool],
    name_of: Callable[[Body], str] | None = None,
) -> tuple[Body, list[tuple[Body, str]]]:
    """(the request with only allowed topics, the denied topic entries and names)."""
    entries = req.get(shape.topics) or []
    denied: list[tuple[Body, str]] = []
    kept: list[Body] = []
    for entry in entries:
        name = name_of(entry) if name_of is not None else entry[shape.name]
        if allowed(name):
            kept.append(entry)
        else:
            denied.append((entry, name))
    if not denied:
        return req, denied
    return {**req, shape.topics: kept}, denied


def denied_entry(shape: TopicShape, entry: Body, name: str, code: int, **extra: Any) -> Body:
    partitions = entry.get(shape.partitions) or []
    indexes = [p if isinstance(p, int) else p[shape.index] for p in partitions]
    return {
        shape.resp_name: name,
        **extra,
        shape.resp_partitions: [
            {shape.resp_index: i, "error_code": code, "error_message": None} for i in indexes
        ],
    }


def merge_denied(result: HandlerResult, shape: TopicShape, denied: list[Body]) -> HandlerResult:
    return append_entries(result, shape.resp_topics, denied)


def topic_check(operation: AclOperation, shape: TopicShape = PLAIN) -> Any:
    op, topic_type = int(operation), int(TOPIC)
    topics_key, name_key = shape.topics, shape.name

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        caller = ctx.caller
        # The steady state (every topic allowed) costs one cached lookup per topic.
        if caller is None:  # no one sent it: every topic refused (fail closed)
            principal, host = "", ""

            def authorize(*_: Any) -> bool:
                return False
        else:
            principal, host, authorize = caller.principal_name, caller.host, auth.authorize
        for entry in req.get(topics_key) or ():
            if not authorize(principal, host, op, topic_type, entry[name_key]):
                break
        else:
            return inner(ctx, req)
        allowed_req, denied = split_topics(
            req, shape, lambda name: authorize(principal, host, op, topic_type, name)
        )
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        return merge_denied(
            inner(ctx, allowed_req),
            shape,
            [denied_entry(shape, entry, name, code) for entry, name in denied],
        )

    return check


def check_produce(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
    transactional_id = req["transactional_id"] if ctx.version >= 3 else None
    if transactional_id is not None and not can(
        auth, ctx, _Op.WRITE, TRANSACTIONAL_ID, transactional_id
    ):
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        shape = PRODUCE_SHAPE
        denied = [denied_entry(shape, t, t["name"], code) for t in req[shape.topics]]
        return merge_denied(inner(ctx, {**req, shape.topics: []}), shape, denied)
    return _produce_topics(auth, ctx, req, inner)


_produce_topics = topic_check(_Op.WRITE, PRODUCE_SHAPE)


def _fetch_replica_id(req: Body) -> int:
    state = req.get("replica_state")
    if state and state.get("replica_id", -1) >= 0:
        return int(state["replica_id"])
    return int(req.get("replica_id", -1))


def fetch_check(broker_image: Callable[[], Any]) -> Any:
    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        by_id = ctx.version >= 13
        image = broker_image()

        def name_of(entry: Body) -> str:
            # v13+ entries come named already (the router's topic-id translator
            # runs first); the id is looked up only where no name is given.
            if not by_id or entry.get("topic"):
                return str(entry.get("topic") or "")
            topic = image.topics_by_id.get(bytes(entry["topic_id"]))
            return topic.name if topic is not None else ""

        if _fetch_replica_id(req) >= 0:
            # A follower (or a Raft voter on a shared listener) fetches for the cluster.
            if can_cluster(auth, ctx, _Op.CLUSTER_ACTION):
                return inner(ctx, req)

            def allowed(name: str) -> bool:
                return False
        else:

            def allowed(name: str) -> bool:
                return can(auth, ctx, _Op.READ, TOPIC, name)

        allowed_req, denied = split_topics(req, FETCH_SHAPE, allowed, name_of)
        result = inner(ctx, allowed_req)
        if req.get("session_epoch", -1) > 0:
            # An incremental fetch also serves partitions the session remembers
            # from earlier requests: refuse those whose READ was revoked since.
            result = then(result, lambda body: _revoke(body, allowed, name_of))
        if not denied:
            return result
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        entries = []
        for entry, name in denied:
            extra = {"topic_id": bytes(entry["topic_id"])} if by_id else {}
            entries.append(
                denied_entry(FETCH_SHAPE, entry, name if not by_id else "", code, **extra)
            )
        return merge_denied(result, FETCH_SHAPE, entries)

    return check


def _revoke(
    body: Body | None, allowed: Callable[[str], bool], name_of: Callable[[Body], str]
) -> Body | None:
    for topic in (body or {}).get("responses") or []:
        if allowed(name_of(topic)):
            continue
        for partition in topic["partitions"]:
            partition.update(
                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                high_watermark=-1,
                records=None,
                aborted_transactions=None,
            )
    return body


def guard(router: Router, auth: StandardAuthorizer, broker: Any) -> None:
    guard_one(router, PRODUCE, auth, check_produce)
    guard_one(router, FETCH, auth, fetch_check(lambda: broker.image))
    guard_one(router, LIST_OFFSETS, auth, topic_check(_Op.DESCRIBE))
    guard_one(router, OFFSET_FOR_LEADER_EPOCH, auth, topic_check(_Op.DESCRIBE, EPOCH_SHAPE))
    guard_one(router, DELETE_RECORDS, auth, topic_check(_Op.DELETE))
    guard_one(router, DESCRIBE_PRODUCERS, auth, topic_check(_Op.READ, PRODUCERS_SHAPE))
