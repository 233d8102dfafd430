"""ListOffsets (key 2) and OffsetForLeaderEpoch (key 23): where offsets are.

ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups on the
partition's leader.  For a topic without remote storage every segment is on
local disk: the earliest local offset (-4) is the log start offset and no
offset is tiered (-5, and v11's -6, the earliest offset waiting for upload
(KIP-1023), answer offset -1, as Kafka does).  For a tiered topic
(``remote.storage.enable``) -2 is the log start counting the remote tier, -4
the first offset still on local disk, -5 the last offset the remote tier
holds, each with the leader epoch that wrote it; a timestamp is looked up in
the remote segments' time indexes first (``replication.tiering.remote_reads``),
then in the local log, and only then does the answer wait on anything.
Latest is the high watermark: the offset after the last
committed record (not after the last batch's base offset), so lag computed
from it is right for multi-record batches.  OffsetForLeaderEpoch answers from
the leader epoch cache: clients call it after a leader change to check that
their position was not truncated away, followers to find where they diverge.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from samsa.errors import KafkaError
from samsa.replication.partition import Partition
from samsa.replication.tiering import remote_reads
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

log = logging.getLogger(__name__)


def register(router: Router, broker: BrokerApi) -> None:
    router.register(API_KEY, lambda ctx, req: handle_list_offsets(broker, ctx, req))
    router.register(
        OFFSET_FOR_LEADER_EPOCH,
        lambda ctx, req: broker.replicas.offset_for_leader_epoch(req),
    )


def handle_list_offsets(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body | Any:
    topics = []
    remote: list[tuple[dict[str, Any], Partition, int]] = []
    for topic in req["topics"]:
        name = topic["name"]
        parts = []
        for preq in topic["partitions"]:
            result = _lookup(
                broker,
                name,
                preq["partition_index"],
                preq["timestamp"],
                preq.get("current_leader_epoch", -1),
                req.get("isolation_level", 0) == READ_COMMITTED,
            )
            if isinstance(result, tuple):  # a tiered log's timestamp lookup
                remote.append(result)
                result = result[0]
            parts.append(result)
        topics.append({"name": name, "partitions": parts})
    body = {"throttle_time_ms": 0, "topics": topics}
    if remote:
        return _with_remote_lookups(broker, body, remote)
    return body


async def _with_remote_lookups(
    broker: BrokerApi, body: Body, remote: list[tuple[dict[str, Any], Partition, int]]
) -> Body:
    tiering = broker.replicas.tiering

    async def one(result: dict[str, Any], partition: Partition, timestamp: int) -> None:
        try:
            found = await remote_reads.offset_for_timestamp(tiering, partition, timestamp)
        except KafkaError as exc:
            result["error_code"] = exc.code
            return
        if found is None:  # not in the remote tier: the local log has it, or nothing does
            try:
                local = partition.log.offset_for_timestamp(timestamp)
            except KafkaError as exc:
                result["error_code"] = exc.code
                return
            if local is not None:
                result["offset"], result["timestamp"] = local
            return
        offset, found_timestamp, epoch = found
        result["offset"], result["timestamp"] = offset, found_timestamp
        if epoch is not None:
            result["leader_epoch"] = epoch

    await asyncio.gather(*(one(*item) for item in remote))
    return body


def _lookup(
    broker: BrokerApi,
    topic: str,
    index: int,
    timestamp: int,
    current_leader_epoch: int,
    read_committed: bool = False,
) -> dict[str, Any] | tuple[dict[str, Any], Partition, int]:
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
    if (
        timestamp not in (LATEST, MAX_TIMESTAMP)
        and partition.log.config.remote_storage_enable
        and broker.replicas.tiering is not None
    ):
        return _lookup_tiered(partition, timestamp, result)
    if timestamp == LATEST:
        result["offset"] = (
            partition.last_stable_offset if read_committed else partition.high_watermark
        )
    elif timestamp in (EARLIEST, EARLIEST_LOCAL):
        result["offset"] = partition.log_start_offset
    elif timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        result["leader_epoch"] = -1
    else:
        # These look inside a batch: a compressed one whose records are over
        # max.decompressed.message.bytes answers INVALID_RECORD, as Kafka's
        # InvalidRecordException does through Errors.forException.
        try:
            if timestamp == MAX_TIMESTAMP:
                found = partition.log.max_timestamp_and_offset()
            else:
                found = partition.log.offset_for_timestamp(timestamp)
        except KafkaError as exc:
            log.info("ListOffsets %s-%d at %d: %s", topic, index, timestamp, exc)
            result["error_code"] = exc.code
            return result
        if found is not None:
            result["offset"], result["timestamp"] = found
    return result


def _lookup_tiered(
    partition: Partition, timestamp: int, result: dict[str, Any]
) -> dict[str, Any] | tuple[dict[str, Any], Partition, int]:
    """-2, -4, -5 and -6 of a tiered log, each with the epoch that wrote it (as
    Kafka's ``fetchOffsetByTimestamp``); timestamps go to the remote tier."""
    log_ = partition.log
    epochs = log_.leader_epoch_cache
    if timestamp in (EARLIEST, EARLIEST_LOCAL, LATEST_TIERED):
        if timestamp == EARLIEST:
            offset = log_.log_start_offset
        elif timestamp == EARLIEST_LOCAL:
            offset = log_.local_log_start_offset
        else:
            offset = log_.highest_offset_in_remote_storage
        result["offset"] = offset
        result["leader_epoch"] = epochs.epoch_for_offset(offset) if offset >= 0 else -1
        return result
    if timestamp == EARLIEST_PENDING_UPLOAD:
        return _earliest_pending_upload(partition, result)
    return result, partition, timestamp


def _earliest_pending_upload(partition: Partition, result: dict[str, Any]) -> dict[str, Any]:
    """-6 of a tiered log (KIP-1023), as Kafka's ``fetchEarliestPendingUploadOffset``:
    the offset after the highest one copied (at least the log start); with nothing
    copied, the log start if nothing was ever uploaded, else unknown (-1: this
    leader has not yet learnt what its predecessors uploaded)."""
    log_ = partition.log
    copied = log_.highest_offset_in_remote_storage
    if copied < 0:
        if log_.local_log_start_offset == log_.log_start_offset:
            offset = log_.log_start_offset
            result["offset"] = offset
            result["leader_epoch"] = log_.leader_epoch_cache.epoch_for_offset(offset)
        else:
            result["leader_epoch"] = -1
        return result
    offset = max(copied + 1, log_.log_start_offset)
    result["offset"] = offset
    result["leader_epoch"] = log_.leader_epoch_cache.epoch_for_offset(offset)
    return result
