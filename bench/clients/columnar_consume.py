"""Columnar read benchmark: PartitionRangeReader vs confluent-kafka's consume() loop.

Produces N x 100-byte records once (confluent-kafka, 1 MB batches) into one
partition of a fresh Samsa broker, then reads the whole partition 3 times,
interleaved, with:

* ``columnar``: ``samsa.client.arrow.PartitionRangeReader`` in-process,
  touching every batch's key, value and offset columns (their buffers);
* ``confluent-unpaused``: confluent-kafka's ``consume(500)`` loop with
  ``fetch.queue.backoff.ms=10``, i.e. without librdkafka's 1 s fetch pauses
  (see bench/clients/client_consume.py), touching every message's key, value, offset;
* ``confluent``: the same loop at librdkafka's defaults;
* ``fetch-only``: the floor -- the same Fetch pipeline handing out raw
  response bytes, nothing decoded (what fetching alone costs in Python).

Each reader first reads the topic once untimed (one-time process costs).
Prints medians and ratios (target: columnar >= 2x confluent-unpaused).

    .venv/bin/python -m bench.clients.columnar_consume [--records 1000000] [--runs 3]
    .venv/bin/python -m bench.clients.columnar_consume --bootstrap host:port
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from bench.common.brokers import broker

TOPIC = "bench-columnar"
VALUE_SIZE = 100


def produce(bootstrap: str, n: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the future
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(10)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1000000})
    value = b"v" * VALUE_SIZE
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


def run_columnar(bootstrap: str, n: int) -> float:
    from samsa.client.arrow import PartitionRangeReader

    count = total = 0
    t0 = time.perf_counter()
    with PartitionRangeReader({"bootstrap.servers": bootstrap}, TOPIC, 0, 0, n) as reader:
        for batch in reader:
            count += batch.num_rows
            # Touch the columns as a consumer of Arrow would: their buffers.
            total += batch.column(0).buffers()[2].size + batch.column(1).buffers()[2].size
            total += batch.column(4).buffers()[1].size
    elapsed = time.perf_counter() - t0
    assert count == n, count
    return count / elapsed


def run_fetch_only(bootstrap: str, n: int) -> float:
    """The consumer's Fetch pipeline alone: responses received, batch headers read, no records."""
    from samsa.client.consumer import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
    c.assign([(TOPIC, 0)])
    c.seek((TOPIC, 0), 0)
    fetcher = c._fetcher  # the floor needs the pipeline without the decoder
    st = c._subs.state(next(iter(c._subs.assignment)))
    t0 = time.perf_counter()
    size = 0

    def skip(chunk: object, position: int) -> object:
        nonlocal size
        data, _batches, _aborted = chunk.raw()  # type: ignore[attr-defined]
        size += len(data)
        return _NoRows()

    while st.position is None or st.position < n:
        fetcher.fetched_arrow(1 << 62, skip)
        if fetcher.send_fetches() or not fetcher.has_buffered():
            c._client.poll(100)
    elapsed = time.perf_counter() - t0
    c.close()
    return n / elapsed


class _NoRows:
    num_rows = 0


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
    "columnar": run_columnar,
    "confluent-unpaused": run_confluent_unpaused,
    "confluent": run_confluent,
    "fetch-only": run_fetch_only,
}


def bench(label: str, bootstrap: str, records: int, runs: int) -> dict[str, float]:
    """Produce, run every reader ``runs`` times interleaved, print and return medians."""
    produce(bootstrap, records)
    # One untimed pass each first: imports, pyarrow's lazy set-up (about 0.3 s on the
    # first array), librdkafka's threads -- once per process, not per read.
    for fn in CLIENTS.values():
        fn(bootstrap, records)
    results: dict[str, list[float]] = {name: [] for name in CLIENTS}
    for run in range(runs):
        for name, fn in CLIENTS.items():
            rate = fn(bootstrap, records)
            results[name].append(rate)
            print(f"[{label}] run {run + 1} {name:18s} {rate:12,.0f} records/s", flush=True)
    med = {name: statistics.median(v) for name, v in results.items()}
    for name, m in med.items():
        print(f"RESULT broker={label} reader={name} records_per_s={m:.0f}")
    col = med["columnar"]
    print(
        f"[{label}] columnar / confluent-unpaused = {col / med['confluent-unpaused']:.2f}x "
        "(target >= 2)"
    )
    print(f"[{label}] columnar / confluent (defaults) = {col / med['confluent']:.2f}x")
    print(f"[{label}] columnar / fetch-only floor = {col / med['fetch-only']:.2f}x")
    return med


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bootstrap", help="use this running broker instead of starting one")
    args = parser.parse_args(argv)
    if args.bootstrap:
        bench(args.bootstrap, args.bootstrap, args.records, args.runs)
    else:
        with broker("samsa") as bootstrap:
            bench("samsa", bootstrap, args.records, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
