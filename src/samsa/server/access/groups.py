"""Group checks (Kafka's KafkaApis): READ to join, sync, heartbeat, leave and
commit; DESCRIBE to fetch offsets, describe and find the coordinator; DELETE
to delete groups and offsets; topics READ (commit) or DESCRIBE (fetch).
Streams groups also need DESCRIBE on every topic of their topology, to
heartbeat (TOPIC_AUTHORIZATION_FAILED) and to be described (that group only);
CREATE on the internal topics is checked where they are created
(``server/coordinators/streams_topics.py``)."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.authorized_operations import GROUP_OPERATIONS, bit_field
from samsa.server.access.base import (
    GROUP,
    TOPIC,
    TRANSACTIONAL_ID,
    append_entries,
    can,
    can_cluster,
    names_check,
    one_check,
    then,
    visible_only,
    whole,
)
from samsa.server.access.base import (
    guard as guard_one,
)
from samsa.server.access.topics import PLAIN, denied_entry, topic_check
from samsa.server.connections.router import Body, Handler, RequestContext, Router

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 8, 9, 10
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE = 15, 16, 42, 47
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 68, 69
STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE, STREAMS_TOPOLOGY_DESCRIPTION_UPDATE = 88, 89, 93
_Op = AclOperation
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED

_commit_topics = topic_check(_Op.READ)
_delete_offsets_topics = topic_check(_Op.READ)


def check_offset_commit(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    if not can(auth, ctx, _Op.READ, GROUP, req["group_id"]):
        topics = [denied_entry(PLAIN, t, t["name"], GROUP_DENIED) for t in req["topics"]]
        return {"throttle_time_ms": 0, "topics": topics}
    return _commit_topics(auth, ctx, req, inner)


def check_offset_delete(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    if not can(auth, ctx, _Op.DELETE, GROUP, req["group_id"]):
        return whole(GROUP_DENIED, topics=[])
    return _delete_offsets_topics(auth, ctx, req, inner)


def _hide_topics(
    auth: StandardAuthorizer, ctx: RequestContext, topics: list[Body], named: bool
) -> list[Body]:
    """OffsetFetch: undescribable topics fail when named, vanish when not."""
    out = []
    for topic in topics:
        if can(auth, ctx, _Op.DESCRIBE, TOPIC, topic["name"]):
            out.append(topic)
        elif named:
            for partition in topic["partitions"]:
                partition.update(error_code=TOPIC_DENIED, committed_offset=-1, metadata=None)
            out.append(topic)
    return out


def check_offset_fetch(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    if ctx.version < 8:
        if not can(auth, ctx, _Op.DESCRIBE, GROUP, req["group_id"]):
            return whole(GROUP_DENIED, topics=[])
        named = req.get("topics") is not None

        def finish_one(body: Body | None) -> Body | None:
            if body is not None:
                body["topics"] = _hide_topics(auth, ctx, body.get("topics") or [], named)
            return body

        return then(inner(ctx, req), finish_one)
    groups = req.get("groups") or []
    denied = [g for g in groups if not can(auth, ctx, _Op.DESCRIBE, GROUP, g["group_id"])]
    kept = [g for g in groups if g not in denied]
    named_by_group = {g["group_id"]: g.get("topics") is not None for g in groups}
    refused = [
        {"group_id": g["group_id"], "topics": [], "error_code": GROUP_DENIED} for g in denied
    ]

    def finish(body: Body | None) -> Body | None:
        if body is None:
            return None
        for group in body.get("groups") or []:
            group["topics"] = _hide_topics(
                auth, ctx, group.get("topics") or [], named_by_group.get(group["group_id"], False)
            )
        body["groups"] = list(body.get("groups") or []) + refused
        return body

    return then(inner(ctx, {**req, "groups": kept} if denied else req), finish)


def check_find_coordinator(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    transactional = req.get("key_type", 0) == 1
    resource = TRANSACTIONAL_ID if transactional else GROUP
    code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED if transactional else GROUP_DENIED
    if ctx.version < 4:
        if not can(auth, ctx, _Op.DESCRIBE, resource, req.get("key", "")):
            return whole(code, node_id=-1, host="", port=-1)
        return inner(ctx, req)
    keys = req.get("coordinator_keys") or []
    denied = [k for k in keys if not can(auth, ctx, _Op.DESCRIBE, resource, k)]
    if not denied:
        return inner(ctx, req)
    entries = [
        {"key": k, "node_id": -1, "host": "", "port": -1, "error_code": code, "error_message": None}
        for k in denied
    ]

    kept = [k for k in keys if k not in denied]
    return append_entries(inner(ctx, {**req, "coordinator_keys": kept}), "coordinators", entries)


def check_list_groups(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    if can_cluster(auth, ctx, _Op.DESCRIBE):
        return inner(ctx, req)
    return visible_only(auth, ctx, inner(ctx, req), "groups", "group_id", GROUP)


def check_streams_heartbeat(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    """READ on the group, then (Kafka's order) the topology's topic names, then DESCRIBE
    on every topic the joining member's topology names."""
    from samsa.coordinator.streams.heartbeat_request import error_response, refused_topic_names
    from samsa.coordinator.streams.topology import topic_names_of_request

    if not can(auth, ctx, _Op.READ, GROUP, req["group_id"]):
        return error_response(GROUP_DENIED, None)
    refused = refused_topic_names(req)
    if refused is not None:
        return error_response(refused.code, refused.message)
    names = set(topic_names_of_request(req.get("topology")))
    if any(not can(auth, ctx, _Op.DESCRIBE, TOPIC, n) for n in names):
        return error_response(TOPIC_DENIED, None)
    return inner(ctx, req)


def check_streams_describe(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    """A described streams group whose topology names a topic the caller may not
    DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED instead (Kafka's message)."""

    def finish(body: Body | None) -> Body | None:
        for group in (body or {}).get("groups") or []:
            topology = group.get("topology")
            if group.get("error_code") or topology is None:
                continue
            names = {
                name
                for sub in topology.get("subtopologies") or ()
                for name in [
                    *sub["source_topics"],
                    *sub["repartition_sink_topics"],
                    *(t["name"] for t in sub["state_changelog_topics"]),
                    *(t["name"] for t in sub["repartition_source_topics"]),
                ]
            }
            if any(not can(auth, ctx, _Op.DESCRIBE, TOPIC, n) for n in names):
                group.update(
                    error_code=TOPIC_DENIED,
                    error_message="The described group uses topics that the client is not"
                    " authorized to describe.",
                    members=[],
                    topology=None,
                )
        return body

    return then(inner(ctx, req), finish)


def with_group_operations(check: Any) -> Any:
    """DescribeGroups / ConsumerGroupDescribe: the authorized operations the
    authorizer grants, when the client asked for them."""

    def wrapped(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        result = check(auth, ctx, req, inner)
        if not req.get("include_authorized_operations"):
            return result

        def finish(body: Body | None) -> Body | None:
            for group in (body or {}).get("groups") or []:
                if not group.get("error_code"):
                    ops = GROUP_OPERATIONS
                    allowed = frozenset(
                        op for op in ops if can(auth, ctx, op, GROUP, group["group_id"])
                    )
                    group["authorized_operations"] = bit_field(allowed)
            return body

        return then(result, finish)

    return wrapped


def guard(router: Router, auth: StandardAuthorizer, broker: Any) -> None:
    for key in (JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, CONSUMER_GROUP_HEARTBEAT):
        guard_one(router, key, auth, one_check(_Op.READ, GROUP, "group_id", GROUP_DENIED))
    guard_one(router, OFFSET_COMMIT, auth, check_offset_commit)
    guard_one(router, OFFSET_FETCH, auth, check_offset_fetch)
    guard_one(router, OFFSET_DELETE, auth, check_offset_delete)
    guard_one(router, FIND_COORDINATOR, auth, check_find_coordinator)
    guard_one(router, LIST_GROUPS, auth, check_list_groups)
    describe = names_check(_Op.DESCRIBE, GROUP, GROUP_DENIED, "groups", "groups", "group_id")
    guard_one(router, DESCRIBE_GROUPS, auth, with_group_operations(describe))
    consumer_describe = names_check(
        _Op.DESCRIBE, GROUP, GROUP_DENIED, "group_ids", "groups", "group_id"
    )
    guard_one(router, CONSUMER_GROUP_DESCRIBE, auth, with_group_operations(consumer_describe))
    guard_one(router, STREAMS_GROUP_HEARTBEAT, auth, check_streams_heartbeat)
    guard_one(
        router,
        STREAMS_TOPOLOGY_DESCRIPTION_UPDATE,
        auth,
        one_check(_Op.READ, GROUP, "group_id", GROUP_DENIED),
    )
    streams_describe = names_check(
        _Op.DESCRIBE, GROUP, GROUP_DENIED, "group_ids", "groups", "group_id"
    )

    def streams_describe_checks(
        auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
    ) -> Any:
        return streams_describe(
            auth, ctx, req, lambda c, r: check_streams_describe(auth, c, r, inner)
        )

    guard_one(router, STREAMS_GROUP_DESCRIBE, auth, with_group_operations(streams_describe_checks))
    guard_one(
        router,
        DELETE_GROUPS,
        auth,
        names_check(_Op.DELETE, GROUP, GROUP_DENIED, "groups_names", "results", "group_id"),
    )
