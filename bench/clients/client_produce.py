#!/usr/bin/env python3
"""Producer throughput: Samsa's client vs kafka-python vs confluent-kafka, same broker.

One row per broker: the peer broker tansu (memory://, its low CPU use keeps
the comparison about the clients) and Samsa's own broker, each client run on a
fresh broker and a fresh 1-partition topic; ``--bootstrap`` measures against
an already running broker instead.  Each client runs ``--runs`` times,
interleaved (samsa, kafka-python, confluent, samsa, ...), with identical
settings: acks=1, idempotence off, linger.ms=5, batch.size=1000000, 100-byte
values, no keys; ``samsa-defaults`` and ``confluent-defaults`` run each client
at its own defaults (bootstrap.servers only), as a new user first runs it.  Time runs from the first send to the end of flush().  Prints
per-run lines, medians and the ratios the issue targets (Samsa >= 10x
kafka-python, >= 0.5x confluent-kafka).

Every run is a fresh process (spawned before the clock starts), so that its
peak RSS growth -- VmHWM, reset through /proc/self/clear_refs just before the
first send -- is that client's own: the memory it holds for records in flight.
For the Samsa producer that must stay within ``buffer.memory`` (32 MiB by
default; ``--buffer-memory`` lists more budgets to check, each run cold and
after a warm-up).

  .venv/bin/python -m bench.clients.client_produce                 # 1,000,000 records, 3 runs, both brokers
  .venv/bin/python -m bench.clients.client_produce --records 200000 --clients samsa --brokers samsa
  .venv/bin/python -m bench.clients.client_produce --profile       # cProfile one Samsa run (tansu)
  .venv/bin/python -m bench.clients.client_produce --clients samsa --brokers tansu --buffer-memory 8,64
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from bench.common.brokers import broker
from bench.common.fresh_process import in_fresh_process

SETTINGS = {"acks": 1, "linger_ms": 5, "batch_size": 1_000_000}
DEFAULT_BUFFER_MEMORY = 32 << 20  # Kafka's and the Samsa producer's default


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} missing from /proc/self/status")


def start_clock() -> tuple[float, float]:
    """Reset the peak-RSS mark, then start timing: (t0, RSS at t0 in MB)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS
    return time.perf_counter(), _status_mb("VmRSS")


def stop_clock(start: tuple[float, float]) -> tuple[float, float]:
    """Seconds since ``start`` and the peak RSS growth since then in MB."""
    return time.perf_counter() - start[0], _status_mb("VmHWM") - start[1]


def within(growth_mb: float, budget: int) -> str:
    """The verdict on a peak RSS growth against a buffer.memory budget in bytes."""
    return "within" if growth_mb <= budget / (1 << 20) else "ABOVE"


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)


def run_samsa(
    bootstrap: str,
    topic: str,
    n: int,
    payload: bytes,
    buffer_memory: int = DEFAULT_BUFFER_MEMORY,
    warmup: int = 0,
) -> tuple[float, float]:
    from samsa.client import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": SETTINGS["acks"],
            "enable.idempotence": False,
            "linger.ms": SETTINGS["linger_ms"],
            "batch.size": SETTINGS["batch_size"],
            "buffer.memory": buffer_memory,
        }
    )
    p.partitions_for(topic)  # metadata before the clock starts, as the peers do
    errors: list[BaseException] = []
    send = p.send
    for _ in range(warmup):
        send(topic, payload)
    p.flush()
    start = start_clock()
    for _ in range(n - 1):
        send(topic, payload)
    last = send(topic, payload)
    p.flush()
    measured = stop_clock(start)
    if last.exception() is not None:
        errors.append(last.exception())  # type: ignore[arg-type]
    p.close()
    if errors:
        raise RuntimeError(f"samsa produce failed: {errors[0]!r}")
    return measured


def run_kafka_python(bootstrap: str, topic: str, n: int, payload: bytes) -> tuple[float, float]:
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=bootstrap,
        acks=SETTINGS["acks"],
        linger_ms=SETTINGS["linger_ms"],
        batch_size=SETTINGS["batch_size"],
        enable_idempotence=False,
    )
    p.partitions_for(topic)
    start = start_clock()
    for _ in range(n):
        p.send(topic, payload)
    p.flush(600)
    measured = stop_clock(start)
    p.close()
    return measured


def run_confluent(bootstrap: str, topic: str, n: int, payload: bytes) -> tuple[float, float]:
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
    return _confluent_loop(p, topic, n, payload)


def _confluent_loop(p: Any, topic: str, n: int, payload: bytes) -> tuple[float, float]:
    """Send ``n`` records with confluent-kafka's produce(), waiting out a full queue."""
    p.list_topics(topic, timeout=10)
    produce, poll = p.produce, p.poll
    start = start_clock()
    for _ in range(n):
        while True:
            try:
                produce(topic, payload)
                break
            except BufferError:
                poll(0.01)
    p.flush(600)
    return stop_clock(start)


def run_samsa_defaults(bootstrap: str, topic: str, n: int, payload: bytes) -> tuple[float, float]:
    """The Samsa producer as a new user runs it: bootstrap.servers only."""
    from samsa.client import Producer

    p = Producer({"bootstrap.servers": bootstrap})
    p.partitions_for(topic)
    send = p.send
    start = start_clock()
    for _ in range(n - 1):
        send(topic, payload)
    last = send(topic, payload)
    p.flush()
    measured = stop_clock(start)
    error = last.exception()
    p.close()
    if error is not None:
        raise RuntimeError(f"samsa produce failed: {error!r}")
    return measured


