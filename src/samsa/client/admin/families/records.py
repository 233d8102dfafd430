"""Partitions' offsets and records through Admin: ListOffsets (2) and DeleteRecords (21).

Both go to each partition's leader, one request per leader: the Admin groups
the partitions by leader first (its ``_by_leader``) and hands the groups in,
as for DescribeProducers.  Every partition's error fails the call, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping

from samsa.client.admin.item_errors import check_item
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.fetch.offsets import (
    LIST_OFFSETS,
    list_offsets_request,
    parse_list_offsets,
)
from samsa.client.metadata import TopicPartition

DELETE_RECORDS = 21


def list_offsets(
    admin: AdminPlumbing,
    wanted: Mapping[TopicPartition, int],
    by_leader: Mapping[int, list[TopicPartition]],
    isolation_level: int,
    timeout_ms: int,
) -> dict[TopicPartition, tuple[int, int]]:
    """(offset, timestamp) per partition for a timestamp, EARLIEST (-2) or LATEST (-1)."""
    out: dict[TopicPartition, tuple[int, int]] = {}
    for node, parts in by_leader.items():
        body = list_offsets_request({tp: wanted[tp] for tp in parts}, isolation_level)
        found, errors = parse_list_offsets(admin._call(node, LIST_OFFSETS, body, timeout_ms))
        for tp, code in errors.items():
            check_item(code, None, f"list offsets {tp.topic}-{tp.partition}")
        for tp, (offset, ts, _epoch) in found.items():
            out[tp] = (offset, ts)
    return out


def delete_records(
    admin: AdminPlumbing,
    wanted: Mapping[TopicPartition, int],
    by_leader: Mapping[int, list[TopicPartition]],
    timeout_ms: int,
) -> dict[TopicPartition, int]:
    """Delete records below the given offsets; returns each partition's new low watermark."""
    out: dict[TopicPartition, int] = {}
    for node, parts in by_leader.items():
        topics: dict[str, list[dict[str, int]]] = {}
        for tp in parts:
            topics.setdefault(tp.topic, []).append(
                {"partition_index": tp.partition, "offset": wanted[tp]}
            )
        body = {
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            "timeout_ms": timeout_ms,
        }
        resp = admin._call(node, DELETE_RECORDS, body, timeout_ms)
        for t in resp["topics"]:
            for p in t["partitions"]:
                check_item(
                    p["error_code"], None, f"delete records {t['name']}-{p['partition_index']}"
                )
                out[TopicPartition(t["name"], p["partition_index"])] = p["low_watermark"]
    return out
