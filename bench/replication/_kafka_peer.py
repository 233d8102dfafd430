"""The replication benchmark's throughput case with Apache Kafka beside Samsa
(``replication_bench.py --cases throughput --peer kafka``).

Three combined-role nodes of each (``samsa.testing.cluster.LocalCluster`` with
Kafka's default timeouts, ``samsa.testing.kafka.KafkaCluster`` with Kafka's
shipped heap and flags), one partition with replication factor 3 and
``min.insync.replicas=2``, the same confluent-kafka producer with ``acks=all``
in a fresh interpreter per run; fresh clusters per run, alternating which
goes first. Both sides get the same un-counted warm-up (``--warmup-records``
through the same producer on each fresh cluster before the timed run).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common.cluster import local_cluster, spread, table, wait_until
from bench.common.fresh_process import in_fresh_process
from bench.replication._common import create_topic, settled
from bench.replication._throughput import brokers_cpu, produce_confluent
from samsa.testing.kafka import KafkaCluster

RF, MIN_INSYNC = 3, 2


def _full_isr(bootstrap: str, topic: str) -> bool:
    found = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    parts = found.topics[topic].partitions
    return bool(parts) and all(len(p.isrs) == RF for p in parts.values())


def _end_offset(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"end-{topic}"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1])
    finally:
        consumer.close()


@contextmanager
def samsa_side() -> Iterator[tuple[str, Any, Callable[[str], None]]]:
    with local_cluster(3) as cluster:

        def create(topic: str) -> None:
            create_topic(cluster, topic, replication_factor=RF, min_insync=MIN_INSYNC)
            wait_until(partial(settled, cluster, topic, None, RF, 1), 60, "the full ISR")

        yield cluster.bootstrap, cluster, create


@contextmanager
def kafka_side() -> Iterator[tuple[str, Any, Callable[[str], None]]]:
    with tempfile.TemporaryDirectory(prefix="kafka-bench-") as tmp, KafkaCluster(Path(tmp)) as cluster:  # fmt: skip
        cluster.start(timeout=300)

        def create(topic: str) -> None:
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
            new = NewTopic(topic, 1, RF, config={"min.insync.replicas": str(MIN_INSYNC)})
            admin.create_topics([new])[topic].result(60)
            wait_until(partial(_full_isr, cluster.bootstrap, topic), 60, "the full ISR")

        yield cluster.bootstrap, cluster, create


SIDES = {"samsa": samsa_side, "kafka": kafka_side}


def throughput_vs_kafka(args: argparse.Namespace) -> list[list[str]]:
    warmup = args.warmup_records
    print(
        f"[throughput vs kafka] 3 nodes each, RF {RF}, min.insync.replicas={MIN_INSYNC}, "
        f"acks=all, confluent-kafka, {args.records:,} x {args.size} B; the same warm-up on "
        f"both sides, not counted: {warmup:,} records per fresh cluster"
    )
    rates: dict[str, list[float]] = {name: [] for name in SIDES}
    cpu: dict[str, list[float]] = {name: [] for name in SIDES}
    for run in range(args.runs):
        order = list(SIDES) if run % 2 == 0 else list(SIDES)[::-1]
        for name in order:
            with SIDES[name]() as (bootstrap, cluster, create):
                topic = f"tp-{uuid.uuid4().hex[:8]}"
                create(topic)
                if warmup:
                    in_fresh_process("warm-up", produce_confluent, bootstrap, topic, warmup, args.size, "all")  # fmt: skip
                before = brokers_cpu(cluster)
                secs = in_fresh_process(
                    name, produce_confluent, bootstrap, topic, args.records, args.size, "all"
                )
                used = brokers_cpu(cluster) - before
                end = _end_offset(bootstrap, topic)
            assert end == args.records + warmup, f"{name}: end offset {end}"
            rates[name].append(args.records / secs)
            cpu[name].append(used)
            print(
                f"[throughput vs kafka] run {run + 1} {name:5s}: {args.records / secs:10,.0f} "
                f"records/s ({secs:.2f} s), brokers' CPU {used:.1f} s",
                flush=True,
            )
    ratio = statistics.median(rates["samsa"]) / statistics.median(rates["kafka"])
    gb = args.records * args.size / 1e9
    rows = [
        [
            f"{name}: 3 nodes, RF 3, acks=all",
            spread(rates[name], "{:,.0f}"),
            f"{statistics.median(cpu[name]) / gb:.0f}",
            f"**{ratio:.2f}x** of Kafka" if name == "samsa" else "",
        ]
        for name in SIDES
    ]
    print()
    print(table(["case", "records/s min / **median** / max", "brokers' CPU s/GB", "ratio"], rows))
    return rows
