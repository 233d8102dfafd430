"""The replication benchmark's ``throughput`` case: acks=all on RF 3 against acks=1
on RF 1, one producer per run in a fresh interpreter.

Run by ``replication_bench.py --cases throughput``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench.common.cluster import effective, local_cluster, print_settings, spread, table, wait_until
from bench.common.fresh_process import in_fresh_process
from bench.replication._common import create_topic, partitions_of, quiet_confluent, settled
from samsa.testing.cluster import LocalCluster

CLOCK_TICK = os.sysconf("SC_CLK_TCK")
PRODUCER = {"linger.ms": 5, "batch.size": 1_000_000}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def brokers_cpu(cluster: LocalCluster) -> float:
    return sum(
        cpu_seconds(node.proc.pid)
        for node in cluster.nodes.values()
        if node.proc is not None and node.running
    )


def produce_confluent(bootstrap: str, topic: str, n: int, size: int, acks: str) -> float:
    """Seconds from the first produce() to the end of flush(); raises on any failed record."""
    from confluent_kafka import Producer

    producer = Producer(
        quiet_confluent(
            {"bootstrap.servers": bootstrap, "acks": acks, "enable.idempotence": False, **PRODUCER}
        )
    )
    producer.list_topics(topic, timeout=10)
    failed: list[str] = []

    def report(err: Any, _msg: Any) -> None:
        if err is not None:
            failed.append(str(err))

    payload = os.urandom(size)
    produce, poll = producer.produce, producer.poll
    start = time.perf_counter()
    for _ in range(n):
        while True:
            try:
                produce(topic, payload, on_delivery=report)
                break
            except BufferError:
                poll(0.01)
    left = producer.flush(600)
    took = time.perf_counter() - start
    if left or failed:
        raise RuntimeError(f"confluent: {left} undelivered, {len(failed)} failed: {failed[:3]}")
    return took


def produce_samsa(bootstrap: str, topic: str, n: int, size: int, acks: str) -> float:
    from samsa.client import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "enable.idempotence": False,
            "linger.ms": PRODUCER["linger.ms"],
            "batch.size": PRODUCER["batch.size"],
        }
    )
    producer.partitions_for(topic)
    payload = os.urandom(size)
    send = producer.send
    futures = []
    start = time.perf_counter()
    for i in range(n):
        future = send(topic, payload)
        if i % 10_000 == 0 or i == n - 1:
            futures.append(future)  # a sample: every record's error is also counted below
    producer.flush()
    took = time.perf_counter() - start
    errors = [f.exception() for f in futures if f.exception() is not None]
    producer.close()
    if errors:
        raise RuntimeError(f"samsa: {len(errors)} sampled records failed: {errors[0]!r}")
    return took


CLIENTS: dict[str, Callable[[str, str, int, int, str], float]] = {
    "confluent": produce_confluent,
    "samsa": produce_samsa,
}


def end_offset(cluster: LocalCluster, topic: str) -> int:
    from samsa.client import Admin

    with Admin({"bootstrap.servers": cluster.bootstrap, "request.timeout.ms": 10000}) as admin:
        found = admin.list_offsets({(topic, 0): -1})
    return next(iter(found.values()))[0]


@dataclass(frozen=True)
class ThroughputCase:
    brokers: int
    rf: int
    acks: str
    min_insync: int | None


THROUGHPUT_CASES = {
    "1 broker, RF 1, acks=1": ThroughputCase(1, 1, "1", None),
    "3 brokers, RF 3, acks=all, min.insync.replicas=2": ThroughputCase(3, 3, "all", 2),
}


def throughput(args: argparse.Namespace) -> list[list[str]]:
    settings: dict[str, str] = {}
    print_settings("throughput", effective(settings))
    print(f"producer: {PRODUCER}, enable.idempotence=false, {args.records:,} x {args.size} B")
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    rates: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    for run in range(args.runs):
        for client in clients:
            cases = list(THROUGHPUT_CASES.items())
            if run % 2:
                cases.reverse()  # neither case always runs on a machine the other warmed
            for label, case in cases:
                with local_cluster(case.brokers, settings=settings) as cluster:
                    topic = f"tp-{uuid.uuid4().hex[:8]}"
                    create_topic(
                        cluster, topic, replication_factor=case.rf, min_insync=case.min_insync
                    )
                    wait_until(
                        partial(settled, cluster, topic, None, case.rf, 1),
                        30,
                        "the new partition's full ISR",
                    )
                    cpu_before = brokers_cpu(cluster)
                    secs = in_fresh_process(
                        client,
                        CLIENTS[client],
                        cluster.bootstrap,
                        topic,
                        args.records,
                        args.size,
                        case.acks,
                    )
                    broker_cpu = brokers_cpu(cluster) - cpu_before
                    end = end_offset(cluster, topic)
                    isr = partitions_of(cluster, 1, topic)[0]["isr_nodes"]
                assert end == args.records, f"end offset {end}, sent {args.records}"
                rate = args.records / secs
                rates.setdefault((client, label), []).append(rate)
                cpu.setdefault((client, label), []).append(broker_cpu)
                print(
                    f"[throughput] run {run + 1} {client:9s} {label}: {rate:10,.0f} records/s "
                    f"({secs:.2f} s), brokers' CPU {broker_cpu:.1f} s, end offset {end:,}, "
                    f"ISR {isr}",
                    flush=True,
                )
    rows = []
    single, replicated = list(THROUGHPUT_CASES)
    for client in clients:
        for label in THROUGHPUT_CASES:
            rows.append(
                [
                    f"{client}: {label}",
                    spread(rates[(client, label)], "{:,.0f}"),
                    f"{statistics.median(rates[(client, label)]) * args.size / 1e6:.1f}",
                    spread(cpu[(client, label)], "{:.1f}"),
                    "",
                ]
            )
        ratio = statistics.median(rates[(client, replicated)]) / statistics.median(
            rates[(client, single)]
        )
        per_run = [
            r / s for r, s in zip(rates[(client, replicated)], rates[(client, single)], strict=True)
        ]
        rows[-1][4] = (
            f"**{ratio:.2f}x** of RF 1 (per run {', '.join(f'{x:.2f}' for x in per_run)}); "
            f"target >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'}"
        )
    print()
    print(
        table(
            ["case", "records/s min / **median** / max", "MB/s", "brokers' CPU s", "ratio"],
            rows,
        )
    )
    return rows
