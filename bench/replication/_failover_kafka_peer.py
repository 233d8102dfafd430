"""Leader failover and controlled shutdown, three Samsa nodes beside three Apache
Kafka nodes at the same timeouts (``replication_bench.py --peer kafka``).

Both clusters run Kafka's default broker timeouts (heartbeat 2 s, session 9 s,
``samsa.testing.cluster`` with ``fast=False`` on Samsa's side). Everything a
client does goes through librdkafka on both sides:

* failover: one RF 3 partition (``min.insync.replicas=2``) whose leader is not
  the active controller; a producer sends 200 records/s with ``acks=all``; the
  leader gets SIGKILL; the figure is kill -> the first acknowledgement of a
  record produced after the kill (only a new leader can give it).
* shutdown: that leader leads ``--shutdown-partitions`` partitions; SIGTERM ->
  process exit (Kafka's and Samsa's controlled shutdown moves leadership first).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common.cluster import local_cluster, spread, table, wait_until
from bench.replication._kafka_peer import kafka_side
from samsa.client import Admin

RATE = 200


def quorum_leader(bootstrap: str) -> int:
    with Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": 10000}) as admin:
        return int(admin.describe_metadata_quorum(timeout=10).leader_id)


def create_led_by(bootstrap: str, topic: str, leader: int, partitions: int) -> None:
    """Partitions whose preferred (and so first) leader is ``leader``, full ISR."""
    others = [n for n in (1, 2, 3) if n != leader]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(
        topic,
        partitions,
        replica_assignment=[[leader, *others] for _ in range(partitions)],
        config={"min.insync.replicas": "2"},
    )
    admin.create_topics([new], request_timeout=120)[topic].result(180)

    def led_with_full_isr() -> bool:
        parts = admin.list_topics(topic, timeout=10).topics[topic].partitions
        return len(parts) == partitions and all(
            p.leader == leader and len(p.isrs) == 3 for p in parts.values()
        )

    wait_until(led_with_full_isr, 120, f"{topic} led by node {leader} with full ISR")


class PacedProducer:
    """``RATE`` records/s, acks=all; remembers when each record was produced and acked."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0,
             "message.timeout.ms": 60000, "enable.idempotence": False}
        )  # fmt: skip
        self.topic = topic
        self.acked: list[tuple[float, float]] = []  # (produced at, acked at)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self.stopping.is_set():
            next_at += 1 / RATE
            time.sleep(max(0.0, next_at - time.monotonic()))
            sent = time.monotonic()

            def done(err: Any, _msg: Any, sent: float = sent) -> None:
                if err is None:
                    self.acked.append((sent, time.monotonic()))

            self.producer.produce(self.topic, b"x" * 100, on_delivery=done)
            self.producer.poll(0)
        self.producer.flush(60)

    def first_after(self, moment: float) -> float | None:
        acks = [acked for sent, acked in list(self.acked) if sent > moment]
        return min(acks) if acks else None


@contextmanager
def samsa_side() -> Iterator[tuple[str, Any]]:
    with local_cluster(3) as cluster:
        yield cluster.bootstrap, cluster


SIDES = {"samsa": samsa_side, "kafka": kafka_side}


def one_run(name: str, shutdown_partitions: int) -> tuple[float, float]:
    """(failover s, controlled shutdown s) on a fresh cluster of ``name``."""
    with SIDES[name]() as side:
        bootstrap, cluster = side[0], side[1]
        controller = wait_until(partial(quorum_leader, bootstrap), 60, "a quorum leader")
        victim = next(n for n in (1, 2, 3) if n != controller)
        topic = f"fo-{uuid.uuid4().hex[:8]}"
        create_led_by(bootstrap, topic, victim, 1)
        producer = PacedProducer(bootstrap, topic)
        producer.thread.start()
        wait_until(lambda: len(producer.acked) >= RATE, 60, "a second of acknowledged records")
        killed_at = time.monotonic()
        cluster.kill(victim)
        first = wait_until(partial(producer.first_after, killed_at), 120, "an ack after the kill")
        producer.stopping.set()
        producer.thread.join(90)
        failover_s = first - killed_at
        cluster.start([victim], timeout=300)
        leader = next(n for n in (1, 2, 3) if n not in (victim, controller))
        many = f"sd-{uuid.uuid4().hex[:8]}"
        create_led_by(bootstrap, many, leader, shutdown_partitions)
        stopped_at = time.monotonic()
        cluster.stop(leader, timeout=300)
        return failover_s, time.monotonic() - stopped_at


def failover_vs_kafka(args: argparse.Namespace) -> list[list[str]]:
    print(
        f"[failover vs kafka] 3 nodes each, Kafka's default timeouts on both; {RATE} records/s "
        f"acks=all, SIGKILL of a leader that is not the active controller; then SIGTERM of a "
        f"node leading {args.shutdown_partitions} partitions"
    )
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in SIDES}
    for run in range(args.kills):
        for name in list(SIDES) if run % 2 == 0 else list(SIDES)[::-1]:
            failover_s, shutdown_s = one_run(name, args.shutdown_partitions)
            times[name].append((failover_s, shutdown_s))
            print(
                f"[failover vs kafka] run {run + 1} {name:5s}: failover {failover_s:.2f} s, "
                f"controlled shutdown {shutdown_s:.2f} s",
                flush=True,
            )
    rows = []
    for index, what in enumerate(("leader failover (s)", "controlled shutdown (s)")):
        s, k = ([t[index] for t in times[name]] for name in SIDES)
        ratio = statistics.median(s) / statistics.median(k)
        rows.append([what, spread(s, "{:.2f}"), spread(k, "{:.2f}"), f"{ratio:.2f}x"])
    print()
    print(table(["case", "samsa min / **median** / max", "kafka", "samsa/kafka"], rows))
    return rows
