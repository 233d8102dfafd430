"""DescribeLogDirs (35): how many bytes each partition takes on disk.

Kafka's ``kafka-log-dirs`` tool and ``samsa topics describe`` read partition
sizes here.  One result per log dir (``log.dirs``), each with the partitions
it holds; ``offset_lag`` is 0 because a replica that is its own leader lags nothing, and
``total_bytes``/``usable_bytes`` (v4+) come from the file system.  A dir
taken offline by an I/O error answers KAFKA_STORAGE_ERROR and no partitions,
as Kafka's does, beside the dirs that still work.
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

API_KEY = 35


def register(router: Router, broker: BrokerApi) -> None:
    router.register(API_KEY, lambda ctx, req: handle_describe_log_dirs(broker, ctx, req))


def handle_describe_log_dirs(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    wanted: dict[str, set[int]] | None = None
    if req.get("topics") is not None:
        wanted = defaultdict(set)
        for topic in req["topics"]:
            wanted[topic["topic"]].update(topic["partitions"])
    sizes: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for partition in broker.replicas.partitions():
        if wanted is not None and partition.index not in wanted.get(partition.topic, ()):
            continue
        sizes[str(partition.log.directory.parent)][partition.topic].append(
            {
                "partition_index": partition.index,
                "partition_size": partition.log.size_bytes,
                "offset_lag": 0,
                "is_future_key": False,
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
        "log_dir": str(log_dir.resolve()),
        "topics": [
            {"name": name, "partitions": sorted(parts, key=lambda p: int(p["partition_index"]))}
            for name, parts in sorted(sizes.items())
        ],
        "total_bytes": total,
        "usable_bytes": usable,
    }