def run_confluent_defaults(
    bootstrap: str, topic: str, n: int, payload: bytes
) -> tuple[float, float]:
    """confluent-kafka as a new user runs it: bootstrap.servers only."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap})
    return _confluent_loop(p, topic, n, payload)


CLIENTS: dict[str, Callable[..., tuple[float, float]]] = {
    "samsa": run_samsa,
    "kafka-python": run_kafka_python,
    "confluent": run_confluent,
    "samsa-defaults": run_samsa_defaults,
    "confluent-defaults": run_confluent_defaults,
}


def bench(label: str, new_broker: Any, args: argparse.Namespace) -> dict[str, float]:
    """Run every client ``args.runs`` times on fresh brokers; print and return the medians."""
    payload = os.urandom(args.size)
    names = [c.strip() for c in args.clients.split(",") if c.strip()]
    rates: dict[str, list[float]] = {name: [] for name in names}
    growths: dict[str, list[float]] = {name: [] for name in names}
    for run in range(args.runs):
        for name in names:
            # A fresh broker per run: no run pays for another's data.
            with new_broker() as bootstrap:
                topic = f"bench-{name}-{uuid.uuid4().hex[:8]}"
                create_topic(bootstrap, topic)
                secs, growth = in_fresh_process(
                    name, CLIENTS[name], bootstrap, topic, args.records, payload
                )
            rate = args.records / secs
            rates[name].append(rate)
            growths[name].append(growth)
            print(
                f"[{label}] run {run + 1} {name:13s} {rate:12,.0f} records/s  "
                f"{rate * args.size / 1e6:7.2f} MB/s  ({secs:.2f} s)  "
                f"peak RSS +{growth:.0f} MB",
                flush=True,
            )
    medians = {name: statistics.median(r) for name, r in rates.items()}
    for name, m in medians.items():
        print(
            f"RESULT broker={label} name=produce-{name} records_per_s={m:.0f} "
            f"mb_per_s={m * args.size / 1e6:.2f} peak_rss_growth_mb={max(growths[name]):.0f}"
        )
    if "samsa" in growths:
        worst = max(growths["samsa"])
        print(
            f"[{label}] samsa peak RSS growth {worst:.0f} MB, buffer.memory "
            f"{DEFAULT_BUFFER_MEMORY >> 20} MB: {within(worst, DEFAULT_BUFFER_MEMORY)}"
        )
    if "samsa" in medians:
        for peer, target in (("kafka-python", 10.0), ("confluent", 0.5)):
            if peer in medians:
                ratio = medians["samsa"] / medians[peer]
                verdict = "meets" if ratio >= target else "BELOW"
                print(f"[{label}] samsa / {peer}: {ratio:.2f}x (target >= {target}x: {verdict})")
    if "samsa-defaults" in medians and "confluent-defaults" in medians:
        ratio = medians["samsa-defaults"] / medians["confluent-defaults"]
        verdict = "meets" if ratio >= 0.8 else "BELOW"
        print(
            f"[{label}] each at its own defaults, samsa / confluent: {ratio:.2f}x "
            f"(target >= 0.8x: {verdict})"
        )
    return medians


def memory_check(args: argparse.Namespace, budgets: list[int]) -> None:
    """Samsa runs per buffer.memory budget (tansu): peak RSS growth against the budget.

    Each budget runs cold (as the throughput runs do) and after 20,000 records
    of warm-up: a fresh interpreter's first batches also pay 4-5 MB of one-off
    allocations (allocator arenas, caches), which the warm figure leaves out.
    """
    payload = os.urandom(args.size)
    for budget in budgets:
        growths = []
        for warmup in (0, 20_000):
            with broker("tansu") as bootstrap:
                topic = f"bench-mem-{uuid.uuid4().hex[:8]}"
                create_topic(bootstrap, topic)
                _, growth = in_fresh_process(
                    "samsa",
                    CLIENTS["samsa"],
                    bootstrap,
                    topic,
                    args.records,
                    payload,
                    budget,
                    warmup,
                )
            growths.append(growth)
        cold, warm = growths
        print(
            f"[memory] buffer.memory {budget >> 20:4d} MB: peak RSS growth {cold:5.1f} MB cold, "
            f"{warm:5.1f} MB warmed up ({within(warm, budget)})",
            flush=True,
        )


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
    ap.add_argument(
        "--clients",
        default="samsa,kafka-python,confluent,samsa-defaults,confluent-defaults",
        help="the tuned rows (acks=1, 1 MB batches) and each client at its own defaults",
    )
    ap.add_argument("--profile", action="store_true", help="cProfile one Samsa run and exit")
    ap.add_argument(
        "--buffer-memory",
        default="",
        help="comma-separated MiB: Samsa runs per budget (cold, warm) checking peak RSS growth",
    )
    args = ap.parse_args()
    if args.profile:
        profile(args)
        return 0
    if args.buffer_memory:
        memory_check(args, [int(mb) << 20 for mb in args.buffer_memory.split(",")])
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
