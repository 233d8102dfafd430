"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp lookups.

Latest is the high watermark: the offset after the last record (not after the
last batch's base offset), so lag computed from it is right for multi-record batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker import Broker

API_KEY = 2
LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3


def register(router: Router, broker: Broker) -> None:
    router.register(API_KEY, lambda ctx, req: handle_list_offsets(broker, ctx, req))


def handle_list_offsets(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    topics = []
    for topic in req["topics"]:
        name = topic["name"]
        parts = []
        for preq in topic["partitions"]:
            parts.append(_lookup(broker, name, preq["partition_index"], preq["timestamp"]))
        topics.append({"name": name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}


def _lookup(broker: Broker, topic: str, index: int, timestamp: int) -> dict[str, Any]:
    partition = broker.replicas.get(topic, index)
    result: dict[str, Any] = {
        "partition_index": index,
        "error_code": 0,
        "timestamp": -1,
        "offset": -1,
        "leader_epoch": -1,
    }
    if partition is None or not broker.leads(topic, index):
        result["error_code"] = (
            ErrorCode.NOT_LEADER_OR_FOLLOWER
            if topic in broker.image.topics
            else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
        return result
    if timestamp == LATEST:
        result["offset"] = partition.high_watermark
    elif timestamp == EARLIEST:
        result["offset"] = partition.log_start_offset
    elif timestamp == MAX_TIMESTAMP:
        found = partition.log.max_timestamp_and_offset()
        if found is not None:
            result["offset"], result["timestamp"] = found
    else:
        found = partition.log.offset_for_timestamp(timestamp)
        if found is not None:
            result["offset"], result["timestamp"] = found
    return result
