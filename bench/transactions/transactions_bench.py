"""Transactions' cost on one Samsa broker, as ratios measured side by side in one run.

* transactional produce, 1,000-record transactions committed back to back, as a
  ratio of the idempotent producer at the same settings (issue target >= 0.7);
* the same with a commit every 100 ms (target >= 0.9);
* a read_committed consume of a transactional log as a ratio of read_uncommitted
  of the same log (target >= 0.9).

confluent-kafka is the load client throughout; cases are interleaved run by run
(their order rotated each run) and the medians reported.

    .venv/bin/python -m bench.transactions.transactions_bench --records 200000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

PRODUCER = {"linger.ms": 5, "batch.size": 1_000_000, "enable.idempotence": True}


def new_topic(bootstrap: str) -> str:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def produce_one(p: Producer, topic: str, value: bytes) -> None:
    """Queue one record, serving delivery reports while the queue is full."""
    while True:
        try:
            p.produce(topic, value)
            return
        except BufferError:
            p.poll(0.01)


def produce_idempotent(bootstrap: str, topic: str, records: int, value: bytes) -> float:
    p = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    started = time.perf_counter()
    for _ in range(records):
        produce_one(p, topic, value)
    p.flush(120)
    return records / (time.perf_counter() - started)


def produce_transactional(
    bootstrap: str,
    topic: str,
    records: int,
    value: bytes,
    *,
    per_txn: int | None = None,
    interval_s: float | None = None,
) -> float:
    """Commit every ``per_txn`` records, or every ``interval_s`` seconds."""
    p = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"b-{uuid.uuid4().hex}", **PRODUCER}
    )
    p.init_transactions(30)
    started = time.perf_counter()
    p.begin_transaction()
    in_txn = 0
    last_commit = started
    for _ in range(records):
        produce_one(p, topic, value)
        in_txn += 1
        due = (per_txn is not None and in_txn >= per_txn) or (
            interval_s is not None and time.perf_counter() - last_commit >= interval_s
        )
        if due:
            p.commit_transaction(60)
            p.begin_transaction()
            in_txn, last_commit = 0, time.perf_counter()
    p.commit_transaction(60)
    return records / (time.perf_counter() - started)


def consume(bootstrap: str, topic: str, records: int, isolation: str) -> float:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"b-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0
    started = time.perf_counter()
    deadline = started + 300
    while got < records and time.perf_counter() < deadline:
        for msg in c.consume(10_000, 0.5):
            if msg.error() is None:
                got += 1
    elapsed = time.perf_counter() - started
    c.close()
    if got < records:
        raise RuntimeError(f"{isolation}: read {got} of {records} records")
    return records / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    value = b"v" * args.record_size
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        broker = BrokerProcess(Path(tmp) / "data")
        broker.start()
        try:
            bootstrap = broker.bootstrap
            cases: dict[str, Callable[[], float]] = {
                "idempotent": lambda: produce_idempotent(
                    bootstrap, new_topic(bootstrap), args.records, value
                ),
                "txn 1000 records": lambda: produce_transactional(
                    bootstrap, new_topic(bootstrap), args.records, value, per_txn=1000
                ),
                "txn every 100 ms": lambda: produce_transactional(
                    bootstrap, new_topic(bootstrap), args.records, value, interval_s=0.1
                ),
            }
            produce_idempotent(bootstrap, new_topic(bootstrap), args.records // 10, value)  # warm
            names = list(cases)
            for run in range(args.runs):
                # Rotate the order so no case always runs first (or last) in a run.
                for name in names[run % len(names) :] + names[: run % len(names)]:
                    results.setdefault(name, []).append(cases[name]())
                log_topic = new_topic(bootstrap)
                produce_transactional(bootstrap, log_topic, args.records, value, per_txn=1000)
                isolations = ["read_uncommitted", "read_committed"]
                for isolation in isolations if run % 2 == 0 else isolations[::-1]:
                    rate = consume(bootstrap, log_topic, args.records, isolation)
                    results.setdefault(isolation, []).append(rate)
        finally:
            broker.stop()
            broker.kill()
    median = {name: statistics.median(rates) for name, rates in results.items()}
    print(f"{args.runs} runs, {args.records:,} records of {args.record_size} B; medians\n")
    print("| case | records/s | ratio | target |")
    print("|---|---|---|---|")
    rows = [
        ("idempotent produce", "idempotent", None, None),
        ("transactional, 1,000-record commits", "txn 1000 records", "idempotent", 0.7),
        ("transactional, commit every 100 ms", "txn every 100 ms", "idempotent", 0.9),
        ("consume read_uncommitted", "read_uncommitted", None, None),
        ("consume read_committed", "read_committed", "read_uncommitted", 0.9),
    ]
    for label, key, base, target in rows:
        ratio = "" if base is None else f"{median[key] / median[base]:.2f}"
        print(f"| {label} | {median[key]:,.0f} | {ratio} | {'' if target is None else target} |")


if __name__ == "__main__":
    main()
