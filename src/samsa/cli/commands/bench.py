"""``samsa bench produce|consume``: a load generator, as Kafka's perf-test tools.

``produce`` sends ``--num-records`` records of ``--record-size`` bytes (or
runs for ``--duration`` seconds) with the Samsa producer and reports
records/s, MB/s and the send-to-acknowledgement latency percentiles.  To keep
the measurement from measuring itself, latency is sampled on at most 10,000
records spread over the run.  ``consume`` reads a topic from the beginning
and reports records/s, MB/s and the latency percentiles of its polls.  A live
progress bar is drawn on a terminal (stderr); the summary goes to stdout, as a
table or with ``--output json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from samsa.cli.common import (
    CliError,
    add_connection_args,
    add_output_arg,
    add_subcommand,
    client_config,
    console,
    guarded,
    partition_count,
    print_json,
    print_table,
)
from samsa.client import Consumer, Producer, RecordMetadata, TopicPartition

LATENCY_SAMPLES = 10_000


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="load generator: produce or consume and report throughput",
        epilog="example:\n  samsa bench produce --topic perf --num-records 100000",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="bench_kind", required=True, metavar="KIND")

    a = add_subcommand(
        kinds,
        "produce",
        "send records as fast as possible and report records/s, MB/s and latency",
        "samsa bench produce --topic perf --num-records 1000000 --record-size 100",
    )
    a.add_argument("--topic", required=True)
    a.add_argument("--num-records", type=int, default=1_000_000, metavar="N")
    a.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long")
    a.add_argument("--record-size", type=int, default=100, metavar="BYTES")
    a.add_argument("--acks", choices=("0", "1", "all", "-1"), default="1")
    a.add_argument("--linger-ms", type=int, metavar="MS", help="default: the producer's")
    a.add_argument("--batch-size", type=int, metavar="BYTES", help="default: the producer's")
    a.add_argument("--compression", default="none")
    add_connection_args(a)
    add_output_arg(a)
    a.set_defaults(run=guarded("bench", bench_produce))

    a = add_subcommand(
        kinds,
        "consume",
        "read a topic from the beginning and report records/s, MB/s and poll latency",
        "samsa bench consume --topic perf --num-records 1000000",
    )
    a.add_argument("--topic", required=True)
    a.add_argument("--num-records", type=int, metavar="N", help="default: all there are now")
    a.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long")
    add_connection_args(a)
    add_output_arg(a)
    a.set_defaults(run=guarded("bench", bench_consume))


def progress() -> Progress:
    """A live bar on stderr, drawn only on a terminal; each task sets its own total."""
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,.0f}/{task.total:,.0f} records"),
        TimeElapsedColumn(),
        console=console(sys.stderr),
        disable=not sys.stderr.isatty(),
        transient=True,
    )


def percentiles(samples: list[float]) -> dict[str, float | None]:
    if not samples:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "max_ms": at(1.0)}


def report(args: argparse.Namespace, kind: str, summary: dict[str, Any]) -> None:
    if args.output == "json":
        print_json({"bench": kind, "topic": args.topic, **summary})
        return
    rows = [(name.replace("_", " "), value) for name, value in summary.items()]
    print_table(console(), ("MEASURE", "VALUE"), rows, title=f"samsa bench {kind} {args.topic}")


def bench_produce(args: argparse.Namespace) -> int:
    if args.num_records < 1 or args.record_size < 0:
        raise CliError("--num-records must be at least 1 and --record-size not negative")
    config: dict[str, Any] = {
        "client.id": "samsa-bench-producer",
        "acks": args.acks,
        # As Kafka's producer: idempotence only where acks=all allows it.
        "enable.idempotence": args.acks in ("all", "-1"),
        "compression.type": args.compression,
        "max.block.ms": int(args.timeout * 1000),
    }
    if args.linger_ms is not None:
        config["linger.ms"] = args.linger_ms
    if args.batch_size is not None:
        config["batch.size"] = args.batch_size
    value = os.urandom(args.record_size)
    every = max(1, args.num_records // LATENCY_SAMPLES)
    latencies: list[float] = []
    errors: list[BaseException] = []

    def sampler(started: float) -> Callable[[RecordMetadata | None, BaseException | None], None]:
        def done(metadata: RecordMetadata | None, error: BaseException | None) -> None:
            if error is not None:
                errors.append(error)
            else:
                latencies.append(time.perf_counter() - started)

        return done

    deadline = None if args.duration is None else time.perf_counter() + args.duration
    sent = 0
    with Producer(client_config(args, config)) as producer, progress() as bar:
        task = bar.add_task("producing", total=args.num_records)
        started = time.perf_counter()
        send = producer.send
        topic = args.topic
        while sent < args.num_records:
            if sent % every == 0:
                send(topic, value, on_delivery=sampler(time.perf_counter()))
                if sent % (every * 100) == 0:
                    bar.update(task, completed=sent)
                    if deadline is not None and time.perf_counter() >= deadline:
                        break
            else:
                send(topic, value)
            sent += 1
        producer.flush(args.timeout)
        elapsed = time.perf_counter() - started
    if errors:
        raise CliError(f"{len(errors)} sampled records failed: {errors[0]}")
    report(
        args,
        "produce",
        {
            "records": sent,
            "seconds": round(elapsed, 3),
            "records_per_sec": round(sent / elapsed),
            "mb_per_sec": round(sent * args.record_size / elapsed / 1e6, 2),
            **percentiles(latencies),
        },
    )
    return 0


def bench_consume(args: argparse.Namespace) -> int:
    config: dict[str, Any] = {
        "client.id": "samsa-bench-consumer",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "request.timeout.ms": int(args.timeout * 1000),
    }
    partitions = partition_count(args, args.topic)
    with Consumer(client_config(args, config)) as consumer:
        tps = [TopicPartition(args.topic, p) for p in range(partitions)]
        starts = consumer.beginning_offsets(tps)
        ends = consumer.end_offsets(tps)
        available = sum(ends[tp] - starts[tp] for tp in tps)
        wanted = available if args.num_records is None else args.num_records
        consumer.assign(tps)
        consumer.seek_to_beginning(tps)
        count = size = 0
        polls: list[float] = []
        deadline = None if args.duration is None else time.perf_counter() + args.duration
        idle_since = time.perf_counter()
        with progress() as bar:
            task = bar.add_task("consuming", total=wanted)
            started = time.perf_counter()
            while count < wanted:
                before = time.perf_counter()
                batch = consumer.poll(0.5)
                now = time.perf_counter()
                polls.append(now - before)
                if batch:
                    idle_since = now
                    count += len(batch)
                    size += sum(len(r.value or b"") for r in batch)
                    bar.update(task, completed=count)
                elif now - idle_since > args.timeout:
                    break  # nothing more arrived: the topic holds fewer records
                if deadline is not None and now >= deadline:
                    break
            elapsed = time.perf_counter() - started
    report(
        args,
        "consume",
        {
            "records": count,
            "seconds": round(elapsed, 3),
            "records_per_sec": round(count / elapsed) if elapsed else 0,
            "mb_per_sec": round(size / elapsed / 1e6, 2) if elapsed else 0,
            **percentiles(polls),
        },
    )
    return 0
