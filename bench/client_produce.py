#!/usr/bin/env python3
"""Producer throughput: Samsa's client vs kafka-python vs confluent-kafka, same broker.

One row per broker: the peer broker tansu (memory://, its low CPU use keeps
the comparison about the clients) and Samsa's own broker, each client run on a
fresh broker and a fresh 1-partition topic; ``--bootstrap`` measures against
an already running broker instead.  Each client runs ``--runs`` times,
interleaved (samsa, kafka-python, confluent, samsa, ...), with identical
settings: acks=1, idempotence off, linger.ms=5, batch.size=1000000, 100-byte
values, no keys.  Time runs from the first send to the end of flush().  Prints
per-run lines, medians and the ratios the issue targets (Samsa >= 10x
kafka-python, >= 0.5x confluent-kafka).

  .venv/bin/python bench/client_produce.py                 # 1,000,000 records, 3 runs, both brokers
  .venv/bin/python bench/client_produce.py --records 200000 --clients samsa --brokers samsa
  .venv/bin/python bench/client_produce.py --profile       # cProfile one Samsa run (tansu)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from contextlib import nullcontext
from typing import Any

from _brokers import broker

SETTINGS = {"acks": 1, "linger_ms": 5, "batch_size": 1_000_000}


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)


def run_samsa(bootstrap: str, topic: str, n: int, payload: bytes) -> float:
    from samsa.client import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": SETTINGS["acks"],
            "enable.idempotence": False,
            "linger.ms": SETTINGS["linger_ms"],
            "batch.size": SETTINGS["batch_size"],
        }
    )
    p.partitions_for(topic)  # metadata before the clock starts, as the peers do
    errors: list[BaseException] = []
    send = p.send
    t0 = time.perf_counter()
    for _ in range(n - 1):
        send(topic, payload)
    last = send(topic, payload)
    p.flush()
    secs = time.perf_counter() - t0
    if last.exception() is not None:
        errors.append(last.exception())  # type: ignore[arg-type]
    p.close()
    if errors:
        raise RuntimeError(f"samsa produce failed: {errors[0]!r}")
    return secs


def run_kafka_python(bootstrap: str, topic: str, n: int, payload: bytes) -> float:
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=bootstrap,
        acks=SETTINGS["acks"],
        linger_ms=SETTINGS["linger_ms"],
        batch_size=SETTINGS["batch_size"],
        enable_idempotence=False,
    )
    p.partitions_for(topic)
    t0 = time.perf_counter()
    for _ in range(n):
        p.send(topic, payload)
    p.flush(600)
    secs = time.perf_counter() - t0
    p.close()
    return secs


def run_confluent(bootstrap: str, topic: str, n: int, payload: bytes) -> float:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": SETTINGS["acks"],
            "enable.idempotence": False,
            "linger.ms": SETTINGS["linger_ms"],
            "batch.size": SETTINGS["batch_size"],
        }
    )
    p.list_topics(topic, timeout=10)
    produce, poll = p.produce, p.poll
    t0 = time.perf_counter()
    for _ in range(n):
        while True:
            try:
                produce(topic, payload)
                break
            except BufferError:
                poll(0.01)
    p.flush(600)
    secs = time.perf_counter() - t0
    return secs


CLIENTS: dict[str, Any] = {
    "samsa": run_samsa,
    "kafka-python": run_kafka_python,
    "confluent": run_confluent,
}


def bench(label: str, new_broker: Any, args: argparse.Namespace) -> dict[str, float]:
    """Run every client ``args.runs`` times on fresh brokers; print and return the medians."""
    payload = os.urandom(args.size)
    names = [c.strip() for c in args.clients.split(",") if c.strip()]
    rates: dict[str, list[float]] = {name: [] for name in names}
    for run in range(args.runs):
        for name in names:
            # A fresh broker per run: no run pays for another's data.
            with new_broker() as bootstrap:
                topic = f"bench-{name}-{uuid.uuid4().hex[:8]}"
                create_topic(bootstrap, topic)
                secs = CLIENTS[name](bootstrap, topic, args.records, payload)
            rate = args.records / secs
            rates[name].append(rate)
            print(
                f"[{label}] run {run + 1} {name:13s} {rate:12,.0f} records/s  "
                f"{rate * args.size / 1e6:7.2f} MB/s  ({secs:.2f} s)",
                flush=True,
            )
    medians = {name: statistics.median(r) for name, r in rates.items()}
    for name, m in medians.items():
        print(
            f"RESULT broker={label} name=produce-{name} records_per_s={m:.0f} "
            f"mb_per_s={m * args.size / 1e6:.2f}"
        )
    if "samsa" in medians:
        for peer, target in (("kafka-python", 10.0), ("confluent", 0.5)):
            if peer in medians:
                ratio = medians["samsa"] / medians[peer]
                verdict = "meets" if ratio >= target else "BELOW"
                print(f"[{label}] samsa / {peer}: {ratio:.2f}x (target >= {target}x: {verdict})")
    return medians


def profile(args: argparse.Namespace) -> None:
    import cProfile
    import pstats

    with broker("tansu") as bootstrap:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic)
        prof = cProfile.Profile()
        prof.enable()
        run_samsa(bootstrap, topic, args.records, os.urandom(args.size))
        prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bootstrap", help="use this running broker instead of starting any")
    ap.add_argument("--brokers", default="tansu,samsa", help="comma-separated: tansu, samsa")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clients", default="samsa,kafka-python,confluent")
    ap.add_argument("--profile", action="store_true", help="cProfile one Samsa run and exit")
    args = ap.parse_args()
    if args.profile:
        profile(args)
        return 0
    rows: dict[str, dict[str, float]] = {}
    if args.bootstrap:
        rows[args.bootstrap] = bench(args.bootstrap, lambda: nullcontext(args.bootstrap), args)
    else:
        for name in (b.strip() for b in args.brokers.split(",")):
            rows[name] = bench(name, lambda name=name: broker(name), args)
    names = list(next(iter(rows.values())))
    print(f"\nmedians, records/s\n{'broker':8s} " + " ".join(f"{n:>13s}" for n in names))
    for label, med in rows.items():
        line = f"{label:8s} " + " ".join(f"{med[n]:13,.0f}" for n in names)
        if "samsa" in med:
            line += "".join(
                f"  vs {peer}: {med['samsa'] / med[peer]:.2f}x"
                for peer in ("kafka-python", "confluent")
                if peer in med
            )
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
