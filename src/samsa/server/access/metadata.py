"""Metadata: topics the caller may not DESCRIBE are hidden from a listing of
all topics and answered TOPIC_AUTHORIZATION_FAILED when named; a topic that
would be auto-created needs CREATE on the cluster or the topic, else it is
refused the same way (Kafka's KafkaApis.handleTopicMetadataRequest).  The
authorized-operations fields come from the authorizer when asked for.

DescribeTopicPartitions follows the same rule (hidden from a listing of all,
refused when named), and always carries each topic's authorized operations.
The check is applied to the page the handler built, so a page may hold fewer
partitions than its limit where topics were hidden from it."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.protocol.schema import ZERO_UUID
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.authorized_operations import (
    CLUSTER_OPERATIONS,
    TOPIC_OPERATIONS,
    bit_field,
)
from samsa.server.access.base import TOPIC, can, can_cluster, then
from samsa.server.access.base import guard as guard_one
from samsa.server.connections.router import Body, Handler, RequestContext, Router

METADATA = 3
DESCRIBE_TOPIC_PARTITIONS = 75
_Op = AclOperation


def metadata_check(broker: Any) -> Any:
    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        requested = req.get("topics")
        refused: list[Body] = []
        if requested is not None:
            auto_create = broker.config["auto.create.topics.enable"] and (
                ctx.version < 4 or req.get("allow_auto_topic_creation", True)
            )
            may_create_any = None
            kept = []
            for entry in requested:
                name = entry.get("name")
                topic_id = ZERO_UUID
                if name is None:
                    # Asked by id (v10+): judged by the name the id has now.
                    topic_id = bytes(entry.get("topic_id") or ZERO_UUID)
                    topic = broker.image.topics_by_id.get(topic_id)
                    if topic is None:
                        kept.append(entry)  # the handler answers UNKNOWN_TOPIC_ID
                        continue
                    if can(auth, ctx, _Op.DESCRIBE, TOPIC, topic.name):
                        kept.append(entry)
                    else:
                        refused.append(_refused(None, topic_id))
                    continue
                ok = can(auth, ctx, _Op.DESCRIBE, TOPIC, name)
                if ok and auto_create and name not in broker.image.topics:
                    if may_create_any is None:
                        may_create_any = can_cluster(auth, ctx, _Op.CREATE)
                    ok = may_create_any or can(auth, ctx, _Op.CREATE, TOPIC, name)
                if ok:
                    kept.append(entry)
                else:
                    refused.append(_refused(name, topic_id))
            if refused:
                req = {**req, "topics": kept}

        def finish(body: Body | None) -> Body | None:
            if body is None:
                return None
            topics = body.get("topics") or []
            if requested is None:
                topics = [t for t in topics if can(auth, ctx, _Op.DESCRIBE, TOPIC, t["name"])]
            if req.get("include_topic_authorized_operations"):
                for topic in topics:
                    if not topic.get("error_code") and topic.get("name"):
                        allowed = frozenset(
                            op
                            for op in TOPIC_OPERATIONS
                            if can(auth, ctx, op, TOPIC, topic["name"])
                        )
                        topic["topic_authorized_operations"] = bit_field(allowed)
            body["topics"] = topics + refused
            if req.get("include_cluster_authorized_operations"):
                allowed = frozenset(op for op in CLUSTER_OPERATIONS if can_cluster(auth, ctx, op))
                body["cluster_authorized_operations"] = bit_field(allowed)
            return body

        return then(inner(ctx, req), finish)

    return check


def _refused(name: str | None, topic_id: bytes) -> Body:
    return {
        "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        "name": name,
        "topic_id": topic_id,
        "is_internal": False,
        "partitions": [],
    }


def check_describe_topic_partitions(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    every = not req.get("topics")

    def finish(body: Body | None) -> Body | None:
        if body is None:
            return None
        kept, refused = [], []
        for topic in body.get("topics") or []:
            name = topic.get("name") or ""
            if topic.get("error_code") or can(auth, ctx, _Op.DESCRIBE, TOPIC, name):
                if not topic.get("error_code"):
                    allowed = frozenset(
                        op for op in TOPIC_OPERATIONS if can(auth, ctx, op, TOPIC, name)
                    )
                    topic["topic_authorized_operations"] = bit_field(allowed)
                kept.append(topic)
            elif not every:
                refused.append(_refused(name, ZERO_UUID))
        body["topics"] = kept + refused
        return body

    return then(inner(ctx, req), finish)


def guard(router: Router, auth: StandardAuthorizer, broker: Any) -> None:
    guard_one(router, METADATA, auth, metadata_check(broker))
    guard_one(router, DESCRIBE_TOPIC_PARTITIONS, auth, check_describe_topic_partitions)
