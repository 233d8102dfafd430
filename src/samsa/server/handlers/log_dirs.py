"""DescribeLogDirs (35) and AlterReplicaLogDirs (34): the replicas in each log dir, and moving them.

Kafka's ``kafka-log-dirs`` tool and ``samsa topics describe`` read partition
sizes from DescribeLogDirs.  One result per log dir (``log.dirs``), each with
the partitions it holds; ``total_bytes``/``usable_bytes`` (v4+) come from the
file system.  A replica moving between dirs shows twice, as Kafka's does: its
current log where it is, and its future log in the target dir with
``is_future_key`` and ``offset_lag`` the offsets it is still behind; a current
log's lag is Kafka's ``max(high watermark - log end, 0)``.  A dir taken
offline by an I/O error answers KAFKA_STORAGE_ERROR and no partitions, as
Kafka's does, beside the dirs that still work.

AlterReplicaLogDirs (``kafka-reassign-partitions`` with ``log_dirs`` in its
plan) moves replicas of this broker to other dirs of it: see
replication/dir_moves for the checks and errors, one per partition, grouped
by topic in the answer as Kafka groups them.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

ALTER_REPLICA_LOG_DIRS = 34
API_KEY = 35


def register(router: Router, broker: BrokerApi) -> None:
    router.register(API_KEY, lambda ctx, req: handle_describe_log_dirs(broker, ctx, req))
    router.register(
        ALTER_REPLICA_LOG_DIRS, lambda ctx, req: handle_alter_replica_log_dirs(broker, ctx, req)
    )


def handle_describe_log_dirs(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    wanted: dict[str, set[int]] | None = None
    if req.get("topics") is not None:
        wanted = defaultdict(set)
        for topic in req["topics"]:
            wanted[topic["topic"]].update(topic["partitions"])

    def asked(topic: str, index: int) -> bool:
        return wanted is None or index in wanted.get(topic, ())

    sizes: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for partition in broker.replicas.partitions():
        if not asked(partition.topic, partition.index):
            continue
        sizes[str(partition.log.directory.parent)][partition.topic].append(
            {
                "partition_index": partition.index,
                "partition_size": partition.log.size_bytes,
                "offset_lag": max(partition.high_watermark - partition.log_end_offset, 0),
                "is_future_key": False,
            }
        )
    for future in broker.replicas.dir_moves.future_replicas():
        if asked(future.topic, future.partition):
            sizes[future.log_dir][future.topic].append(
                {
                    "partition_index": future.partition,
                    "partition_size": future.size_bytes,
                    "offset_lag": future.lag,
                    "is_future_key": True,
                }
            )
    offline = broker.log_dir_failures.offline_dirs()
    results = [
        _failed_dir(d) if str(d) in offline else _dir_result(d, sizes[str(d)])
        for d in broker.config.log_dirs
    ]
    return {"throttle_time_ms": 0, "error_code": 0, "results": results}


def _failed_dir(log_dir: Path) -> dict[str, Any]:
    return {
        "error_code": int(ErrorCode.KAFKA_STORAGE_ERROR),
        "log_dir": str(log_dir),
        "topics": [],
        "total_bytes": -1,
        "usable_bytes": -1,
    }


def _dir_result(log_dir: Path, sizes: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    try:
        usage = shutil.disk_usage(log_dir)
        total, usable = usage.total, usage.free
    except OSError:
        total = usable = -1
    return {
        "error_code": 0,
        "log_dir": str(log_dir.absolute()),  # as Kafka: absolute, links kept
        "topics": [
            {
                "name": name,
                "partitions": sorted(
                    parts, key=lambda p: (int(p["partition_index"]), bool(p["is_future_key"]))
                ),
            }
            for name, parts in sorted(sizes.items())
        ],
        "total_bytes": total,
        "usable_bytes": usable,
    }


async def handle_alter_replica_log_dirs(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    requested: dict[tuple[str, int], str] = {}
    for entry in req.get("dirs") or ():
        for topic in entry["topics"] or ():
            for index in topic["partitions"] or ():
                requested[(topic["name"], index)] = entry["path"]
    errors = await broker.replicas.dir_moves.alter(requested)
    return {"throttle_time_ms": 0, "results": answer(errors)}


def answer(errors: dict[tuple[str, int], ErrorCode]) -> list[dict[str, Any]]:
    """Each partition's error, grouped by topic (Kafka's response shape)."""
    by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (topic, index), code in errors.items():
        by_topic[topic].append({"partition_index": index, "error_code": int(code)})
    return [{"topic_name": t, "partitions": parts} for t, parts in by_topic.items()]
