"""Moving partition replicas: AlterPartitionReassignments (45) and
ListPartitionReassignments (46), as Kafka's Admin (KIP-455).

A reassignment first adds the target replicas that are new (they copy the log
from the leader), and once they are all in the ISR the controller drops the
replicas that are no longer wanted and, if needed, moves leadership.  While
that runs a partition's replica list is the union of old and new, with
``adding_replicas`` and ``removing_replicas`` saying which are which; that is
what ``list_partition_reassignments`` reports.  A target of None cancels an
ongoing reassignment (the partition goes back to its original replicas).

The controller validates each partition alone (an unknown topic, a broker
that is not registered: INVALID_REPLICA_ASSIGNMENT), so the answer is per
partition: None where the change was accepted, else the error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from samsa.client.admin.forwarded import call_controller
from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.metadata import TopicPartition
from samsa.errors import KafkaError

ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """An ongoing reassignment: the current (union) replicas and what moves."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


def alter_partition_reassignments(
    admin: AdminPlumbing, targets: Mapping[TopicPartition, list[int] | None], timeout_ms: int
) -> dict[TopicPartition, KafkaError | None]:
    by_topic: dict[str, list[tuple[int, list[int] | None]]] = {}
    for tp, replicas in targets.items():
        by_topic.setdefault(tp.topic, []).append((tp.partition, replicas))
    body = {
        "timeout_ms": timeout_ms,
        "allow_replication_factor_change": True,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {"partition_index": p, "replicas": None if r is None else list(r)}
                    for p, r in sorted(parts, key=lambda item: item[0])
                ],
            }
            for topic, parts in sorted(by_topic.items())
        ],
    }
    resp = call_controller(admin, ALTER_PARTITION_REASSIGNMENTS, body, timeout_ms)
    out: dict[TopicPartition, KafkaError | None] = {}
    for topic in resp["responses"]:
        for p in topic["partitions"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            out[tp] = item_error(
                p["error_code"], p.get("error_message"), f"reassign {tp.topic}-{tp.partition}"
            )
    return out


def list_partition_reassignments(
    admin: AdminPlumbing, partitions: Iterable[TopicPartition] | None, timeout_ms: int
) -> dict[TopicPartition, PartitionReassignment]:
    """Ongoing reassignments (of ``partitions``, or all); others are left out."""
    topics = None
    if partitions is not None:
        by_topic: dict[str, set[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, set()).add(tp.partition)
        topics = [
            {"name": topic, "partition_indexes": sorted(parts)}
            for topic, parts in sorted(by_topic.items())
        ]
    body = {"timeout_ms": timeout_ms, "topics": topics}
    resp = call_controller(admin, LIST_PARTITION_REASSIGNMENTS, body, timeout_ms)
    out: dict[TopicPartition, PartitionReassignment] = {}
    for topic in resp["topics"]:
        for p in topic["partitions"]:
            out[TopicPartition(topic["name"], p["partition_index"])] = PartitionReassignment(
                tuple(p["replicas"]), tuple(p["adding_replicas"]), tuple(p["removing_replicas"])
            )
    return out
