"""CreateTopics (19), DeleteTopics (20), CreatePartitions (37), DeleteRecords (21)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker import Broker

CREATE_TOPICS = 19
DELETE_TOPICS = 20
DELETE_RECORDS = 21
CREATE_PARTITIONS = 37
CONFIG_SOURCE_TOPIC = 1
CONFIG_SOURCE_DEFAULT = 5


def register(router: Router, broker: Broker) -> None:
    router.register(CREATE_TOPICS, lambda ctx, req: handle_create_topics(broker, ctx, req))
    router.register(DELETE_TOPICS, lambda ctx, req: handle_delete_topics(broker, ctx, req))
    router.register(CREATE_PARTITIONS, lambda ctx, req: handle_create_partitions(broker, ctx, req))
    router.register(DELETE_RECORDS, lambda ctx, req: handle_delete_records(broker, ctx, req))


def handle_create_topics(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    results = []
    seen: set[str] = set()
    for treq in req["topics"]:
        name = treq["name"]
        result: dict[str, Any] = {
            "name": name,
            "topic_id": b"\x00" * 16,
            "error_code": 0,
            "error_message": None,
            "num_partitions": -1,
            "replication_factor": -1,
            "configs": None,
        }
        if name in seen:
            result["error_code"] = ErrorCode.INVALID_REQUEST
            result["error_message"] = f"topic {name!r} appears more than once in the request"
            results.append(result)
            continue
        seen.add(name)
        configs = {c["name"]: c["value"] for c in treq["configs"] if c["value"] is not None}
        partitions = treq["num_partitions"]
        if treq["assignments"]:
            if partitions != -1:
                result["error_code"] = ErrorCode.INVALID_REQUEST
                result["error_message"] = "both num_partitions and assignments were given"
                results.append(result)
                continue
            partitions = len(treq["assignments"])
            if any(a["broker_ids"] != [broker.node_id] for a in treq["assignments"]):
                result["error_code"] = ErrorCode.INVALID_REPLICA_ASSIGNMENT
                result["error_message"] = (
                    f"replicas must be [{broker.node_id}] on this single-node cluster"
                )
                results.append(result)
                continue
        try:
            topic = broker.topics.create_topic(
                name,
                partitions,
                treq["replication_factor"],
                configs,
                validate_only=req.get("validate_only", False),
            )
        except KafkaError as exc:
            result["error_code"] = exc.code
            result["error_message"] = str(exc)
            results.append(result)
            continue
        result["topic_id"] = topic.topic_id
        result["num_partitions"] = topic.partitions
        result["replication_factor"] = 1
        result["configs"] = [
            {
                "name": key,
                "value": value,
                "read_only": False,
                "config_source": CONFIG_SOURCE_TOPIC if key in configs else CONFIG_SOURCE_DEFAULT,
                "is_sensitive": False,
            }
            for key, value in sorted(broker.topics.effective_config(configs).items())
        ]
        results.append(result)
    return {"throttle_time_ms": 0, "topics": results}


def handle_delete_topics(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    if ctx.version >= 6:
        targets = [(t.get("name"), t.get("topic_id")) for t in req["topics"]]
    else:
        targets = [(name, None) for name in req["topic_names"]]
    responses = []
    for name, topic_id in targets:
        entry: dict[str, Any] = {
            "name": name,
            "topic_id": topic_id or b"\x00" * 16,
            "error_code": 0,
            "error_message": None,
        }
        if name is None and topic_id is not None:
            found = broker.image.topics_by_id.get(topic_id)
            name = found.name if found else None
            entry["name"] = name
            if name is None:
                entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID
                responses.append(entry)
                continue
        if not broker.config["delete.topic.enable"]:
            entry["error_code"] = ErrorCode.TOPIC_DELETION_DISABLED
        else:
            try:
                topic = broker.topics.delete_topic(str(name))
                entry["topic_id"] = topic.topic_id
                broker.topic_deleted(topic.name, topic.partitions)
            except KafkaError as exc:
                entry["error_code"] = exc.code
                entry["error_message"] = str(exc)
        responses.append(entry)
    return {"throttle_time_ms": 0, "responses": responses}


def handle_create_partitions(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    results = []
    for treq in req["topics"]:
        entry: dict[str, Any] = {"name": treq["name"], "error_code": 0, "error_message": None}
        try:
            broker.topics.create_partitions(
                treq["name"], treq["count"], validate_only=req.get("validate_only", False)
            )
        except KafkaError as exc:
            entry["error_code"] = exc.code
            entry["error_message"] = str(exc)
        results.append(entry)
    return {"throttle_time_ms": 0, "results": results}


def handle_delete_records(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    topics = []
    for treq in req["topics"]:
        parts = []
        for preq in treq["partitions"]:
            index = preq["partition_index"]
            entry: dict[str, Any] = {"partition_index": index, "low_watermark": -1, "error_code": 0}
            partition = broker.replicas.get(treq["name"], index)
            if partition is None:
                entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                offset = preq["offset"]
                if offset == -1:
                    offset = partition.high_watermark
                if offset < 0 or offset > partition.high_watermark:
                    entry["error_code"] = ErrorCode.OFFSET_OUT_OF_RANGE
                else:
                    try:
                        partition.log.delete_records(offset)
                        entry["low_watermark"] = partition.log_start_offset
                    except KafkaError as exc:
                        entry["error_code"] = exc.code
            parts.append(entry)
        topics.append({"name": treq["name"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
