"""DescribeLogDirs (35): how many bytes each partition takes on disk.

Kafka's ``kafka-log-dirs`` tool and ``samsa topics describe`` read partition
sizes here.  One data dir holds every log, so the answer has one directory;
``offset_lag`` is 0 because a replica that is its own leader lags nothing, and
``total_bytes``/``usable_bytes`` (v4+) come from the file system.  A dir
taken offline by an I/O error answers KAFKA_STORAGE_ERROR and no partitions,
as Kafka's does (until the broker, left without log dirs, stops).
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.server.router import Body, RequestContext, Router

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
    sizes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for partition in broker.replicas.partitions():
        if wanted is not None and partition.index not in wanted.get(partition.topic, ()):
            continue
        sizes[partition.topic].append(
            {
                "partition_index": partition.index,
                "partition_size": partition.log.size_bytes,
                "offset_lag": 0,
                "is_future_key": False,
            }
        )
    data_dir = broker.config.data_dir
    if str(data_dir) in broker.log_dir_failures.offline_dirs():
        failed = {
            "error_code": int(ErrorCode.KAFKA_STORAGE_ERROR),
            "log_dir": str(data_dir),
            "topics": [],
            "total_bytes": -1,
            "usable_bytes": -1,
        }
        return {"throttle_time_ms": 0, "error_code": 0, "results": [failed]}
    try:
        usage = shutil.disk_usage(data_dir)
        total, usable = usage.total, usage.free
    except OSError:
        total = usable = -1
    result: dict[str, Any] = {
        "error_code": 0,
        "log_dir": str(data_dir.resolve()),
        "topics": [
            {"name": name, "partitions": sorted(parts, key=lambda p: int(p["partition_index"]))}
            for name, parts in sorted(sizes.items())
        ],
        "total_bytes": total,
        "usable_bytes": usable,
    }
    return {"throttle_time_ms": 0, "error_code": 0, "results": [result]}
