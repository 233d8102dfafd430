"""Partition sizes on disk and failed log dirs, through DescribeLogDirs (35) on
every broker; moving replicas between a broker's log dirs, through
AlterReplicaLogDirs (34) on that broker (Kafka's ``Admin.alterReplicaLogDirs``).

A partition's size is what its replica takes on one broker; with replication
the leader's replica is the one a user means, so callers pick by leader.  A log
dir that an I/O error took offline answers with an error code of its own
(KAFKA_STORAGE_ERROR) and no partitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing, TopicsPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import KafkaError

ALTER_REPLICA_LOG_DIRS = 34
DESCRIBE_LOG_DIRS = 35


def describe_log_dirs(
    admin: TopicsPlumbing, topics: list[str] | None, timeout_ms: int
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


def alter_replica_log_dirs(
    admin: AdminPlumbing, assignment: Mapping[tuple[str, int, int], str], timeout_ms: int
) -> dict[tuple[str, int, int], KafkaError | None]:
    """(topic, partition, broker) -> absolute log dir: each replica's answer,
    None once its move has started (or it is there already).  A broker
    answers REPLICA_NOT_AVAILABLE for a replica it does not host yet (and
    creates it in that dir when it comes), LOG_DIR_NOT_FOUND for a dir that is
    not one of its ``log.dirs``."""
    by_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
    for (topic, partition, broker), path in assignment.items():
        by_broker.setdefault(broker, {}).setdefault(path, {}).setdefault(topic, []).append(
            partition
        )
    out: dict[tuple[str, int, int], KafkaError | None] = {}
    for broker, dirs in by_broker.items():
        body = {
            "dirs": [
                {
                    "path": path,
                    "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
                }
                for path, topics in dirs.items()
            ]
        }
        resp = admin._call(broker, ALTER_REPLICA_LOG_DIRS, body, timeout_ms)
        for topic in resp["results"]:
            for p in topic["partitions"]:
                key = (topic["topic_name"], p["partition_index"], broker)
                what = f"{key[0]}-{key[1]} on broker {broker}"
                out[key] = item_error(p["error_code"], None, what)
    return out


class ReplicaLogDir(NamedTuple):
    """Where a replica's log is, and where it is moving (Kafka's ``ReplicaLogDirInfo``)."""

    current_dir: str | None
    current_offset_lag: int
    future_dir: str | None
    """The dir of its future log while it moves between dirs; None otherwise."""
    future_offset_lag: int


def describe_replica_log_dirs(
    admin: AdminPlumbing, replicas: Iterable[tuple[str, int, int]], timeout_ms: int
) -> dict[tuple[str, int, int], ReplicaLogDir]:
    """(topic, partition, broker) -> its dirs, from each broker's DescribeLogDirs
    (Kafka's ``Admin.describeReplicaLogDirs``); a replica the broker does not
    host has no current dir."""
    wanted: dict[int, dict[str, set[int]]] = {}
    for topic, partition, broker in replicas:
        wanted.setdefault(broker, {}).setdefault(topic, set()).add(partition)
    out: dict[tuple[str, int, int], ReplicaLogDir] = {}
    for broker, topics in wanted.items():
        request = [{"topic": t, "partitions": sorted(ps)} for t, ps in topics.items()]
        found: dict[tuple[str, int], dict[bool, tuple[str, int]]] = {}
        for result in _log_dirs_of(admin, broker, request, timeout_ms):
            for t in result["topics"] if not result["error_code"] else ():
                for p in t["partitions"]:
                    where = found.setdefault((t["name"], p["partition_index"]), {})
                    where[bool(p["is_future_key"])] = (result["log_dir"], p["offset_lag"])
        for topic, partitions in topics.items():
            for partition in partitions:
                dirs = found.get((topic, partition), {})
                current, future = dirs.get(False, (None, -1)), dirs.get(True, (None, -1))
                out[(topic, partition, broker)] = ReplicaLogDir(*current, *future)
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
