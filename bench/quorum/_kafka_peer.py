"""The quorum benchmark's ``latency`` case beside Apache Kafka's KRaft quorum
(``quorum_bench.py --cases latency --peer kafka``).

Three combined broker+controller nodes of each (``samsa.testing.cluster.LocalCluster``
with Kafka's default timeouts, ``samsa.testing.kafka.KafkaCluster`` with Kafka's shipped
heap and flags), both running at once; ``--topics`` topics (1 partition, RF 3) created
one at a time through confluent-kafka's ``AdminClient`` on each, alternating which
cluster goes first per topic. A CreateTopics answer means the controller quorum has
committed the topic's records, so its latency is the quorum's commit path as a client
sees it. Both sides first create ``WARMUP_TOPICS`` untimed topics (connections, the
JVM's JIT).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.common.cluster import local_cluster, spread, table
from bench.quorum._common import record_run
from samsa.testing.kafka import KafkaCluster

WARMUP_TOPICS = 20


def create(admin: Any, name: str) -> float:
    """One CreateTopics (1 partition, RF 3) round trip, in milliseconds."""
    from confluent_kafka.admin import NewTopic

    started = time.perf_counter()
    admin.create_topics([NewTopic(name, 1, 3)], request_timeout=30)[name].result(30)
    return (time.perf_counter() - started) * 1000


def create_latency_vs_kafka(args: argparse.Namespace) -> list[list[str]]:
    from confluent_kafka.admin import AdminClient

    print(
        f"[latency vs kafka] 3 combined nodes each, {args.topics} topics (1 partition, RF 3) "
        f"created one at a time with confluent-kafka's AdminClient, alternating; "
        f"{WARMUP_TOPICS} untimed warm-up topics on each; {args.runs} run(s), fresh clusters"
    )
    stats: dict[str, dict[str, list[float]]] = {
        side: {"p50": [], "p99": [], "max": []} for side in ("samsa", "kafka")
    }
    for run in range(args.runs):
        with ExitStack() as stack:
            samsa = stack.enter_context(local_cluster(3))
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kafka-bench-"))
            kafka = stack.enter_context(KafkaCluster(Path(tmp)))
            kafka.start(timeout=300)
            admins = {
                side: AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
                for side, cluster in (("samsa", samsa), ("kafka", kafka))
            }

            for side in admins:
                for i in range(WARMUP_TOPICS):
                    create(admins[side], f"warm-{i:03d}")
            times: dict[str, list[float]] = {side: [] for side in admins}
            for i in range(args.topics):
                order = list(admins) if i % 2 == 0 else list(admins)[::-1]
                for side in order:
                    times[side].append(create(admins[side], f"lat-{i:04d}"))
        for side, values in times.items():
            record_run(stats[side], values, "latency vs kafka", run, side)
    ratio = statistics.median(stats["samsa"]["p50"]) / statistics.median(stats["kafka"]["p50"])
    rows = [
        [
            f"CreateTopics on {side} (3 nodes, 1 partition, RF 3)",
            spread(values["p50"], "{:.1f}"),
            spread(values["p99"], "{:.1f}"),
            spread(values["max"], "{:.1f}"),
            f"**{ratio:.2f}x** of Kafka's p50" if side == "samsa" else "",
        ]
        for side, values in stats.items()
    ]
    print()
    print(table(["case", "p50 ms (min / median / max of runs)", "p99 ms", "max ms", "ratio"], rows))
    return rows
