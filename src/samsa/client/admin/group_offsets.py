"""Changing a group's committed offsets from outside the group.

Kafka's Admin does this with an OffsetCommit from no member (generation -1,
empty member id), which the coordinator accepts only while the group has no
members: a live member would overwrite the change at its next commit.  That is
why ``kafka-consumer-groups --reset-offsets`` (and ``samsa groups
reset-offsets``) refuse a group that is not Empty.  OffsetDelete removes
committed offsets of partitions the group no longer subscribes to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.client.metadata import TopicPartition
from samsa.protocol.group_requests import outside_commit_request

OFFSET_COMMIT, OFFSET_DELETE = 8, 47


def _by_topic(partitions: Mapping[TopicPartition, Any]) -> dict[str, dict[int, Any]]:
    out: dict[str, dict[int, Any]] = {}
    for tp, value in partitions.items():
        out.setdefault(tp.topic, {})[tp.partition] = value
    return out


def _raise_first(topics: list[dict[str, Any]], what: str) -> None:
    for t in topics:
        for p in t["partitions"]:
            if p["error_code"]:
                raise kafka_error(p["error_code"], f"{what} {t['name']}-{p['partition_index']}")


def alter_group_offsets(
    admin: AdminPlumbing, group_id: str, offsets: Mapping[TopicPartition, int], timeout_ms: int
) -> None:
    """Commit ``offsets`` (the next record to read) for an Empty group."""
    node = admin._coordinator(group_id, timeout_ms)
    body = outside_commit_request(group_id, offsets.items())
    resp = admin._call(node, OFFSET_COMMIT, body, timeout_ms)
    _raise_first(resp["topics"], f"commit offset of group {group_id!r} for")


def delete_group_offsets(
    admin: AdminPlumbing, group_id: str, partitions: list[TopicPartition], timeout_ms: int
) -> None:
    node = admin._coordinator(group_id, timeout_ms)
    body = {
        "group_id": group_id,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": p} for p in sorted(parts)]}
            for topic, parts in sorted(_by_topic(dict.fromkeys(partitions)).items())
        ],
    }
    resp = admin._call(node, OFFSET_DELETE, body, timeout_ms)
    if resp["error_code"]:
        raise kafka_error(resp["error_code"], f"delete offsets of group {group_id!r}")
    _raise_first(resp["topics"], f"delete offset of group {group_id!r} for")
