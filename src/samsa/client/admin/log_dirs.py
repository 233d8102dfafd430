"""Partition sizes on disk, through DescribeLogDirs (35) on every broker.

A partition's size is what its replica takes on one broker; with replication
the leader's replica is the one a user means, so callers pick by leader.
"""

from __future__ import annotations

from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.client.metadata import TopicPartition

DESCRIBE_LOG_DIRS = 35


def describe_log_dirs(
    admin: AdminPlumbing, topics: list[str] | None, timeout_ms: int
) -> dict[int, dict[TopicPartition, int]]:
    """Broker id -> partition -> bytes on disk (all partitions when ``topics`` is None)."""
    admin._controller(timeout_ms)  # learn every broker
    request_topics = None
    if topics is not None:
        request_topics = []
        for topic in admin.describe_topics(topics, timeout=timeout_ms / 1000).values():
            request_topics.append(
                {"topic": topic.name, "partitions": [p.partition for p in topic.partitions]}
            )
    out: dict[int, dict[TopicPartition, int]] = {}
    for node_id in sorted(admin._broker_ids()):
        resp = admin._call(node_id, DESCRIBE_LOG_DIRS, {"topics": request_topics}, timeout_ms)
        if resp.get("error_code"):
            raise kafka_error(resp["error_code"], f"describe log dirs of broker {node_id}")
        sizes = out.setdefault(node_id, {})
        for result in resp["results"]:
            if result["error_code"]:
                continue  # an offline log dir: its partitions have no size here
            for t in result["topics"]:
                for p in t["partitions"]:
                    sizes[TopicPartition(t["name"], p["partition_index"])] = p["partition_size"]
    return out
