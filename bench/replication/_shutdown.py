"""The replication benchmark's ``shutdown`` case: SIGTERM of a broker leading many
partitions under a paced producer, to process exit, with every record that failed.

Run by ``replication_bench.py --cases shutdown``.  Its partitions are created a
chunk at a time (``lead_partitions``) so that setting up does not fence the brokers.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import uuid
from functools import partial
from typing import Any

from bench.common.cluster import effective, local_cluster, print_settings, spread, table, wait_until
from bench.replication._common import (
    HEARTBEATS,
    active_controller,
    create_topic,
    logged_after,
    partitions_of,
    quiet_confluent,
    settled,
)
from bench.replication._paced_producer import PacedProducer
from samsa.testing.cluster import LocalCluster

GRANT_LINE = re.compile(r"^(\S+ \S+) .*broker (\d+) (may shut down|leads nothing)")


def lead_partitions(
    cluster: LocalCluster, victim: int, partitions: int, chunk: int
) -> list[tuple[str, int]]:
    """``partitions`` partitions (RF 3, min.insync.replicas=2) led by ``victim``.

    Created ``chunk`` at a time, each chunk settled before the next: creating a
    partition's log blocks a node's event loop, and 1,000 at once held every
    node's heartbeats past a 2 s session, so the controller fenced all three
    brokers (see the report).  A preferred election puts back any leadership a
    fence moved anyway.
    """
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient

    others = [n for n in sorted(cluster.nodes) if n != victim]
    targets: list[tuple[str, int]] = []
    run = uuid.uuid4().hex[:6]
    for index in range(-(-partitions // chunk)):
        count = min(chunk, partitions - index * chunk)
        topic = f"cs-{run}-{index:02d}"
        assignments = [[victim, *(others if p % 2 else others[::-1])] for p in range(count)]
        create_topic(cluster, topic, assignments, min_insync=2)
        wait_until(partial(settled, cluster, topic, None, 3, count), 120, f"{topic}'s ISR")
        targets += [(topic, p) for p in range(count)]
    topics = sorted({t for t, _ in targets})
    if not all(
        settled(cluster, t, victim, 3, len([1 for x, _ in targets if x == t])) for t in topics
    ):
        admin = AdminClient(quiet_confluent({"bootstrap.servers": cluster.bootstrap}))
        admin.elect_leaders(
            ElectionType.PREFERRED, [TopicPartition(t, p) for t, p in targets]
        ).result(60)
    for topic in topics:
        count = sum(1 for t, _ in targets if t == topic)
        wait_until(
            partial(settled, cluster, topic, victim, 3, count), 120, f"{topic} led by {victim}"
        )
    return targets


def one_shutdown(
    settings: dict[str, str], partitions: int, rate: float, chunk: int, client: str
) -> dict[str, Any]:
    with local_cluster(3, settings=settings) as cluster:
        controller = active_controller(cluster)
        victim = next(n for n in sorted(cluster.nodes) if n != controller)
        others = [n for n in sorted(cluster.nodes) if n != victim]
        targets = lead_partitions(cluster, victim, partitions, chunk)
        fenced_before = sum(
            "no heartbeat for more than" in line
            for n in cluster.nodes
            for line in cluster.nodes[n].log_lines
        )
        producer = PacedProducer(cluster.bootstrap, targets, rate, client=client)
        producer.start()
        wait_until(lambda: len(producer.deliveries) >= 3 * rate, 120, "3 s of acknowledged records")
        sent_before = producer.sent
        since_wall = time.time()
        started = time.perf_counter()
        code = cluster.stop(victim, timeout=120)
        took = time.perf_counter() - started
        sent_during = producer.sent - sent_before
        time.sleep(1)  # records sent during the shutdown get their answers
        producer.stop()
        still_led = 0
        for topic in sorted({t for t, _ in targets}):
            still_led += sum(
                p["leader_id"] == victim for p in partitions_of(cluster, others[0], topic)
            )
        log = cluster.nodes[victim].log_lines
        granted = logged_after(cluster.nodes[controller].log_lines, GRANT_LINE, victim, since_wall)
        return {
            "granted": granted,
            "victim": victim,
            "seconds": took,
            "exit": code,
            "failed": producer.failures(),
            "retries": producer.retries(),
            "during": sent_during,
            "delivered": sum(1 for d in producer.deliveries if d.error is None),
            "still_led": still_led,
            "not_granted": any("not granted" in line for line in log),
            "fenced_during_setup": fenced_before,
        }


def controlled_shutdown(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    rates = {"confluent": args.rate_confluent, "samsa": args.rate_samsa}
    for label in args.heartbeats.split(","):
        settings = HEARTBEATS[label]
        print_settings(f"shutdown {label}: 3 combined nodes", effective(settings))
        print(
            f"producer ({', '.join(clients)}, one per run in turn; records/s {rates}): "
            f"round-robin over the {args.partitions} partitions ({args.chunk} per topic), "
            f"acks=all, linger.ms=0"
        )
        results: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        for run in range(args.runs * len(clients)):
            client = clients[run % len(clients)]
            rate = rates[client]
            r = one_shutdown(settings, args.partitions, rate, args.chunk, client)
            results[client].append(r)
            print(
                f"[shutdown {label}] run {run + 1} ({client}): broker {r['victim']} "
                f"(led {args.partitions}) SIGTERM -> controller grants the shutdown at "
                f"{r['granted']:.2f} s -> exit {r['exit']} at {r['seconds']:.2f} s; "
                f"{r['during']} records sent meanwhile, failed {r['failed'] or 0}, "
                f"librdkafka retries {r['retries']}, partitions still led by it {r['still_led']}, "
                f"session expiries while setting up {r['fenced_during_setup']}"
                + (" [controlled shutdown NOT granted]" if r["not_granted"] else ""),
                flush=True,
            )
        for client, rs in results.items():
            seconds = [r["seconds"] for r in rs]
            failed = sum(sum(r["failed"].values()) for r in rs)
            median = statistics.median(seconds)
            retries = [r["retries"] for r in rs if r["retries"] is not None]
            grants = [r["granted"] for r in rs if r["granted"] == r["granted"]]
            rows.append(
                [
                    f"{settings['broker.heartbeat.interval.ms']}/"
                    f"{settings['broker.session.timeout.ms']} ms, {client} producer",
                    spread(seconds, "{:.2f}")
                    + f" (target <= 5 s: {'met' if median <= 5 else 'NOT met'})",
                    spread(grants, "{:.2f}"),
                    f"{failed} of {sum(r['during'] for r in rs):,} sent during the shutdowns "
                    f"(target 0: {'met' if failed == 0 else 'NOT met'})",
                    str(sum(retries)) if retries else "-",
                    str(sum(r["still_led"] for r in rs)),
                    f"{len(rs)} runs",
                ]
            )
    print()
    print(
        table(
            [
                f"heartbeat/session: SIGTERM of a broker leading {args.partitions} partitions -> exit",
                "s min / **median** / max",
                "of which until the controller grants it, s",
                "records failed",
                "librdkafka retries",
                "partitions still led by it after",
                "n",
            ],
            rows,
        )
    )
    return rows
