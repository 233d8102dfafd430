"""ListOffsets (key 2) and OffsetForLeaderEpoch (key 23): where offsets are.

ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups on the
partition's leader.  Samsa keeps every segment on local disk, so the earliest
local offset (-4) is the log start offset and no offset is tiered: -5 (the
latest tiered offset) and v11's -6 (the earliest offset waiting for upload,
KIP-1023) answer offset -1, as Kafka does for a topic without remote storage.  Latest is the high watermark: the offset after the last
committed record (not after the last batch's base offset), so lag computed
from it is right for multi-record batches.  OffsetForLeaderEpoch answers from
the leader epoch cache: clients call it after a leader change to check that
their position was not truncated away, followers to find where they diverge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import KafkaError
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

API_KEY = 2
OFFSET_FOR_LEADER_EPOCH = 23
LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
READ_COMMITTED = 1
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6


def register(router: Router, broker: BrokerApi) -> None:
    router.register(API_KEY, lambda ctx, req: handle_list_offsets(broker, ctx, req))
    router.register(
        OFFSET_FOR_LEADER_EPOCH,
        lambda ctx, req: broker.replicas.offset_for_leader_epoch(req),
    )


def handle_list_offsets(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    topics = []
    for topic in req["topics"]:
        name = topic["name"]
        parts = []
        for preq in topic["partitions"]:
            parts.append(
                _lookup(
                    broker,
                    name,
                    preq["partition_index"],
                    preq["timestamp"],
                    preq.get("current_leader_epoch", -1),
                    req.get("isolation_level", 0) == READ_COMMITTED,
                )
            )
        topics.append({"name": name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}


def _lookup(
    broker: BrokerApi,
    topic: str,
    index: int,
    timestamp: int,
    current_leader_epoch: int,
    read_committed: bool = False,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "partition_index": index,
        "error_code": 0,
        "timestamp": -1,
        "offset": -1,
        "leader_epoch": -1,
    }
    try:
        partition = broker.replicas.leader_partition(topic, index, current_leader_epoch)
    except KafkaError as exc:
        result["error_code"] = exc.code
        return result
    result["leader_epoch"] = partition.leader_epoch
    if timestamp == LATEST:
        result["offset"] = (
            partition.last_stable_offset if read_committed else partition.high_watermark
        )
    elif timestamp in (EARLIEST, EARLIEST_LOCAL):
        result["offset"] = partition.log_start_offset
    elif timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        result["leader_epoch"] = -1
    elif timestamp == MAX_TIMESTAMP:
        found = partition.log.max_timestamp_and_offset()
        if found is not None:
            result["offset"], result["timestamp"] = found
    else:
        found = partition.log.offset_for_timestamp(timestamp)
        if found is not None:
            result["offset"], result["timestamp"] = found
    return result
