"""The replication benchmark's ``failover`` case: SIGKILL of a partition's leader
to the first record the new leader acknowledges, seen by a paced producer and by
direct Produce probes, with the fence and election times from the logs.

Run by ``replication_bench.py --cases failover``.  ``ProduceProbe`` is this case's
alone; the producer it shares with ``shutdown`` is ``_replication_paced_producer``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import threading
import time
import uuid
from typing import Any

from bench.common.cluster import call, effective, local_cluster, print_settings, table, wait_until
from bench.replication._common import (
    HEARTBEATS,
    active_controller,
    create_topic,
    logged_after,
    partitions_of,
    settled,
)
from bench.replication._paced_producer import Delivery, PacedProducer
from samsa.testing.cluster import LocalCluster

PRODUCE = 0
FENCE_LINE = re.compile(r"^(\S+ \S+) .*fencing broker (\d+): no heartbeat")
LEADER_LINE = re.compile(r"^(\S+ \S+) .*\[(.+)-0\] leader at epoch")


class ProduceProbe:
    """One-record Produce requests (acks=all) straight to each surviving node every
    20 ms, one thread per node: the first success after the kill is when the new
    leader serves writes, with no client metadata refresh in the way."""

    def __init__(self, cluster: LocalCluster, nodes: list[int], topic: str) -> None:
        self.addresses = {n: f"127.0.0.1:{cluster.client_ports[n]}" for n in nodes}
        self.topic = topic
        self.successes: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(n,), daemon=True) for n in self.addresses
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def _body(self) -> dict[str, Any]:
        from samsa.protocol.batches.record_builder import RecordBatchBuilder

        builder = RecordBatchBuilder()
        builder.append(time.time_ns() // 1_000_000, None, b"probe")
        return {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": 1000,
            "topic_data": [
                {
                    "name": self.topic,
                    "partition_data": [{"index": 0, "records": bytes(builder.build())}],
                }
            ],
        }

    def _run(self, node: int) -> None:
        while not self._stop.is_set():
            sent = time.perf_counter()
            try:
                answer = call(self.addresses[node], PRODUCE, 9, self._body(), timeout=2)
                code = answer["responses"][0]["partition_responses"][0]["error_code"]
                if code == 0:
                    self.successes.append((sent, node))
            except Exception:
                pass
            self._stop.wait(0.02)

    def first_after(self, moment: float) -> tuple[float, int] | None:
        found = [s for s in list(self.successes) if s[0] >= moment]
        return min(found) if found else None

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)


def one_failover(
    cluster: LocalCluster, kill_no: int, timeout_ms: int, client: str
) -> dict[str, Any]:
    controller = active_controller(cluster)
    candidates = [n for n in sorted(cluster.nodes) if n != controller]
    victim = candidates[kill_no % len(candidates)]
    others = [n for n in sorted(cluster.nodes) if n != victim]
    topic = f"fo-{kill_no}-{uuid.uuid4().hex[:6]}"
    create_topic(cluster, topic, [[victim, *others]], min_insync=2)
    wait_until(lambda: settled(cluster, topic, victim, 3, 1), 30, f"{topic} led by {victim}")
    producer = PacedProducer(
        cluster.bootstrap, [(topic, 0)], 200, client=client, delivery_timeout_ms=timeout_ms
    )
    producer.start()
    wait_until(lambda: len(producer.deliveries) >= 200, 30, "a second of acknowledged records")
    probe = ProduceProbe(cluster, others, topic)
    probe.start()
    since_wall = time.time()
    killed_at = time.perf_counter()
    cluster.kill(victim)

    def acked_after_kill() -> Delivery | None:
        for d in list(producer.deliveries):
            if d.sent >= killed_at and d.error is None:
                return d
        return None

    first = wait_until(acked_after_kill, 60, "a record produced after the kill acknowledged")
    probed = wait_until(lambda: probe.first_after(killed_at), 60, "a probe accepted")
    producer.stop()
    probe.stop()
    fenced = logged_after(cluster.nodes[controller].log_lines, FENCE_LINE, victim, since_wall)
    new_leader = partitions_of(cluster, others[0], topic)[0]["leader_id"]
    leading = logged_after(cluster.nodes[new_leader].log_lines, LEADER_LINE, topic, since_wall)
    failed = producer.failures()
    cluster.start([victim], timeout=120)  # ready = registered and unfenced again
    return {
        "victim": victim,
        "controller": controller,
        "new_leader": new_leader,
        "seconds": first.acked - killed_at,
        "probe": probed[0] - killed_at,
        "fenced": fenced,
        "leading": leading,
        "failed": failed,
    }


def failover(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    for label in args.heartbeats.split(","):
        settings = HEARTBEATS[label]
        print_settings(f"failover {label}: 3 combined nodes", effective(settings))
        print(
            f"producers ({', '.join(clients)}, one per kill in turn): 200 records/s, acks=all, "
            f"linger.ms=0, idempotence off, delivery timeout {args.delivery_timeout_ms} ms"
        )
        results: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        with local_cluster(3, settings=settings) as cluster:
            for kill_no in range(args.kills * len(clients)):
                client = clients[kill_no % len(clients)]
                r = one_failover(cluster, kill_no, args.delivery_timeout_ms, client)
                results[client].append(r)
                print(
                    f"[failover {label}] kill {kill_no + 1} ({client}): leader {r['victim']} "
                    f"(controller {r['controller']}) -> {r['new_leader']}: fenced at "
                    f"{r['fenced']:.2f} s, new leader logged at {r['leading']:.2f} s, first "
                    f"direct Produce accepted (sent) at {r['probe']:.2f} s, first {client} record "
                    f"sent after the kill acknowledged at {r['seconds']:.2f} s; "
                    f"records failed {r['failed'] or 0}",
                    flush=True,
                )
        every = [r for rs in results.values() for r in rs]
        fences = [r["fenced"] for r in every if r["fenced"] == r["fenced"]]
        leads = [r["leading"] for r in every if r["leading"] == r["leading"]]
        probes = [r["probe"] for r in every]
        setting = (
            f"{settings['broker.heartbeat.interval.ms']}/{settings['broker.session.timeout.ms']} ms"
        )

        def verdict(p50: float, label: str = label) -> str:
            return (
                f" (target <= 3 s: {'met' if p50 <= 3 else 'NOT met'})" if label == "fast" else ""
            )

        p50 = statistics.median(probes)
        rows.append(
            [
                f"{setting}: direct Produce to each survivor every 20 ms",
                f"{p50:.2f}{verdict(p50)}",
                f"{min(probes):.2f} / {max(probes):.2f}",
                f"{statistics.median(fences):.2f}" if fences else "-",
                f"{statistics.median(leads):.2f}" if leads else "-",
                "-",
                f"{len(probes)} kills",
            ]
        )
        for client, rs in results.items():
            seconds = [r["seconds"] for r in rs]
            p50 = statistics.median(seconds)
            failed = sum(sum(r["failed"].values()) for r in rs)
            rows.append(
                [
                    f"{setting}: {client} producer",
                    f"{p50:.2f}{verdict(p50)}",
                    f"{min(seconds):.2f} / {max(seconds):.2f}",
                    "",
                    "",
                    str(failed),
                    f"{len(seconds)} kills",
                ]
            )
    print()
    print(
        table(
            [
                "heartbeat/session: SIGKILL of a partition leader -> first record acknowledged "
                "on the new leader",
                "p50 s",
                "min / max s",
                "p50 s to the controller's fence",
                "p50 s to the new leader's log line",
                "records failed (delivery timeout)",
                "n",
            ],
            rows,
        )
    )
    return rows
