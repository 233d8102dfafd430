"""Metadata (3), DescribeCluster (60) and FindCoordinator (10): where things are.

Everything comes from the metadata image: the brokers that are registered and
unfenced (with their address on the listener the request came in on, as Kafka
answers), each partition's leader, leader epoch, replicas, ISR and offline
replicas.  A partition without a leader is reported with LEADER_NOT_AVAILABLE
so clients wait for the election instead of failing.  ``controller_id`` is this
broker: in KRaft clients cannot reach the controllers, and a broker forwards
what needs the controller (Kafka's brokers answer the same way).
Authorized-operations fields carry INT32_MIN when they were not asked for, and
each resource type's own operations when they were (``authorized_operations``).
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, Any

from samsa.controller.partitions.topic_control import validate_topic_name
from samsa.coordinator.share.state import SHARE_STATE_TOPIC, state_partition
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.reusable_body import ReusableBody
from samsa.server.access.authorized_operations import (
    AUTHORIZED_OPS_UNSET,
    cluster_operations,
    topic_operations,
)
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.handlers.partition_entries import PartitionEntries

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

METADATA = 3
FIND_COORDINATOR = 10
DESCRIBE_CLUSTER = 60
KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1
KEY_TYPE_SHARE = 2
SHARE_KEY_VERSION = 6
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
ZERO_UUID = b"\x00" * 16


def register(router: Router, broker: BrokerApi, listener: str) -> None:
    entries = PartitionEntries()
    router.register(METADATA, lambda ctx, req: handle_metadata(broker, listener, ctx, req, entries))
    router.register(
        DESCRIBE_CLUSTER, lambda ctx, req: handle_describe_cluster(broker, listener, ctx, req)
    )
    router.register(
        FIND_COORDINATOR, lambda ctx, req: handle_find_coordinator(broker, listener, ctx, req)
    )


def broker_entries(
    broker: BrokerApi, listener: str, *, include_fenced: bool = False
) -> list[dict[str, Any]]:
    """Unfenced brokers (all, with ``include_fenced``) reachable on ``listener``,
    sorted by id."""
    out = []
    for registration in sorted(broker.image.brokers.values(), key=lambda b: b.id):
        if registration.fenced and not include_fenced:
            continue
        endpoint = registration.listener(listener)
        if endpoint is None:
            continue
        out.append(
            {
                "node_id": registration.id,
                "host": endpoint.host,
                "port": endpoint.port,
                "rack": registration.rack,
                "is_fenced": registration.fenced,
            }
        )
    return out


def handle_metadata(
    broker: BrokerApi,
    listener: str,
    ctx: RequestContext,
    req: Body,
    entries: PartitionEntries,
) -> Any:
    version = ctx.version
    requested = req.get("topics")
    if requested is None or (version == 0 and not requested):
        names: list[str | None] = list(sorted(broker.image.topics))
        auto_create = False
    else:
        names = [t.get("name") for t in requested]
        if version >= 10:
            by_id = broker.image.topics_by_id
            names = [
                n
                if n is not None
                else getattr(by_id.get(t.get("topic_id") or ZERO_UUID), "name", None)
                for n, t in zip(names, requested, strict=True)
            ]
        auto_create = broker.config["auto.create.topics.enable"] and (
            version < 4 or req.get("allow_auto_topic_creation", True)
        )
    include_ops = req.get("include_topic_authorized_operations", False)
    missing = [
        n
        for n in names
        if n is not None
        and n not in broker.image.topics
        and auto_create
        and n not in INTERNAL_TOPICS
        and _valid_name(n)
    ]
    if missing:
        return _create_then_describe(
            broker, listener, ctx, req, names, missing, include_ops, entries
        )
    body = _response(broker, listener, req, names, include_ops, {}, entries)
    shape = (
        version,
        listener,
        tuple(names),
        include_ops,
        bool(req.get("include_cluster_authorized_operations")),
    )
    return ReusableBody(body, entries.slot(broker.image, shape))


def _valid_name(name: str) -> bool:
    try:
        validate_topic_name(name)
    except KafkaError:
        return False
    return True


async def _create_then_describe(
    broker: BrokerApi,
    listener: str,
    ctx: RequestContext,
    req: Body,
    names: list[str | None],
    missing: list[str],
    include_ops: bool,
    entries: PartitionEntries,
) -> Body:
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": -1,
                "replication_factor": -1,
                "assignments": [],
                "configs": [],
            }
            for name in dict.fromkeys(missing)
        ],
        "timeout_ms": 30000,
        "validate_only": False,
    }
    errors: dict[str, int] = {}
    try:
        response = await broker.forward(19, 7, body)
    except KafkaError as exc:
        errors = {name: exc.code for name in missing}
    else:
        for topic in response["topics"]:
            code = topic["error_code"]
            if code and code != ErrorCode.TOPIC_ALREADY_EXISTS:
                errors[topic["name"]] = code
            elif topic["name"] not in broker.image.topics:
                # Created, but this broker has not applied the record yet.
                errors[topic["name"]] = ErrorCode.LEADER_NOT_AVAILABLE
    return _response(broker, listener, req, names, include_ops, errors, entries)


def _response(
    broker: BrokerApi,
    listener: str,
    req: Body,
    names: list[str | None],
    include_ops: bool,
    errors: dict[str, int],
    entries: PartitionEntries,
) -> Body:
    topics = [_describe_topic(broker, name, include_ops, errors, entries) for name in names]
    return {
        "throttle_time_ms": 0,
        "brokers": broker_entries(broker, listener),
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "topics": topics,
        "cluster_authorized_operations": cluster_operations(
            bool(req.get("include_cluster_authorized_operations"))
        ),
    }


def _describe_topic(
    broker: BrokerApi,
    name: str | None,
    include_ops: bool,
    errors: dict[str, int],
    entries: PartitionEntries,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "error_code": 0,
        "name": name,
        "topic_id": ZERO_UUID,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": [],
        "topic_authorized_operations": topic_operations(include_ops),
    }
    if name is None:
        entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID
        return entry
    if name in errors:
        entry["error_code"] = errors[name]
        return entry
    image = broker.image
    topic = image.topics.get(name)
    if topic is None:
        entry["error_code"] = (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if _valid_name(name)
            else ErrorCode.INVALID_TOPIC_EXCEPTION
        )
        return entry
    entry["topic_id"] = topic.topic_id
    entry["partitions"] = entries.of(image, topic)
    return entry


def handle_describe_cluster(
    broker: BrokerApi, listener: str, ctx: RequestContext, req: Body
) -> Body:
    endpoint_type = req.get("endpoint_type", 1)
    if endpoint_type != 1:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            "error_message": "only broker endpoints are served",
            "endpoint_type": endpoint_type,
            "cluster_id": broker.cluster_id,
            "controller_id": -1,
            "brokers": [],
            "cluster_authorized_operations": AUTHORIZED_OPS_UNSET,
        }
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "endpoint_type": 1,
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "brokers": [
            {
                "broker_id": b["node_id"],
                "host": b["host"],
                "port": b["port"],
                "rack": b["rack"],
                "is_fenced": b["is_fenced"],
            }
            for b in broker_entries(
                broker, listener, include_fenced=bool(req.get("include_fenced_brokers"))
            )
        ],
        "cluster_authorized_operations": cluster_operations(
            bool(req.get("include_cluster_authorized_operations"))
        ),
    }


def _share_coordinator(broker: BrokerApi, key: str) -> int | tuple[ErrorCode, str, None] | None:
    """The leader of the ``__share_group_state`` partition holding the share
    partition ``groupId:topicId:partition`` (FindCoordinator v6, KIP-932); the
    topic is created on first use, COORDINATOR_NOT_AVAILABLE meanwhile."""
    group_id, _, rest = key.rpartition(":")
    group_id, _, topic = group_id.rpartition(":")
    try:
        topic_id = base64.urlsafe_b64decode(topic + "=" * (-len(topic) % 4))
        partition = int(rest)
    except ValueError:
        topic_id, partition = b"", -1
    if not group_id or len(topic_id) != 16 or partition < 0:
        return ErrorCode.INVALID_REQUEST, f"{key!r} is not groupId:topicId:partition", None
    state_topic = broker.image.topics.get(SHARE_STATE_TOPIC)
    manager = broker.share_partitions
    if state_topic is None:
        if manager is not None:
            broker.track(asyncio.ensure_future(manager.persister.coordinator()))
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, "the share coordinator is starting", None
    index = state_partition(group_id, topic_id, partition, len(state_topic.partitions))
    registration = state_topic.partitions.get(index)
    return None if registration is None or registration.leader < 0 else registration.leader


def _coordinator(
    broker: BrokerApi, listener: str, key: str, key_type: int, version: int
) -> tuple[ErrorCode, str | None, dict[str, Any] | None]:
    if key_type == KEY_TYPE_TRANSACTION:
        if broker.ensure_transaction_coordinator() is not None:
            # Kafka answers this while __transaction_state is created; every
            # transactional client retries it (aiokafka does not retry LOAD_IN_PROGRESS).
            return (
                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                "the transaction coordinator is loading",
                None,
            )
        node = broker.transaction_coordinator_node(key)
    elif key_type == KEY_TYPE_GROUP:
        # Kafka names the leader of the group's __consumer_offsets partition from
        # its metadata; only while the topic is being created is there no answer.
        # This node's own coordinator loading is no reason to send clients away.
        error = broker.ensure_group_coordinator()
        node = broker.groups_coordinator_node(key)
        if error is not None and node is None:
            return error, "the group coordinator is loading", None
    elif key_type == KEY_TYPE_SHARE and version >= SHARE_KEY_VERSION:
        found = _share_coordinator(broker, key)
        if isinstance(found, tuple):
            return found
        node = found
    else:
        return ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}", None
    if node is None:
        return (
            ErrorCode.COORDINATOR_NOT_AVAILABLE,
            "the coordinator's partition has no leader",
            None,
        )
    for entry in broker_entries(broker, listener):
        if entry["node_id"] == node:
            return ErrorCode.NONE, None, entry
    return ErrorCode.COORDINATOR_NOT_AVAILABLE, f"broker {node} is not reachable", None


def handle_find_coordinator(
    broker: BrokerApi, listener: str, ctx: RequestContext, req: Body
) -> Body:
    key_type = req.get("key_type", 0)
    if ctx.version >= 4:
        coordinators = []
        for key in req.get("coordinator_keys", []):
            code, message, node = _coordinator(broker, listener, key, key_type, ctx.version)
            coordinators.append(
                {
                    "key": key,
                    "node_id": node["node_id"] if node else -1,
                    "host": node["host"] if node else "",
                    "port": node["port"] if node else -1,
                    "error_code": code,
                    "error_message": message,
                }
            )
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    code, message, node = _coordinator(broker, listener, req.get("key", ""), key_type, ctx.version)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "node_id": node["node_id"] if node else -1,
        "host": node["host"] if node else "",
        "port": node["port"] if node else -1,
    }
