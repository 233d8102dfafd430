"""Produce throughput with broker-side schema id validation on against off, side by side.

One broker serving the registry, two topics: ``confluent.value.schema.validation=true``
and a plain one; the same Avro records (confluent-kafka's AvroSerializer, serialized once
before the clock starts: serializing is the client's cost, not the broker's) go to each.

1. **A producer** (the issue's measure): confluent-kafka in this process (acks=1,
   linger 5 ms, 1 MB batches), uncompressed and with lz4 (a validated topic's compressed
   batches are decompressed to find the ids).  Rounds alternate plain/validated and
   validated/plain; printed per case: records per second (median of the rounds), the
   broker's CPU per record (``/proc``: what validation costs the broker, whether or not
   it limits the rate) and the ratio on/off as the median of the rounds' pairs (each
   pair ran back to back, under the same load).
2. **The broker alone** (``--broker-bound``): the same records as pre-built batches of
   5,000 sent over one connection with 16 requests in flight, so the client costs next
   to nothing and the broker's event loop is the limit: what validation costs a broker
   that has no CPU to spare.

``--baseline-src DIR`` also runs the plain topic on a broker started from another source
tree (``git archive <commit> src | tar -x -C DIR``: the code before this change) beside
a broker of this tree, neither serving the registry, alternating, and prints
after/before: plain topics must not pay for validation.

    .venv/bin/python -m bench.registry.validation_produce [--records 200000] [--rounds 5]
        [--broker-bound] [--baseline-src /tmp/samsa-before/src]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import string
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from samsa.testing import BrokerProcess

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "bench",
        "fields": [
            {"name": "id", "type": "string"},
            {"name": "customer", "type": "string"},
            {"name": "qty", "type": "int"},
            {"name": "price", "type": "double"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@contextmanager
def broker(with_registry: bool, source: str | None = None) -> Iterator[tuple[BrokerProcess, str]]:
    """(process, registry URL or "") of a fresh broker; ``source``: run that tree's code."""
    saved = os.environ.get("PYTHONPATH")
    if source:
        os.environ["PYTHONPATH"] = source  # before the editable install's path entry
    try:
        with tempfile.TemporaryDirectory(prefix="samsa-bench-validation-") as tmp:
            args = ["--registry-listen", "127.0.0.1:0"] if with_registry else []
            proc = BrokerProcess(Path(tmp) / "data", args=args)
            proc.start(timeout=120)
            try:
                url = ""
                if with_registry:
                    if not proc.wait_for_log("schema registry listening on ", 120):
                        raise SystemExit("no registry:\n" + proc.log_text()[-3000:])
                    found = re.search(
                        r"schema registry listening on (http://\S+?)/?$", proc.log_text(), re.M
                    )
                    assert found is not None
                    url = found.group(1)
                yield proc, url
            finally:
                proc.stop()
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def cpu_seconds(proc: BrokerProcess) -> float:
    assert proc.proc is not None
    fields = Path(f"/proc/{proc.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def create_topic(bootstrap: str, name: str, configs: dict[str, str]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=configs)])[name].result(30)


def serialized_orders(url: str, topic: str, count: int) -> list[bytes]:
    """``count`` Avro orders of varied sizes (about 40 to 140 bytes), in the wire format."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = AvroSerializer(SchemaRegistryClient({"url": url}), ORDER)
    context = SerializationContext(topic, MessageField.VALUE)
    rng = random.Random(7)
    distinct = []
    for i in range(2000):
        note = None if i % 3 else "".join(rng.choices(string.ascii_letters, k=rng.randint(5, 80)))
        order = {
            "id": f"order-{i}",
            "customer": "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 30))),
            "qty": rng.randint(1, 500),
            "price": rng.random() * 100,
            "note": note,
        }
        distinct.append(serializer(order, context))
    return [distinct[i % len(distinct)] for i in range(count)]


def produce_run(bootstrap: str, topic: str, values: list[bytes], codec: str) -> float:
    """Records per second of one run (all acknowledged; errors stop the bench)."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": 1,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "compression.type": codec,
            "enable.idempotence": False,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    failures: list[Any] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None and len(failures) < 3:
            failures.append(err)

    start = time.perf_counter()
    produce = producer.produce
    for value in values:
        while True:
            try:
                produce(topic, value, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    if failures:
        raise SystemExit(f"produce to {topic} failed: {failures}")
    return len(values) / elapsed


def measure(
    cases: dict[str, tuple[BrokerProcess, str, str]],
    values: list[bytes],
    rounds: int,
    run: Any = None,
) -> dict[str, tuple[list[float], list[float]]]:
    """name -> (records/s of each round, broker CPU µs per record of each round); the
    cases' order flips every round, so each round's pair ran back to back."""
    run = run or produce_run
    results: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in cases}
    names = list(cases)
    for name in names:  # untimed warm-up of each case
        proc, topic, codec = cases[name]
        run(proc.bootstrap, topic, values[: len(values) // 10], codec)
    for round_ in range(rounds):
        order = names if round_ % 2 == 0 else names[::-1]
        for name in order:
            proc, topic, codec = cases[name]
            before = cpu_seconds(proc)
            rate = run(proc.bootstrap, topic, values, codec)
            used = cpu_seconds(proc) - before
            results[name][0].append(rate)
            results[name][1].append(used / len(values) * 1e6)
    return results


def report(title: str, results: dict[str, tuple[list[float], list[float]]], base: str) -> None:
    print(title)
    base_rates, base_cpus = results[base]
    print(f"  {'':38} {'records/s':>12} {'ratio':>7}   {'broker CPU/record':>17} {'ratio':>7}")
    for name, (rates, cpus) in results.items():
        pairs = [r / b for r, b in zip(rates, base_rates, strict=True)]
        cpu_pairs = [c / b for c, b in zip(cpus, base_cpus, strict=True) if b > 0]
        print(
            f"  {name:38} {statistics.median(rates):12,.0f} {statistics.median(pairs):6.3f}x   "
            f"{statistics.median(cpus):14.2f} µs {statistics.median(cpu_pairs or [0]):6.3f}x   "
            f"(runs {', '.join(f'{r:,.0f}' for r in rates)})"
        )


def broker_bound_run(bootstrap: str, topic: str, values: list[bytes], codec: str) -> float:
    """Records per second the broker appends from pre-built batches, pipelined."""
    import socket
    import struct

    from samsa.protocol.api import decode_response, encode_request
    from samsa.protocol.batches.compression import Compression
    from samsa.protocol.batches.record_builder import RecordBatchBuilder

    per_batch, window = 5000, 16
    compression = Compression.LZ4 if codec == "lz4" else Compression.NONE
    frames = []
    now = int(time.time() * 1000)
    for start in range(0, len(values), per_batch):
        builder = RecordBatchBuilder(batch_size=1 << 26, compression=compression)
        for value in values[start : start + per_batch]:
            builder.append(now, None, value)
        body = {
            "transactional_id": None,
            "acks": 1,
            "timeout_ms": 30000,
            "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": builder.build()}]}
            ],
        }
        frames.append(encode_request(0, 9, len(frames), "bench", body))
    host, port = bootstrap.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=60)

    def read_exact(n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            out += chunk
        return bytes(out)

    def answer() -> None:
        (size,) = struct.unpack(">i", read_exact(4))
        _, response = decode_response(0, 9, memoryview(read_exact(size)))
        entry = response["responses"][0]["partition_responses"][0]
        if entry["error_code"]:
            raise SystemExit(f"produce to {topic} refused: {entry}")

    start = time.perf_counter()
    sent = answered = 0
    try:
        while answered < len(frames):
            while sent < len(frames) and sent - answered < window:
                sock.sendall(frames[sent])
                sent += 1
            answer()
            answered += 1
    finally:
        sock.close()
    return len(values) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--broker-bound", action="store_true", help="also pre-built batches, pipelined"
    )
    parser.add_argument(
        "--baseline-src", default="", help="a source tree (its src/) to compare plain topics with"
    )
    args = parser.parse_args()
    with broker(with_registry=True) as (proc, url):
        create_topic(proc.bootstrap, "validated", {"confluent.value.schema.validation": "true"})
        create_topic(proc.bootstrap, "plain", {})
        values = serialized_orders(url, "validated", args.records)
        size = statistics.mean(len(v) for v in values[:2000])
        print(
            f"# {args.records:,} Avro records per run (mean {size:.0f} bytes), "
            f"{args.rounds} rounds alternating; one broker, the producer in this process"
        )
        for codec in ("none", "lz4"):
            cases = {
                f"plain topic ({codec})": (proc, "plain", codec),
                f"validated topic ({codec})": (proc, "validated", codec),
            }
            results = measure(cases, values, args.rounds)
            report(
                f"confluent-kafka producer, validation on vs off, compression {codec}",
                results,
                f"plain topic ({codec})",
            )
        if args.broker_bound:
            for codec in ("none", "lz4"):
                cases = {
                    f"plain topic ({codec})": (proc, "plain", codec),
                    f"validated topic ({codec})": (proc, "validated", codec),
                }
                results = measure(cases, values, args.rounds, broker_bound_run)
                report(
                    f"broker-bound (pre-built batches of 5,000, 16 in flight), compression {codec}",
                    results,
                    f"plain topic ({codec})",
                )
    if args.baseline_src:
        with (
            broker(with_registry=False, source=args.baseline_src) as (before, _),
            broker(with_registry=False) as (after, _),
        ):
            for each in (before, after):
                create_topic(each.bootstrap, "plain", {})
            cases = {
                "plain topic, before (baseline tree)": (before, "plain", "none"),
                "plain topic, after (this tree)": (after, "plain", "none"),
            }
            results = measure(cases, values, args.rounds)
            report(
                "plain topic, this tree against the baseline tree (neither serving the registry)",
                results,
                "plain topic, before (baseline tree)",
            )
            if args.broker_bound:
                results = measure(cases, values, args.rounds, broker_bound_run)
                report(
                    "plain topic, broker-bound, this tree against the baseline tree",
                    results,
                    "plain topic, before (baseline tree)",
                )


if __name__ == "__main__":
    main()
