"""Leader elections through ElectLeaders (43), as Kafka's ``Admin.electLeaders``.

A preferred election moves leadership back to the first replica of each
partition where that replica is alive and in sync (after a broker came back,
leadership stays where failover put it until this or the controller's
periodic rebalance runs).  An unclean election picks any live replica for a
partition that has no leader at all, accepting the loss of records the old
leader had not replicated.

The answer is per partition: None for an election that happened, else the
error.  ELECTION_NOT_NEEDED (the right leader already leads) is part of the
answer, not a failure; with ``partitions=None`` (every partition) Kafka's
controller leaves such partitions out altogether.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from samsa.client.admin.forwarded import call_controller
from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.metadata import TopicPartition
from samsa.errors import KafkaError

ELECT_LEADERS = 43


class ElectionType(IntEnum):
    PREFERRED = 0
    UNCLEAN = 1


def elect_leaders(
    admin: AdminPlumbing,
    election_type: ElectionType,
    partitions: Iterable[TopicPartition] | None,
    timeout_ms: int,
) -> dict[TopicPartition, KafkaError | None]:
    topic_partitions = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topic_partitions = [
            {"topic": topic, "partitions": sorted(set(parts))}
            for topic, parts in sorted(by_topic.items())
        ]
    body = {
        "election_type": int(election_type),
        "topic_partitions": topic_partitions,
        "timeout_ms": timeout_ms,
    }
    resp = call_controller(admin, ELECT_LEADERS, body, timeout_ms)
    out: dict[TopicPartition, KafkaError | None] = {}
    for topic in resp["replica_election_results"]:
        for p in topic["partition_result"]:
            tp = TopicPartition(topic["topic"], p["partition_id"])
            out[tp] = item_error(
                p["error_code"], p.get("error_message"), f"{tp.topic}-{tp.partition}"
            )
    return out
