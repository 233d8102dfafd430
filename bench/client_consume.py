"""Consume benchmark: Samsa consumer vs kafka-python vs confluent-kafka on the same broker.

Produces N x 100-byte records once (confluent-kafka), then runs each client
3 times interleaved over the whole topic from the beginning, touching every
record's key, value and offset, and prints medians and ratios.  Starts its own
tansu unless --bootstrap is given.

    .venv/bin/python bench/client_consume.py [--records 1000000] [--bootstrap host:port]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "client"))

TOPIC = "bench-consume"


def produce(bootstrap: str, n: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the future
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(10)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1000000})
    value = b"v" * 100
    for i in range(n):
        while True:
            try:
                p.produce(TOPIC, value, key=b"%d" % i)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10000 == 0:
            p.poll(0)
    p.flush(60)


def run_samsa(bootstrap: str, n: int) -> float:
    from samsa.client.consumer import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
    c.assign([(TOPIC, 0)])
    count = total = 0
    t0 = time.perf_counter()
    while count < n:
        for r in c.poll(1.0):
            total += len(r.key) + len(r.value) + r.offset
            count += 1
    elapsed = time.perf_counter() - t0
    c.close()
    return count / elapsed


def run_kafka_python(bootstrap: str, n: int) -> float:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None)
    c.assign([TopicPartition(TOPIC, 0)])
    count = total = 0
    t0 = time.perf_counter()
    while count < n:
        for recs in c.poll(1000).values():
            for r in recs:
                total += len(r.key) + len(r.value) + r.offset
                count += 1
    elapsed = time.perf_counter() - t0
    c.close()
    return count / elapsed


def run_confluent(bootstrap: str, n: int) -> float:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False})
    c.assign([TopicPartition(TOPIC, 0, 0)])
    count = total = 0
    t0 = time.perf_counter()
    while count < n:
        for m in c.consume(500, 1.0):
            if m.error():
                continue
            total += len(m.key()) + len(m.value()) + m.offset()
            count += 1
    elapsed = time.perf_counter() - t0
    c.close()
    return count / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bootstrap")
    args = parser.parse_args(argv)
    broker: Any = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from _tansu import Tansu

        broker = Tansu()
        bootstrap = broker.bootstrap
    try:
        produce(bootstrap, args.records)
        clients = {"samsa": run_samsa, "kafka-python": run_kafka_python, "confluent": run_confluent}
        results: dict[str, list[float]] = {name: [] for name in clients}
        for run in range(args.runs):
            for name, fn in clients.items():
                rate = fn(bootstrap, args.records)
                results[name].append(rate)
                print(f"run {run + 1} {name:13s} {rate:12,.0f} records/s", flush=True)
        med = {name: statistics.median(v) for name, v in results.items()}
        for name, m in med.items():
            print(f"RESULT client={name} records_per_s={m:.0f}")
        print(f"samsa / kafka-python = {med['samsa'] / med['kafka-python']:.2f}x (target >= 5)")
        print(f"samsa / confluent    = {med['samsa'] / med['confluent']:.2f}x (target >= 0.75)")
    finally:
        if broker is not None:
            broker.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
