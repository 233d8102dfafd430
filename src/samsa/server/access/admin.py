"""Admin checks (Kafka's KafkaApis and ControllerApis): CREATE on the cluster
or the topic to create it, DELETE to delete it, ALTER to add partitions,
DESCRIBE_CONFIGS / ALTER_CONFIGS on the resource (the cluster for broker
configs), and the cluster's ALTER or DESCRIBE for elections, reassignments and
log dirs (a refused AlterReplicaLogDirs answers every partition it names).  DescribeCluster's authorized operations come from the authorizer."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.authorized_operations import CLUSTER_OPERATIONS, bit_field
from samsa.server.access.base import (
    CLUSTER,
    CLUSTER_NAME,
    GROUP,
    TOPIC,
    append_entries,
    can,
    can_cluster,
    cluster_check,
    names_check,
    then,
)
from samsa.server.access.base import (
    guard as guard_one,
)
from samsa.server.connections.router import Body, Handler, RequestContext, Router

CREATE_TOPICS, DELETE_TOPICS, DESCRIBE_CONFIGS, ALTER_CONFIGS = 19, 20, 32, 33
ALTER_REPLICA_LOG_DIRS = 34
DESCRIBE_LOG_DIRS, CREATE_PARTITIONS, ELECT_LEADERS = 35, 37, 43
INCREMENTAL_ALTER_CONFIGS = 44
ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46
DESCRIBE_CLUSTER = 60
DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_USER_SCRAM_CREDENTIALS = 50, 51
DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS = 48, 49
LIST_CONFIG_RESOURCES = 74
UPDATE_FEATURES, UNREGISTER_CONTROLLER = 57, 94
_Op = AclOperation
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED

# ConfigResource.Type -> (ACL resource type, or None for the cluster; error)
_CONFIG_RESOURCES: dict[int, tuple[ResourceType | None, int]] = {
    2: (TOPIC, TOPIC_DENIED),
    4: (None, CLUSTER_DENIED),
    8: (None, CLUSTER_DENIED),
    16: (None, CLUSTER_DENIED),
    32: (GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED),
}


def entries_check(
    operation: AclOperation,
    request_field: str,
    response_field: str,
    denied_fields: dict[str, Any],
    *,
    cluster_operation: AclOperation | None = None,
) -> Any:
    """Topics listed as ``{"name": ...}`` entries, answered one entry each."""

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        if cluster_operation is not None and can_cluster(auth, ctx, cluster_operation):
            return inner(ctx, req)
        entries = req.get(request_field) or []
        denied = [e for e in entries if not can(auth, ctx, operation, TOPIC, e["name"])]
        if not denied:
            return inner(ctx, req)
        refused = [
            {
                "name": e["name"],
                "error_code": TOPIC_DENIED,
                "error_message": "Topic authorization failed.",
                **denied_fields,
            }
            for e in denied
        ]
        kept = [e for e in entries if e not in denied]
        return append_entries(inner(ctx, {**req, request_field: kept}), response_field, refused)

    return check


def delete_topics_check(broker: Any) -> Any:
    by_names = names_check(_Op.DELETE, TOPIC, TOPIC_DENIED, "topic_names", "responses", "name")

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        if ctx.version < 6:
            return by_names(auth, ctx, req, inner)
        image = broker.image
        entries = req.get("topics") or []
        denied = []
        for entry in entries:
            name = entry.get("name")
            if name is None:
                topic = image.topics_by_id.get(bytes(entry["topic_id"]))
                name = topic.name if topic is not None else None
            if name is not None and not can(auth, ctx, _Op.DELETE, TOPIC, name):
                denied.append(entry)
        if not denied:
            return inner(ctx, req)
        refused = [
            {
                "name": e.get("name"),
                "topic_id": e.get("topic_id") or b"\x00" * 16,
                "error_code": TOPIC_DENIED,
                "error_message": "Topic authorization failed.",
            }
            for e in denied
        ]

        kept = [e for e in entries if e not in denied]
        return append_entries(inner(ctx, {**req, "topics": kept}), "responses", refused)

    return check


def configs_check(operation: AclOperation, response_field: str) -> Any:
    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        resources = req.get("resources") or []
        denied: list[tuple[Body, int]] = []
        for resource in resources:
            kind, code = _CONFIG_RESOURCES.get(resource["resource_type"], (None, CLUSTER_DENIED))
            if kind is None:
                ok = can(auth, ctx, operation, CLUSTER, CLUSTER_NAME)
            else:
                ok = can(auth, ctx, operation, kind, resource["resource_name"])
            if not ok:
                denied.append((resource, code))
        if not denied:
            return inner(ctx, req)
        refused = [
            {
                "resource_type": r["resource_type"],
                "resource_name": r["resource_name"],
                "error_code": code,
                "error_message": "Authorization failed.",
                "configs": [],
            }
            for r, code in denied
        ]
        denied_resources = [r for r, _ in denied]
        kept = [r for r in resources if r not in denied_resources]
        return append_entries(inner(ctx, {**req, "resources": kept}), response_field, refused)

    return check


def check_describe_cluster(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    result = inner(ctx, req)
    if not req.get("include_cluster_authorized_operations"):
        return result

    def finish(body: Body | None) -> Body | None:
        if body is not None:
            allowed = frozenset(op for op in CLUSTER_OPERATIONS if can_cluster(auth, ctx, op))
            body["cluster_authorized_operations"] = bit_field(allowed)
        return body

    return then(result, finish)


def alter_scram_check(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    """AlterUserScramCredentials needs the cluster's ALTER; refused, every user
    named is answered CLUSTER_AUTHORIZATION_FAILED (the response has no
    top-level error)."""
    if can_cluster(auth, ctx, _Op.ALTER):
        return inner(ctx, req)
    users = dict.fromkeys(
        entry["name"] for field in ("deletions", "upsertions") for entry in req.get(field) or []
    )
    results = [
        {
            "user": user,
            "error_code": CLUSTER_DENIED,
            "error_message": "Cluster authorization failed.",
        }
        for user in users
    ]
    return {"throttle_time_ms": 0, "results": results}


def alter_quotas_check(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    """AlterClientQuotas needs the cluster's ALTER_CONFIGS; refused, each entry
    is answered CLUSTER_AUTHORIZATION_FAILED (no top-level error)."""
    if can_cluster(auth, ctx, _Op.ALTER_CONFIGS):
        return inner(ctx, req)
    entries = [
        {
            "error_code": CLUSTER_DENIED,
            "error_message": "Cluster authorization failed.",
            "entity": entry["entity"],
        }
        for entry in req.get("entries") or []
    ]
    return {"throttle_time_ms": 0, "entries": entries}


def alter_log_dirs_check(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    """AlterReplicaLogDirs needs the cluster's ALTER; refused, every partition
    named is answered CLUSTER_AUTHORIZATION_FAILED, one topic entry per dir and
    topic (Kafka's ``getErrorResponse``; the response has no top-level error)."""
    if can_cluster(auth, ctx, _Op.ALTER):
        return inner(ctx, req)
    results = [
        {
            "topic_name": topic["name"],
            "partitions": [
                {"partition_index": p, "error_code": CLUSTER_DENIED}
                for p in topic["partitions"] or []
            ],
        }
        for entry in req.get("dirs") or []
        for topic in entry["topics"] or []
    ]
    return {"throttle_time_ms": 0, "results": results}


def guard(router: Router, auth: StandardAuthorizer, broker: Any) -> None:
    guard_one(
        router,
        CREATE_TOPICS,
        auth,
        entries_check(
            _Op.CREATE,
            "topics",
            "topics",
            {
                "topic_id": b"\x00" * 16,
                "num_partitions": -1,
                "replication_factor": -1,
                "configs": None,
            },
            cluster_operation=_Op.CREATE,
        ),
    )
    guard_one(router, DELETE_TOPICS, auth, delete_topics_check(broker))
    guard_one(router, CREATE_PARTITIONS, auth, entries_check(_Op.ALTER, "topics", "results", {}))
    guard_one(router, DESCRIBE_CONFIGS, auth, configs_check(_Op.DESCRIBE_CONFIGS, "results"))
    guard_one(router, ALTER_CONFIGS, auth, configs_check(_Op.ALTER_CONFIGS, "responses"))
    guard_one(
        router, INCREMENTAL_ALTER_CONFIGS, auth, configs_check(_Op.ALTER_CONFIGS, "responses")
    )
    guard_one(router, DESCRIBE_LOG_DIRS, auth, cluster_check(_Op.DESCRIBE, CLUSTER_DENIED))
    guard_one(router, ALTER_REPLICA_LOG_DIRS, auth, alter_log_dirs_check)
    for key in (ELECT_LEADERS, ALTER_PARTITION_REASSIGNMENTS):
        guard_one(router, key, auth, cluster_check(_Op.ALTER, CLUSTER_DENIED))
    guard_one(
        router, LIST_PARTITION_REASSIGNMENTS, auth, cluster_check(_Op.DESCRIBE, CLUSTER_DENIED)
    )
    guard_one(router, DESCRIBE_CLUSTER, auth, check_describe_cluster)
    guard_one(
        router,
        DESCRIBE_USER_SCRAM_CREDENTIALS,
        auth,
        cluster_check(_Op.DESCRIBE, CLUSTER_DENIED),
    )
    guard_one(router, ALTER_USER_SCRAM_CREDENTIALS, auth, alter_scram_check)
    guard_one(
        router, DESCRIBE_CLIENT_QUOTAS, auth, cluster_check(_Op.DESCRIBE_CONFIGS, CLUSTER_DENIED)
    )
    guard_one(router, ALTER_CLIENT_QUOTAS, auth, alter_quotas_check)
    guard_one(
        router, LIST_CONFIG_RESOURCES, auth, cluster_check(_Op.DESCRIBE_CONFIGS, CLUSTER_DENIED)
    )
    for key in (UPDATE_FEATURES, UNREGISTER_CONTROLLER):
        guard_one(router, key, auth, cluster_check(_Op.ALTER, CLUSTER_DENIED))
