"""OffsetCommit and OffsetFetch as a consumer writes and reads them.

Request bodies from offsets, and committed offsets (or the first failed
partition) from the answers: the shapes of the two messages, with no member
state and no I/O.  Apart from the ConsumerCoordinator so that its commit and
fetch loops -- which coordinator to ask, when to retry, what fencing means for
the member -- read as loops, not as field lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.client.consumer.errors import kafka_error
from samsa.client.consumer.records import OffsetAndMetadata
from samsa.client.metadata import TopicPartition
from samsa.errors import KafkaError, SamsaError

__all__ = [
    "OFFSET_COMMIT",
    "OFFSET_FETCH",
    "commit_error",
    "committed_offsets",
    "normalize_offsets",
    "offset_commit_body",
    "offset_fetch_body",
    "offset_fetch_group",
]

OFFSET_COMMIT = 8
OFFSET_FETCH = 9


def normalize_offsets(
    offsets: Mapping[Any, OffsetAndMetadata | int],
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The caller's offsets (an int or OffsetAndMetadata per partition) as OffsetAndMetadata."""
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp, value in offsets.items():
        key = TopicPartition(*tp)
        if isinstance(value, OffsetAndMetadata):
            out[key] = value
        elif isinstance(value, int) and not isinstance(value, bool):
            out[key] = OffsetAndMetadata(value)
        else:
            raise SamsaError(f"offset for {key} must be an int or OffsetAndMetadata")
    return out


def offset_commit_body(
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
    group_id: str,
    generation_id: int,
    member_id: str,
    group_instance_id: str | None,
) -> dict[str, Any]:
    """OffsetCommit; a generation of -1 and no member id commit as a non-member."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, om in offsets.items():
        topics.setdefault(tp.topic, []).append(
            {
                "partition_index": tp.partition,
                "committed_offset": om.offset,
                "committed_leader_epoch": -1 if om.leader_epoch is None else om.leader_epoch,
                "commit_timestamp": -1,
                "committed_metadata": om.metadata,
            }
        )
    return {
        "group_id": group_id,
        "generation_id_or_member_epoch": generation_id,
        "member_id": member_id,
        "group_instance_id": group_instance_id,
        "retention_time_ms": -1,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }


def commit_error(resp: dict[str, Any]) -> KafkaError | None:
    """The first failed partition of an OffsetCommit answer; None when all succeeded."""
    for t in resp["topics"]:
        for p in t["partitions"]:
            code = p["error_code"]
            if code:
                return kafka_error(code, f"commit of {t['name']}-{p['partition_index']}")
    return None


def offset_fetch_body(group_id: str, wanted: list[TopicPartition]) -> dict[str, Any]:
    """OffsetFetch of ``wanted``, in both the one-group (v0-7) and the groups (v8+) shape."""
    topics: dict[str, list[int]] = {}
    for tp in wanted:
        topics.setdefault(tp.topic, []).append(tp.partition)
    topic_list = [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]
    return {
        "group_id": group_id,
        "topics": topic_list,
        "groups": [
            {
                "group_id": group_id,
                "member_id": None,
                "member_epoch": -1,
                "topics": topic_list,
            }
        ],
        "require_stable": False,
    }


def offset_fetch_group(resp: dict[str, Any]) -> dict[str, Any]:
    """The group's part of an OffsetFetch answer (v8+ nests it in ``groups``)."""
    return resp["groups"][0] if resp.get("groups") else resp


def committed_offsets(
    group: dict[str, Any], wanted: list[TopicPartition]
) -> dict[TopicPartition, OffsetAndMetadata | None]:
    """Each wanted partition's committed offset (None: nothing committed); raises the
    first partition's error."""
    result: dict[TopicPartition, OffsetAndMetadata | None] = dict.fromkeys(wanted)
    for t in group["topics"]:
        for p in t["partitions"]:
            if p["error_code"]:
                raise kafka_error(p["error_code"], f"OffsetFetch {t['name']}")
            tp = TopicPartition(t["name"], p["partition_index"])
            if p["committed_offset"] >= 0:
                epoch = p.get("committed_leader_epoch", -1)
                result[tp] = OffsetAndMetadata(
                    p["committed_offset"],
                    p.get("metadata") or "",
                    epoch if epoch >= 0 else None,
                )
    return result
