"""KIP-848 consumer groups through ConsumerGroupDescribe (69), as Kafka's
``Admin.describeConsumerGroups`` does for groups of the new protocol.

DescribeGroups (15) sees no epochs and no target assignment; operators watching
a group reconcile need both: the group epoch, the epoch each member reached,
and the partitions each member holds versus the ones it is heading for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from samsa.client.admin.plumbing import AdminPlumbing
from samsa.errors import ErrorCode, KafkaError

CONSUMER_GROUP_DESCRIBE = 69

Partitions = dict[str, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    member_id: str
    instance_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topics: tuple[str, ...]
    subscribed_regex: str | None
    assignment: Partitions
    target_assignment: Partitions


@dataclass(frozen=True, slots=True)
class ConsumerGroupDescription:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[ConsumerGroupMember, ...]


def _partitions(assignment: dict[str, Any]) -> Partitions:
    return {
        t["topic_name"]: tuple(sorted(t["partitions"]))
        for t in assignment.get("topic_partitions") or ()
    }


def describe_consumer_groups(
    admin: AdminPlumbing, group_ids: Iterable[str], timeout_ms: int
) -> dict[str, ConsumerGroupDescription | None]:
    """Each group's description; None for a group that is not a KIP-848 group."""
    out: dict[str, ConsumerGroupDescription | None] = {}
    for group_id in group_ids:
        node = admin._coordinator(group_id, timeout_ms)
        body = {"group_ids": [group_id], "include_authorized_operations": False}
        resp = admin._call(node, CONSUMER_GROUP_DESCRIBE, body, timeout_ms)
        for g in resp["groups"]:
            code = ErrorCode(g["error_code"])
            if code is ErrorCode.GROUP_ID_NOT_FOUND:
                out[g["group_id"]] = None
                continue
            if code is not ErrorCode.NONE:
                raise KafkaError(code, g.get("error_message") or f"describe group {group_id!r}")
            out[g["group_id"]] = ConsumerGroupDescription(
                group_id=g["group_id"],
                state=g["group_state"],
                group_epoch=g["group_epoch"],
                assignment_epoch=g["assignment_epoch"],
                assignor=g["assignor_name"],
                members=tuple(
                    ConsumerGroupMember(
                        member_id=m["member_id"],
                        instance_id=m["instance_id"],
                        member_epoch=m["member_epoch"],
                        client_id=m["client_id"],
                        client_host=m["client_host"],
                        subscribed_topics=tuple(m["subscribed_topic_names"]),
                        subscribed_regex=m["subscribed_topic_regex"],
                        assignment=_partitions(m["assignment"]),
                        target_assignment=_partitions(m["target_assignment"]),
                    )
                    for m in g["members"]
                ),
            )
    return out
