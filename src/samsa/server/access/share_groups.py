"""Share-group checks (Kafka's KafkaApis for KIP-932): the group's READ to
heartbeat, fetch and acknowledge, READ on every topic fetched or acknowledged,
the group's DESCRIBE / READ / DELETE for describing, altering and deleting its
offsets, and CLUSTER_ACTION for the share-state APIs brokers send each other.

Kafka answers a denied topic of ShareFetch per partition; Samsa refuses the
whole request with TOPIC_AUTHORIZATION_FAILED (a member that may not read one
of its topics is misconfigured, and refusing more never reveals more)."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.base import (
    GROUP,
    TOPIC,
    append_entries,
    can,
    cluster_check,
    names_check,
    one_check,
    whole,
)
from samsa.server.access.base import guard as guard_one
from samsa.server.connections.router import Body, Handler, RequestContext, Router

SHARE_GROUP_HEARTBEAT, SHARE_GROUP_DESCRIBE, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 77, 78, 79
SHARE_STATE_APIS = (83, 84, 85, 86)  # Initialize/Read/Write/DeleteShareGroupState
DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 90, 91, 92
_Op = AclOperation
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


def share_read_check(broker: Any) -> Any:
    """ShareFetch / ShareAcknowledge: the group's READ, then READ on each topic."""

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        if not can(auth, ctx, _Op.READ, GROUP, req.get("group_id") or ""):
            return whole(GROUP_DENIED, error_message="Group authorization failed.")
        topics_by_id = broker.image.topics_by_id
        for entry in req.get("topics") or []:
            topic = topics_by_id.get(bytes(entry["topic_id"]))
            if topic is not None and not can(auth, ctx, _Op.READ, TOPIC, topic.name):
                return whole(TOPIC_DENIED, error_message="Topic authorization failed.")
        return inner(ctx, req)

    return check


def describe_offsets_check(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    groups = req.get("groups") or []
    denied = [g for g in groups if not can(auth, ctx, _Op.DESCRIBE, GROUP, g["group_id"])]
    if not denied:
        return inner(ctx, req)
    refused = [
        {"group_id": g["group_id"], "topics": [], "error_code": GROUP_DENIED} for g in denied
    ]
    kept = [g for g in groups if g not in denied]
    return append_entries(inner(ctx, {**req, "groups": kept}), "groups", refused)


def guard(router: Router, auth: StandardAuthorizer, broker: Any) -> None:
    guard_one(
        router, SHARE_GROUP_HEARTBEAT, auth, one_check(_Op.READ, GROUP, "group_id", GROUP_DENIED)
    )
    guard_one(
        router,
        SHARE_GROUP_DESCRIBE,
        auth,
        names_check(_Op.DESCRIBE, GROUP, GROUP_DENIED, "group_ids", "groups", "group_id"),
    )
    for key in (SHARE_FETCH, SHARE_ACKNOWLEDGE):
        guard_one(router, key, auth, share_read_check(broker))
    for key in SHARE_STATE_APIS:
        guard_one(
            router,
            key,
            auth,
            cluster_check(_Op.CLUSTER_ACTION, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
        )
    guard_one(router, DESCRIBE_OFFSETS, auth, describe_offsets_check)
    guard_one(router, ALTER_OFFSETS, auth, one_check(_Op.READ, GROUP, "group_id", GROUP_DENIED))
    guard_one(router, DELETE_OFFSETS, auth, one_check(_Op.DELETE, GROUP, "group_id", GROUP_DENIED))
