"""Fetch and OffsetForLeaderEpoch answers for one partition, as the leader gives them.

The Fetch handler owns the request (sessions, the byte budget across
partitions, long polls); this builds each partition's part of the response
from the Partition: consumers get records below the high watermark, followers
(``replica_id`` >= 0) records up to the log end plus the divergence check,
and every Kafka error becomes its code in the partition's entry, never an
exception.  The dicts have the FetchResponse / OffsetForLeaderEpochResponse
partition fields (the codec drops the ones a version does not have).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.epochs import NO_EPOCH
from samsa.replication.partition import Partition, ReadResult

__all__ = ["REMOTE_READ", "epoch_end_offset_response", "fetch_error", "fetch_partition_response"]

REMOTE_READ = "_remote_fetch_offset"
"""Key of an entry the remote tier must fill (the fetch handler removes it)."""
_WITH_OFFSETS = frozenset({ErrorCode.OFFSET_OUT_OF_RANGE, ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE})

_CURRENT_LEADER_ERRORS = frozenset(
    {ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH}
)


def fetch_error(
    index: int,
    code: ErrorCode,
    partition: Partition | None = None,
    *,
    with_offsets: bool = False,
) -> dict[str, Any]:
    """An error entry; OFFSET_OUT_OF_RANGE carries the log start and high watermark
    (a follower resets from them), NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH the
    leader this broker knows of (KIP-951's ``current_leader``)."""
    hw = log_start = -1
    if partition is not None and with_offsets:
        hw, log_start = partition.high_watermark, partition.log_start_offset
    current_leader = None
    if partition is not None and code in _CURRENT_LEADER_ERRORS and partition.leader_id >= 0:
        current_leader = {"leader_id": partition.leader_id, "leader_epoch": partition.leader_epoch}
    return {
        "partition_index": index,
        "error_code": code,
        "high_watermark": hw,
        "last_stable_offset": hw,
        "log_start_offset": log_start,
        "diverging_epoch": None,
        "current_leader": current_leader,
        "snapshot_id": None,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        # Empty, never null: librdkafka treats a null record set as a parse
        # failure and refetches in a tight loop instead of handling the error.
        "records": b"",
    }


def fetch_partition_response(
    partition: Partition,
    request_partition: Mapping[str, Any],
    *,
    replica_id: int,
    max_bytes: int,
    min_one: bool,
    now_ms: int,
    update_fetch_state: bool = True,
    read_committed: bool = False,
) -> dict[str, Any]:
    """One partition of a Fetch response (see module doc)."""
    index = request_partition["partition"]
    fetch_offset = request_partition["fetch_offset"]
    current_leader_epoch = request_partition.get("current_leader_epoch", NO_EPOCH)
    try:
        if replica_id >= 0:
            result = partition.read_for_follower(
                replica_id,
                fetch_offset,
                current_leader_epoch=current_leader_epoch,
                last_fetched_epoch=request_partition.get("last_fetched_epoch", NO_EPOCH),
                follower_log_start_offset=request_partition.get("log_start_offset", -1),
                max_bytes=max_bytes,
                min_one=min_one,
                now_ms=now_ms,
                update_fetch_state=update_fetch_state,
            )
        else:
            result = partition.read_for_consumer(
                fetch_offset,
                max_bytes,
                current_leader_epoch=current_leader_epoch,
                min_one=min_one,
                read_committed=read_committed,
            )
    except KafkaError as exc:
        return fetch_error(
            index,
            exc.code,
            partition,
            with_offsets=exc.code in _WITH_OFFSETS,
        )
    entry = _entry(index, result, read_committed)
    if result.remote:
        entry[REMOTE_READ] = fetch_offset
    return entry


def _entry(index: int, result: ReadResult, read_committed: bool) -> dict[str, Any]:
    diverging = result.diverging_epoch
    return {
        "partition_index": index,
        "error_code": ErrorCode.NONE,
        "high_watermark": result.high_watermark,
        "last_stable_offset": (
            result.high_watermark if result.last_stable_offset < 0 else result.last_stable_offset
        ),
        "log_start_offset": result.log_start_offset,
        "diverging_epoch": (
            None
            if diverging is None
            else {"epoch": diverging.epoch, "end_offset": diverging.end_offset}
        ),
        "current_leader": None,
        "snapshot_id": None,
        "aborted_transactions": (
            None
            if not read_committed
            else [
                {"producer_id": t.producer_id, "first_offset": t.first_offset}
                for t in result.aborted or ()
            ]
        ),
        "preferred_read_replica": -1,
        "records": result.records,
    }


def epoch_end_offset_response(
    partition: Partition | None, request_partition: Mapping[str, Any], missing: ErrorCode
) -> dict[str, Any]:
    """One partition of an OffsetForLeaderEpoch response; ``missing`` is the code
    for a partition this broker does not host."""
    index = request_partition["partition"]
    entry: dict[str, Any] = {
        "error_code": missing,
        "partition": index,
        "leader_epoch": -1,
        "end_offset": -1,
    }
    if partition is None:
        return entry
    try:
        found = partition.last_offset_for_leader_epoch(
            request_partition.get("current_leader_epoch", NO_EPOCH),
            request_partition["leader_epoch"],
        )
    except KafkaError as exc:
        entry["error_code"] = exc.code
        return entry
    entry.update(error_code=ErrorCode.NONE, leader_epoch=found.epoch, end_offset=found.end_offset)
    return entry
