"""A group's committed offsets from outside the group: read, changed, deleted.

OffsetFetch (9) reads what a group committed, for all its partitions or some.
Kafka's Admin changes them with an OffsetCommit (8) from no member
(generation -1, empty member id), which the coordinator accepts only while the
group has no members: a live member would overwrite the change at its next
commit.  That is why ``kafka-consumer-groups --reset-offsets`` (and ``samsa
groups reset-offsets``) refuse a group that is not Empty.  OffsetDelete (47)
removes committed offsets of partitions the group no longer subscribes to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from samsa.client.admin.item_errors import check_item
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.client.consumer.records import OffsetAndMetadata
from samsa.client.metadata import TopicPartition
from samsa.protocol.group_requests import outside_commit_request

OFFSET_COMMIT, OFFSET_FETCH, OFFSET_DELETE = 8, 9, 47


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


def list_group_offsets(
    admin: AdminPlumbing, group_id: str, partitions: Iterable[Any] | None, timeout_ms: int
) -> dict[TopicPartition, OffsetAndMetadata]:
    """Committed offsets of a group (all partitions it committed, or only ``partitions``)."""
    node = admin._coordinator(group_id, timeout_ms)
    topics: list[dict[str, Any]] | None = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp[0], []).append(tp[1])
        topics = [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]
    body = {
        "group_id": group_id,
        "topics": topics,
        "groups": [{"group_id": group_id, "member_id": None, "member_epoch": -1, "topics": topics}],
        "require_stable": False,
    }
    resp = admin._call(node, OFFSET_FETCH, body, timeout_ms)
    group = resp["groups"][0] if resp.get("groups") else resp
    check_item(group.get("error_code", 0), None, f"offsets of group {group_id!r}")
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for t in group["topics"]:
        for p in t["partitions"]:
            check_item(p["error_code"], None, f"offset of {t['name']}-{p['partition_index']}")
            if p["committed_offset"] >= 0:
                out[TopicPartition(t["name"], p["partition_index"])] = OffsetAndMetadata(
                    p["committed_offset"], p.get("metadata") or ""
                )
    return out


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
