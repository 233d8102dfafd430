"""Share groups (KIP-932) through ShareGroupDescribe (77) and
Describe/Alter/DeleteShareGroupOffsets (90-92), as Kafka's
``Admin.describeShareGroups`` / ``listShareGroupOffsets`` /
``alterShareGroupOffsets`` / ``deleteShareGroupOffsets`` do.

A share group has no committed offsets: each partition has a *start offset*
below which every record is done (acknowledged or archived).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from samsa.client.admin.families.consumer_groups import Partitions, _partitions
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

SHARE_GROUP_DESCRIBE = 77
DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 90, 91, 92


@dataclass(frozen=True, slots=True)
class ShareGroupMember:
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topics: tuple[str, ...]
    assignment: Partitions


@dataclass(frozen=True, slots=True)
class ShareGroupDescription:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[ShareGroupMember, ...]


def _check(code: int, message: str | None, what: str) -> None:
    if code:
        raise KafkaError(ErrorCode(code), message or f"{what}: {ErrorCode(code).name}")


def describe_share_group(
    admin: AdminPlumbing, group_id: str, timeout_ms: int
) -> ShareGroupDescription | None:
    """The group's members and assignment; None when there is no such share group."""
    node = admin._coordinator(group_id, timeout_ms)
    body = {"group_ids": [group_id], "include_authorized_operations": False}
    (g,) = admin._call(node, SHARE_GROUP_DESCRIBE, body, timeout_ms)["groups"]
    if g["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND:
        return None
    _check(g["error_code"], g.get("error_message"), f"describe share group {group_id!r}")
    return ShareGroupDescription(
        group_id=g["group_id"],
        state=g["group_state"],
        group_epoch=g["group_epoch"],
        assignment_epoch=g["assignment_epoch"],
        assignor=g["assignor_name"],
        members=tuple(
            ShareGroupMember(
                member_id=m["member_id"],
                member_epoch=m["member_epoch"],
                client_id=m["client_id"],
                client_host=m["client_host"],
                subscribed_topics=tuple(m["subscribed_topic_names"]),
                assignment=_partitions(m["assignment"]),
            )
            for m in g["members"]
        ),
    )


def list_share_group_offsets(
    admin: AdminPlumbing, group_id: str, timeout_ms: int
) -> dict[TopicPartition, int]:
    """Each partition's start offset (-1: the partition has no state yet)."""
    node = admin._coordinator(group_id, timeout_ms)
    body = {"groups": [{"group_id": group_id, "topics": None}]}
    (g,) = admin._call(node, DESCRIBE_OFFSETS, body, timeout_ms)["groups"]
    _check(g["error_code"], g.get("error_message"), f"share group {group_id!r} offsets")
    out: dict[TopicPartition, int] = {}
    for t in g["topics"]:
        for p in t["partitions"]:
            _check(
                p["error_code"], p.get("error_message"), f"{t['topic_name']}-{p['partition_index']}"
            )
            out[TopicPartition(t["topic_name"], p["partition_index"])] = p["start_offset"]
    return out


def alter_share_group_offsets(
    admin: AdminPlumbing, group_id: str, offsets: Mapping[TopicPartition, int], timeout_ms: int
) -> None:
    """Start the partitions over at the given offsets (the group must have no members)."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for tp, offset in offsets.items():
        by_topic.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "start_offset": offset}
        )
    body = {
        "group_id": group_id,
        "topics": [{"topic_name": t, "partitions": ps} for t, ps in sorted(by_topic.items())],
    }
    resp = admin._call(admin._coordinator(group_id, timeout_ms), ALTER_OFFSETS, body, timeout_ms)
    _check(resp["error_code"], resp.get("error_message"), f"reset share group {group_id!r}")
    for t in resp["responses"]:
        for p in t["partitions"]:
            _check(
                p["error_code"], p.get("error_message"), f"{t['topic_name']}-{p['partition_index']}"
            )


def delete_share_group_offsets(
    admin: AdminPlumbing, group_id: str, topics: Iterable[str], timeout_ms: int
) -> None:
    body = {"group_id": group_id, "topics": [{"topic_name": t} for t in topics]}
    resp = admin._call(admin._coordinator(group_id, timeout_ms), DELETE_OFFSETS, body, timeout_ms)
    _check(resp["error_code"], resp.get("error_message"), f"share group {group_id!r}")
    for t in resp["responses"]:
        _check(t["error_code"], t.get("error_message"), f"topic {t['topic_name']!r}")
