"""What the replication benchmark's cases share: creating a topic on the active
controller, reading partitions and their ISR from each node, and timing a
controller's or broker's log lines.

Shared plumbing of ``replication_bench.py``, kept apart from its cases
(``_replication_throughput``, ``_replication_failover``, ``_replication_shutdown``,
one a module) so each reads on its own.  The heartbeat settings live here because
failover and shutdown both run under them.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bench.common.cluster import call, node_metadata
from samsa.testing.cluster import LocalCluster

CREATE_TOPICS = 19
HEARTBEATS = {
    "fast": {"broker.heartbeat.interval.ms": "500", "broker.session.timeout.ms": "2000"},
    "kafka-defaults": {"broker.heartbeat.interval.ms": "2000", "broker.session.timeout.ms": "9000"},
}


def quiet_confluent(config: dict[str, Any]) -> dict[str, Any]:
    """librdkafka's own log lines (disconnects during a kill) would bury the table."""
    return {"log_level": 0, **config}


def create_topic(
    cluster: LocalCluster,
    name: str,
    assignments: list[list[int]] | None = None,
    *,
    partitions: int = 1,
    replication_factor: int = 1,
    min_insync: int | None = None,
) -> None:
    """CreateTopics sent to the active controller's own client listener.

    Not through another broker: a forwarded CreateTopics whose answer takes
    longer than controller.quorum.request.timeout.ms (1,000 partitions do) is sent
    again by the forwarding broker and answered TOPIC_ALREADY_EXISTS although
    this very request created the topic (see the report).
    """
    configs = (
        [] if min_insync is None else [{"name": "min.insync.replicas", "value": str(min_insync)}]
    )
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": -1 if assignments else partitions,
                "replication_factor": -1 if assignments else replication_factor,
                "assignments": [
                    {"partition_index": i, "broker_ids": replicas}
                    for i, replicas in enumerate(assignments or [])
                ],
                "configs": configs,
            }
        ],
        "timeout_ms": 60000,
        "validate_only": False,
    }
    node = active_controller(cluster)
    answer = call(f"127.0.0.1:{cluster.client_ports[node]}", CREATE_TOPICS, 7, body, timeout=120)
    result = answer["topics"][0]
    assert result["error_code"] == 0, result


def partitions_of(cluster: LocalCluster, node_id: int, topic: str) -> list[dict[str, Any]]:
    """The topic's partitions as ``node_id`` sees them (leader_id, isr_nodes, ...)."""
    topics = node_metadata(cluster, node_id, [topic])["topics"]
    if not topics or topics[0]["error_code"]:
        return []
    return sorted(topics[0]["partitions"], key=lambda p: p["partition_index"])


def settled(
    cluster: LocalCluster, topic: str, leader: int | None, isr_size: int, count: int
) -> bool:
    """Every running node sees ``count`` partitions, each with the full ISR (and ``leader``)."""
    for node_id in cluster.running():
        parts = partitions_of(cluster, node_id, topic)
        if len(parts) != count:
            return False
        for p in parts:
            if len(p["isr_nodes"]) != isr_size or (leader is not None and p["leader_id"] != leader):
                return False
    return True


def active_controller(cluster: LocalCluster) -> int:
    from samsa.client import Admin

    with Admin({"bootstrap.servers": cluster.bootstrap, "request.timeout.ms": 5000}) as admin:
        return admin.describe_metadata_quorum(timeout=5).leader_id


def log_time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def logged_after(
    lines: list[str], pattern: re.Pattern[str], subject: int | str, since_wall: float
) -> float:
    """Seconds from ``since_wall`` to the first line ``pattern`` matches with ``subject``
    (a broker id or a topic) as its second group, logged no earlier than ``since_wall``
    (10 ms of clock slack); NaN if there is none.  ``pattern``'s first group is the
    line's asctime."""
    for line in lines:
        match = pattern.match(line)
        if match and match.group(2) == str(subject):
            at = log_time(match.group(1)) - since_wall
            if at >= -0.01:
                return at
    return float("nan")
