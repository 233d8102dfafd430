"""The quorum benchmark's ``latency`` case: one-at-a-time CreateTopics through
Samsa's Admin and confluent-kafka's AdminClient, interleaved on one cluster.

Run by ``quorum_bench.py --cases latency``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from bench.common.cluster import (
    effective,
    local_cluster,
    print_settings,
    spread,
    table,
    wait_until,
)
from bench.quorum._common import admin, record_run
from samsa.client import Admin
from samsa.client.admin.results import NewTopic


def create_latency(args: argparse.Namespace) -> list[list[str]]:
    """p50/p99 of one-at-a-time CreateTopics, samsa Admin and confluent side by side."""
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.admin import NewTopic as CNewTopic

    settings: dict[str, str] = {}
    print_settings("latency: 3 combined nodes", effective(settings))
    per_client: dict[str, dict[str, list[float]]] = {
        c: {"p50": [], "p99": [], "max": []} for c in ("samsa", "confluent")
    }
    for run in range(args.runs):
        with local_cluster(3, settings=settings) as cluster:
            samsa_admin = admin(cluster.bootstrap)
            peer = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})

            def samsa_create(name: str, samsa_admin: Admin = samsa_admin) -> None:
                samsa_admin.create_topics([NewTopic(name, 1, 3)], timeout=30)

            def confluent_create(name: str, peer: AdminClient = peer) -> None:
                peer.create_topics([CNewTopic(name, 1, 3)], request_timeout=30)[name].result(30)

            creators: dict[str, Callable[[str], None]] = {
                "samsa": samsa_create,
                "confluent": confluent_create,
            }
            for name, create in creators.items():  # connections and metadata, not timed
                create(f"warm-{name}")
            times: dict[str, list[float]] = {name: [] for name in creators}
            for i in range(args.topics):
                order = list(creators) if i % 2 == 0 else list(reversed(creators))
                for name in order:
                    start = time.perf_counter()
                    creators[name](f"lat-{name}-{i:04d}")
                    times[name].append((time.perf_counter() - start) * 1000)
            expected = len(creators) * args.topics

            def all_visible(client: Admin = samsa_admin, expected: int = expected) -> bool:
                # A broker learns the last commits up to a Raft fetch wait later.
                return sum(t.startswith("lat-") for t in client.list_topics()) == expected

            wait_until(all_visible, 10, f"all {expected} topics in the metadata")
            samsa_admin.close()
        for name, values in times.items():
            record_run(per_client[name], values, "latency", run, name)
    rows = []
    for name, stats in per_client.items():
        rows.append(
            [
                f"CreateTopics, {name} Admin (1 partition, RF 3)",
                spread(stats["p50"], "{:.1f}"),
                spread(stats["p99"], "{:.1f}"),
                spread(stats["max"], "{:.1f}"),
                f"{args.topics} topics x {args.runs} runs",
            ]
        )
    print()
    print(table(["case", "p50 ms (min / median / max of runs)", "p99 ms", "max ms", "n"], rows))
    return rows
