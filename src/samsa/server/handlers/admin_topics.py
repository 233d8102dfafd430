"""CreateTopics (19), DeleteTopics (20), CreatePartitions (37), DeleteRecords (21).

Topic changes belong to the active controller, so they are forwarded as they
came and answered as it answers (validation, placement and error messages are
the controller's).  DeleteRecords moves a partition's log start on its leader,
and only on topics whose cleanup.policy includes delete (POLICY_VIOLATION
otherwise, as Kafka: a compacted topic's records go by key, not by offset).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

CREATE_TOPICS = 19
DELETE_TOPICS = 20
DELETE_RECORDS = 21
CREATE_PARTITIONS = 37


def register(router: Router, broker: BrokerApi) -> None:
    for api_key in (CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS):
        router.register(
            api_key,
            lambda ctx, req, key=api_key: forward(broker, key, ctx, req),  # type: ignore[misc]
        )
    router.register(DELETE_RECORDS, lambda ctx, req: handle_delete_records(broker, ctx, req))


async def forward(broker: BrokerApi, api_key: int, ctx: RequestContext, req: Body) -> Body:
    """Topic changes are the controller's: forwarded as they came, answered as it answers."""
    try:
        return await broker.forward(api_key, ctx.version, req)
    except KafkaError as exc:
        return _failed(api_key, req, exc)


def _failed(api_key: int, req: Body, exc: KafkaError) -> Body:
    code, message = exc.code, str(exc)
    if api_key == CREATE_TOPICS:
        topics = [
            {
                "name": t["name"],
                "topic_id": b"\x00" * 16,
                "error_code": code,
                "error_message": message,
                "num_partitions": -1,
                "replication_factor": -1,
                "configs": None,
            }
            for t in req["topics"]
        ]
        return {"throttle_time_ms": 0, "topics": topics}
    if api_key == DELETE_TOPICS:
        names = [t.get("name") for t in req.get("topics", [])] or req.get("topic_names", [])
        responses = [
            {"name": n, "topic_id": b"\x00" * 16, "error_code": code, "error_message": message}
            for n in names
        ]
        return {"throttle_time_ms": 0, "responses": responses}
    results = [
        {"name": t["name"], "error_code": code, "error_message": message} for t in req["topics"]
    ]
    return {"throttle_time_ms": 0, "results": results}


def handle_delete_records(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    topics = []
    for treq in req["topics"]:
        parts = []
        for preq in treq["partitions"]:
            index = preq["partition_index"]
            entry: dict[str, Any] = {"partition_index": index, "low_watermark": -1, "error_code": 0}
            partition = broker.replicas.get(treq["name"], index)
            if partition is None or not broker.leads(treq["name"], index):
                entry["error_code"] = (
                    ErrorCode.NOT_LEADER_OR_FOLLOWER
                    if treq["name"] in broker.image.topics
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                )
            elif not partition.config.delete:
                # Kafka's Partition.deleteRecordsOnLeader: only the delete policy
                # lets records go before their time.
                entry["error_code"] = ErrorCode.POLICY_VIOLATION
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
