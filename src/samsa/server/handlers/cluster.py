"""Metadata (3), DescribeCluster (60) and FindCoordinator (10): where things are.

On a single node this broker is the controller, every partition's leader and
every group's coordinator.  Leader epochs are reported as -1 until they exist;
authorized-operations fields carry INT32_MIN when they were not asked for, as
Kafka does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.router import Body, RequestContext, Router
from samsa.server.topic_manager import INTERNAL_TOPICS, validate_topic_name

if TYPE_CHECKING:
    from samsa.server.broker import Broker

METADATA = 3
FIND_COORDINATOR = 10
DESCRIBE_CLUSTER = 60
AUTHORIZED_OPS_UNSET = -(2**31)
ALL_OPERATIONS = 0b1111111111110  # bits 1..12 of Kafka's AclOperation: "everything allowed"
KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1


def register(router: Router, broker: Broker) -> None:
    router.register(METADATA, lambda ctx, req: handle_metadata(broker, ctx, req))
    router.register(DESCRIBE_CLUSTER, lambda ctx, req: handle_describe_cluster(broker, ctx, req))
    router.register(FIND_COORDINATOR, lambda ctx, req: handle_find_coordinator(broker, ctx, req))


def handle_metadata(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    version = ctx.version
    requested = req.get("topics")
    if requested is None or (version == 0 and not requested):
        names = sorted(broker.image.topics)
        auto_create = False
    else:
        names = [t.get("name") for t in requested]
        auto_create = broker.config["auto.create.topics.enable"] and (
            version < 4 or req.get("allow_auto_topic_creation", True)
        )
    include_ops = req.get("include_topic_authorized_operations", False)
    topics = []
    for name in names:
        topics.append(_describe_topic(broker, name, auto_create, include_ops))
    return {
        "throttle_time_ms": 0,
        "brokers": [_broker_entry(broker)],
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "topics": topics,
        "cluster_authorized_operations": ALL_OPERATIONS
        if req.get("include_cluster_authorized_operations")
        else AUTHORIZED_OPS_UNSET,
    }


def _broker_entry(broker: Broker) -> dict[str, Any]:
    return {
        "node_id": broker.node_id,
        "host": broker.advertised_host,
        "port": broker.advertised_port,
        "rack": None,
    }


def _describe_topic(
    broker: Broker, name: str | None, auto_create: bool, include_ops: bool
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "error_code": 0,
        "name": name,
        "topic_id": b"\x00" * 16,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": [],
        "topic_authorized_operations": ALL_OPERATIONS if include_ops else AUTHORIZED_OPS_UNSET,
    }
    if name is None:
        entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID
        return entry
    topic = broker.image.topics.get(name)
    if topic is None:
        try:
            validate_topic_name(name)
        except KafkaError:
            entry["error_code"] = ErrorCode.INVALID_TOPIC_EXCEPTION
            return entry
        if not auto_create or name in INTERNAL_TOPICS:
            entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            return entry
        try:
            topic = broker.topics.create_topic(name, -1, -1, {})
        except KafkaError as exc:
            entry["error_code"] = exc.code
            return entry
    entry["topic_id"] = topic.topic_id
    node = broker.node_id
    entry["partitions"] = [
        {
            "error_code": 0,
            "partition_index": index,
            "leader_id": node,
            "leader_epoch": -1,
            "replica_nodes": [node],
            "isr_nodes": [node],
            "offline_replicas": [],
        }
        for index in range(topic.partitions)
    ]
    return entry


def handle_describe_cluster(broker: Broker, ctx: RequestContext, req: Body) -> Body:
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
                "broker_id": broker.node_id,
                "host": broker.advertised_host,
                "port": broker.advertised_port,
                "rack": None,
            }
        ],
        "cluster_authorized_operations": ALL_OPERATIONS
        if req.get("include_cluster_authorized_operations")
        else AUTHORIZED_OPS_UNSET,
    }


def _coordinator(broker: Broker, key: str, key_type: int) -> tuple[ErrorCode, str | None]:
    if key_type == KEY_TYPE_TRANSACTION:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, "transactions are not supported yet"
    if key_type != KEY_TYPE_GROUP:
        return ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}"
    error = broker.ensure_group_coordinator()
    if error is not None:
        return error, "the group coordinator is loading"
    return ErrorCode.NONE, None


def handle_find_coordinator(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    key_type = req.get("key_type", 0)
    if ctx.version >= 4:
        coordinators = []
        for key in req.get("coordinator_keys", []):
            code, message = _coordinator(broker, key, key_type)
            coordinators.append(
                {
                    "key": key,
                    "node_id": broker.node_id if code == 0 else -1,
                    "host": broker.advertised_host if code == 0 else "",
                    "port": broker.advertised_port if code == 0 else -1,
                    "error_code": code,
                    "error_message": message,
                }
            )
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    code, message = _coordinator(broker, req.get("key", ""), key_type)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "node_id": broker.node_id if code == 0 else -1,
        "host": broker.advertised_host if code == 0 else "",
        "port": broker.advertised_port if code == 0 else -1,
    }
