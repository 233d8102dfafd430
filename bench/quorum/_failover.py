"""The quorum benchmark's ``failover`` case: SIGKILL of the active controller to
the next CreateTopics that succeeds through a survivor, with the election time
from the new controller's log.

Run by ``quorum_bench.py --cases failover``.  The killed node is restarted and
back in the quorum before the next kill.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import uuid
from datetime import datetime
from typing import Any

from bench.common.cluster import effective, local_cluster, print_settings, table, wait_until
from bench.quorum._common import admin
from samsa.client.admin.results import NewTopic
from samsa.errors import KafkaError
from samsa.testing.cluster import LocalCluster

FAILOVER_SETTINGS = {
    "fast": {
        "controller.quorum.fetch.timeout.ms": "1000",
        "controller.quorum.election.timeout.ms": "500",
    },
    "kafka-defaults": {
        "controller.quorum.fetch.timeout.ms": "2000",
        "controller.quorum.election.timeout.ms": "1000",
    },
}
ACTIVE_LINE = re.compile(r"^(\S+ \S+) .*node (\d+) is the active controller \(epoch (\d+)\)")


def quorum_leader(bootstrap: str) -> tuple[int, int]:
    with admin(bootstrap, 5000) as client:
        info = client.describe_metadata_quorum(timeout=5)
    return info.leader_id, info.leader_epoch


def _log_time(line: str) -> float:
    """The node's asctime ("2026-01-01 10:00:00,123") as a Unix timestamp."""
    return datetime.strptime(line, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _election_seconds(cluster: LocalCluster, survivors: list[int], since_wall: float) -> float:
    """Kill -> the first "is the active controller" line a survivor logged after it."""
    best = float("nan")
    for node_id in survivors:
        for line in cluster.nodes[node_id].log_lines:
            match = ACTIVE_LINE.match(line)
            if match:
                at = _log_time(match.group(1)) - since_wall
                if at >= -0.01 and not best <= at:
                    best = at
    return best


def _back_in_quorum(cluster: LocalCluster, node_id: int) -> bool:
    """``node_id`` is a voter with the leader's high watermark again, under a live leader."""
    with admin(cluster.bootstrap, 3000) as client:
        info = client.describe_metadata_quorum(timeout=3)
    if info.leader_id < 0:
        return False
    voter = {v.replica_id: v for v in info.voters}.get(node_id)
    return voter is not None and voter.log_end_offset >= info.high_watermark


def one_failover(cluster: LocalCluster, kill_no: int, attempt_timeout: float) -> dict[str, Any]:
    leader, epoch = quorum_leader(cluster.bootstrap)
    survivors = [n for n in cluster.nodes if n != leader]
    client = admin(cluster.bootstrap_of(survivors), int(attempt_timeout * 1000))
    client.list_topics(timeout=10)  # connected before the clock starts
    attempts, errors = 0, set()
    name = f"after-kill-{kill_no}-{uuid.uuid4().hex[:6]}"
    since_wall = time.time()
    start = time.perf_counter()
    cluster.kill(leader)
    ambiguous = False
    while True:
        attempts += 1
        try:
            client.create_topics([NewTopic(name, 1, 2)], timeout=attempt_timeout)
            break
        except KafkaError as exc:
            if exc.code.name == "TOPIC_ALREADY_EXISTS":
                ambiguous = True  # an earlier attempt committed but its answer was lost
                break
            errors.add(exc.code.name)
        except Exception as exc:  # timeouts, connection errors: retry at once
            errors.add(type(exc).__name__)
        if time.perf_counter() - start > 60:
            raise TimeoutError(f"no CreateTopics succeeded within 60 s of the kill: {errors}")
    took = time.perf_counter() - start
    client.close()
    election = _election_seconds(cluster, survivors, since_wall)
    new_leader, new_epoch = quorum_leader(cluster.bootstrap_of(survivors))
    cluster.start([leader], timeout=120)
    wait_until(lambda: _back_in_quorum(cluster, leader), 60, f"node {leader} back in the quorum")
    return {
        "killed": leader,
        "epoch": epoch,
        "new_leader": new_leader,
        "new_epoch": new_epoch,
        "seconds": took,
        "election": election,
        "attempts": attempts,
        "errors": sorted(errors),
        "ambiguous": ambiguous,
    }


def controller_failover(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    for label in args.failover_settings.split(","):
        settings = FAILOVER_SETTINGS[label]
        print_settings(f"failover {label}: 3 combined nodes", effective(settings))
        print(
            f"after each kill: CreateTopics (1 partition, RF 2) through the survivors, "
            f"attempts of {args.attempt_timeout:g} s each until one succeeds"
        )
        results = []
        with local_cluster(3, settings=settings) as cluster:
            with admin(cluster.bootstrap) as client:
                client.create_topics([NewTopic("warm", 1, 3)], timeout=30)
            for kill_no in range(args.kills):
                result = one_failover(cluster, kill_no, args.attempt_timeout)
                results.append(result)
                print(
                    f"[failover {label}] kill {kill_no + 1}: node {result['killed']} "
                    f"(epoch {result['epoch']}) -> node {result['new_leader']} "
                    f"(epoch {result['new_epoch']}): CreateTopics ok after "
                    f"{result['seconds']:.2f} s (new active controller logged at "
                    f"{result['election']:.2f} s), {result['attempts']} attempts, "
                    f"errors seen {result['errors']}"
                    + (" [ambiguous: already existed]" if result["ambiguous"] else ""),
                    flush=True,
                )
        seconds = [r["seconds"] for r in results]
        elections = [r["election"] for r in results if r["election"] == r["election"]]
        split = sum(1 for r in results if r["new_epoch"] - r["epoch"] > 1)
        p50 = statistics.median(seconds)
        target = (
            " (target <= 2 s: " + ("met" if p50 <= 2 else "NOT met") + ")"
            if label == "fast"
            else ""
        )
        rows.append(
            [
                f"fetch/election timeout {settings['controller.quorum.fetch.timeout.ms']}/"
                f"{settings['controller.quorum.election.timeout.ms']} ms",
                f"{p50:.2f}{target}",
                f"{min(seconds):.2f} / {max(seconds):.2f}",
                f"{statistics.median(elections):.2f}" if elections else "-",
                f"{split} of {len(seconds)}",
            ]
        )
    print()
    print(
        table(
            [
                "SIGKILL of the active controller -> CreateTopics ok",
                "p50 s",
                "min / max s",
                "p50 s to 'active controller' log line",
                "kills needing > 1 election round",
            ],
            rows,
        )
    )
    return rows
