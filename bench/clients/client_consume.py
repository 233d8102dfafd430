"""Consume benchmark: Samsa consumer vs kafka-python vs confluent-kafka on the same broker.

Produces N x 100-byte records once (confluent-kafka), then runs each client
3 times interleaved over the whole topic from the beginning, touching every
record's key, value and offset, and prints medians and ratios.  One row per
broker: the peer broker tansu (its low CPU use keeps the comparison about the
clients) and Samsa's own broker, each started fresh, one after the other.
--bootstrap measures against an already running broker instead.

Two confluent-kafka columns.  ``confluent`` runs with librdkafka's defaults,
the loop the issue's target names.  With those, librdkafka (>= 2.4) stops
fetching for ``fetch.queue.backoff.ms`` (1 s) whenever 100,000 of its messages
are queued, so its rate depends on how many such pauses a run happens to hit:
about 1.8M records/s with none, 0.6M with one, 0.4M with two (measured here).
``confluent-unpaused`` sets ``fetch.queue.backoff.ms=10`` and shows what its C
decoder and consume() loop do without the pauses; the ratio against it is
printed too, so a lucky or unlucky median cannot hide either figure.

    .venv/bin/python -m bench.clients.client_consume [--records 1000000] [--brokers tansu,samsa]
    .venv/bin/python -m bench.clients.client_consume --bootstrap host:port
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from bench.common.brokers import broker

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


def run_confluent(bootstrap: str, n: int, **extra: object) -> float:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False, **extra}
    )
    c.assign([TopicPartition(TOPIC, 0, 0)])
    count = total = 0
    t0 = time.perf_counter()
    while count < n:
        for m in c.consume(500, 1.0):
            if m.error():
                continue
            total += len(m.key()) + len(m.value()) + m.offset()  # type: ignore[arg-type, operator]
            count += 1
    elapsed = time.perf_counter() - t0
    c.close()
    return count / elapsed


def run_confluent_unpaused(bootstrap: str, n: int) -> float:
    return run_confluent(bootstrap, n, **{"fetch.queue.backoff.ms": 10})


CLIENTS: dict[str, Callable[[str, int], float]] = {
    "samsa": run_samsa,
    "kafka-python": run_kafka_python,
    "confluent": run_confluent,
    "confluent-unpaused": run_confluent_unpaused,
}


def bench(label: str, bootstrap: str, records: int, runs: int) -> dict[str, float]:
    """Produce, run every client ``runs`` times interleaved, print and return medians."""
    produce(bootstrap, records)
    results: dict[str, list[float]] = {name: [] for name in CLIENTS}
    for run in range(runs):
        for name, fn in CLIENTS.items():
            rate = fn(bootstrap, records)
            results[name].append(rate)
            print(f"[{label}] run {run + 1} {name:18s} {rate:12,.0f} records/s", flush=True)
    med = {name: statistics.median(v) for name, v in results.items()}
    for name, m in med.items():
        print(f"RESULT broker={label} client={name} records_per_s={m:.0f}")
    print(
        f"[{label}] samsa / kafka-python = {med['samsa'] / med['kafka-python']:.2f}x (target >= 5)"
    )
    print(
        f"[{label}] samsa / confluent    = {med['samsa'] / med['confluent']:.2f}x (target >= 0.75)"
    )
    print(
        f"[{label}] samsa / confluent-unpaused = "
        f"{med['samsa'] / med['confluent-unpaused']:.2f}x (librdkafka without its 1 s pauses)"
    )
    return med


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--brokers", default="tansu,samsa", help="comma-separated: tansu, samsa")
    parser.add_argument("--bootstrap", help="use this running broker instead of starting any")
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, float]] = {}
    if args.bootstrap:
        rows[args.bootstrap] = bench(args.bootstrap, args.bootstrap, args.records, args.runs)
    else:
        for name in args.brokers.split(","):
            with broker(name.strip()) as bootstrap:
                rows[name] = bench(name, bootstrap, args.records, args.runs)
    print(
        f"\n{'broker':8s} {'samsa':>10s} {'kafka-python':>13s} {'confluent':>10s} "
        f"{'unpaused':>10s}  vs kp  vs ck  vs unpaused"
    )
    for label, med in rows.items():
        samsa = med["samsa"]
        print(
            f"{label:8s} {samsa:10,.0f} {med['kafka-python']:13,.0f} {med['confluent']:10,.0f} "
            f"{med['confluent-unpaused']:10,.0f}  {samsa / med['kafka-python']:4.2f}x "
            f"{samsa / med['confluent']:4.2f}x {samsa / med['confluent-unpaused']:4.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
