"""Partition sizes on disk and failed log dirs, through DescribeLogDirs (35) on
every broker.

A partition's size is what its replica takes on one broker; with replication
the leader's replica is the one a user means, so callers pick by leader.  A log
dir that an I/O error took offline answers with an error code of its own
(KAFKA_STORAGE_ERROR) and no partitions.
"""

from __future__ import annotations

from typing import Any

from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import KafkaError

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
        sizes = out.setdefault(node_id, {})
        for result in _log_dirs_of(admin, node_id, request_topics, timeout_ms):
            if result["error_code"]:
                continue  # an offline log dir: its partitions have no size here
            for t in result["topics"]:
                for p in t["partitions"]:
                    sizes[TopicPartition(t["name"], p["partition_index"])] = p["partition_size"]
    return out


def failed_log_dirs(admin: AdminPlumbing, timeout_ms: int) -> dict[int, list[tuple[str, int]]]:
    """Broker id -> [(log dir, error code)] of its failed log dirs, for every
    broker that answers (one that does not is fenced or gone: shown elsewhere)."""
    admin._controller(timeout_ms)  # learn every broker
    out: dict[int, list[tuple[str, int]]] = {}
    for node_id in sorted(admin._broker_ids()):
        try:
            results = _log_dirs_of(admin, node_id, [], timeout_ms)
        except (KafkaError, KafkaTimeoutError, OSError):
            continue
        out[node_id] = [(r["log_dir"], r["error_code"]) for r in results if r["error_code"]]
    return out


def _log_dirs_of(
    admin: AdminPlumbing, node_id: int, topics: list[dict[str, Any]] | None, timeout_ms: int
) -> list[dict[str, Any]]:
    """One broker's DescribeLogDirs results (``topics`` None: every partition; []: none)."""
    resp = admin._call(node_id, DESCRIBE_LOG_DIRS, {"topics": topics}, timeout_ms)
    if resp.get("error_code"):
        raise kafka_error(resp["error_code"], f"describe log dirs of broker {node_id}")
    return list(resp["results"])
