"""Spark reads a tiered topic into Parquet three ways in one run: the ``samsa`` source straight
from the object store, the ``samsa`` source through the broker, Spark's JVM Kafka connector.

One Samsa broker tiers a topic (``--gb`` of ``--size``-byte records over
``--partitions`` partitions, ``--segment-mib`` segments) to a real S3Proxy
until only each partition's active segment is local, then one local[2]
SparkSession reads the whole topic into Parquet

* with ``format("samsa")`` and the store's ``rsm.config.*`` settings as options
  (``tieredReads=auto``: the history from S3, the local tail through the broker),
* with ``format("samsa")`` and ``tieredReads=broker`` (the broker serves the
  history from S3 as it serves any consumer),
* with ``format("kafka")``, Spark's JVM connector (``scripts/kafka-reference.sh``),

each once untimed on the first 10,000 offsets (JVM and Python workers warm),
then ``--runs`` times in turn (the order rotates).  Every read's Parquet
output is checked against the others: row count, and sums of the offsets and
of ``crc32(value)``.  Printed: seconds and MB/s of each read, direct/broker and
direct/connector (target: direct >= 2x broker reads), and the CPU the broker
and S3Proxy spent during each read (utime+stime from /proc).

    .venv/bin/python -m bench.tiered.spark_tiered_reads --gb 2 --runs 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

WAYS = ("samsa direct", "samsa broker", "JVM connector")


def reader(spark: Any, way: str, bootstrap: str, topic: str, store: dict[str, str]) -> Any:
    if way == "JVM connector":
        return spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    read = spark.read.format("samsa").option("kafka.bootstrap.servers", bootstrap)
    if way == "samsa broker":
        return read.option("tieredReads", "broker")
    for key, value in store.items():
        read = read.option(key, value)
    return read


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=2.0, help="topic size, 10^9 bytes of values")
    ap.add_argument("--size", type=int, default=1000, help="bytes per record value")
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--segment-mib", type=int, default=64)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()

    from tests.spark.conftest import build_session

    import samsa.spark
    from bench.common.cluster import machine_line
    from bench.common.fresh_process import in_fresh_process
    from bench.tiered._common import (
        cpu_seconds,
        create_topic,
        local_bytes,
        pid_of,
        produce,
        tier_offsets,
        tiered_broker,
        wait_tiered,
    )

    records = int(args.gb * 1e9 / args.size)
    topic = "history"
    print(machine_line(), flush=True)
    print(f"command: python -m bench.tiered.spark_tiered_reads {' '.join(sys.argv[1:])}")
    with tiered_broker() as setup:
        bootstrap = setup.bootstrap
        create_topic(bootstrap, topic, args.partitions, {
            "remote.storage.enable": "true", "local.retention.bytes": "1",
            "segment.bytes": str(args.segment_mib * 1024 * 1024)})  # fmt: skip
        began = time.monotonic()
        rate = in_fresh_process(
            "produce", produce, bootstrap, topic, records, args.size, args.partitions
        )
        print(f"produced {records:,} x {args.size} B at {rate:,.0f} records/s", flush=True)
        waited = wait_tiered(setup, topic, args.partitions)
        offsets = tier_offsets(bootstrap, topic, args.partitions)
        tail = local_bytes(setup, topic, args.partitions)
        print(f"tiered {time.monotonic() - began:.0f} s after the first record ({waited:.0f} s "
              f"after the last); local tail {tail / 1e6:.0f} MB, local starts "
              f"{[local for local, _ in offsets.values()]}", flush=True)  # fmt: skip

        spark = build_session(app="samsa-tiered-bench")
        spark.sparkContext.setLogLevel("ERROR")
        samsa.spark.register(spark)
        out = setup.work / "parquet"
        assert setup.s3 is not None
        pids = {"broker": pid_of(setup.broker), "S3Proxy": pid_of(setup.s3)}
        first = "{" + ",".join(f'"{p}": 10000' for p in range(args.partitions)) + "}"

        def run(way: str, warm: bool = False) -> dict[str, float]:
            shutil.rmtree(out, ignore_errors=True)
            df = reader(spark, way, bootstrap, topic, setup.store_options).option(
                "subscribe", topic
            )
            if warm:
                df = df.option("endingOffsets", f'{{"{topic}": {first}}}')
            cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
            started = time.perf_counter()
            df.load().write.parquet(str(out))
            seconds = time.perf_counter() - started
            used = {name: cpu_seconds(pid) - cpu[name] for name, pid in pids.items()}
            check = (
                spark.read.parquet(str(out))
                .selectExpr("count(*) as n", "sum(offset) as offsets", "sum(crc32(value)) as crc")
                .first()
            )
            return {"seconds": seconds, "rows": check.n, "offsets": check.offsets,
                    "crc": check.crc, **{f"{n} cpu": s for n, s in used.items()}}  # fmt: skip

        for way in WAYS:
            run(way, warm=True)
        results: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
        for n in range(args.runs):
            order = WAYS[n % 3 :] + WAYS[: n % 3]
            for way in order:
                result = run(way)
                results[way].append(result)
                print(f"run {n + 1} {way}: {result['seconds']:.1f} s, broker CPU "
                      f"{result['broker cpu']:.1f} s, S3Proxy CPU {result['S3Proxy cpu']:.1f} s",
                      flush=True)  # fmt: skip
        spark.stop()

    sums = {(r["rows"], r["offsets"], r["crc"]) for rs in results.values() for r in rs}
    assert len(sums) == 1, f"the reads differ: {sums}"
    rows, _, crc = sums.pop()
    assert rows == records, f"{rows} rows read, {records} written"
    med = {
        way: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for way, rs in results.items()
    }
    mb = records * args.size / 1e6
    print(f"\n{args.runs} run(s) each, medians. {records:,} records x {args.size} B = {mb:,.0f} MB "
          f"in {args.partitions} partitions, {args.segment_mib} MiB segments, all but the active "
          f"segments tiered to S3Proxy; local[2]. Every read: {rows:,} rows, crc32 sum {crc}.\n")  # fmt: skip
    print("| read -> Parquet | seconds | MB/s | direct is | broker CPU s | S3Proxy CPU s |")
    print("|---|---|---|---|---|---|")
    direct = med["samsa direct"]["seconds"]
    for way in WAYS:
        m = med[way]
        ratio = "" if way == "samsa direct" else f"{m['seconds'] / direct:.2f}x faster"
        print(f"| {way} | {m['seconds']:.1f} | {mb / m['seconds']:.0f} | {ratio} | "
              f"{m['broker cpu']:.1f} | {m['S3Proxy cpu']:.1f} |")  # fmt: skip
    print(f"\ndirect / broker reads: {med['samsa broker']['seconds'] / direct:.2f} (target >= 2); "
          f"direct / JVM connector: {med['JVM connector']['seconds'] / direct:.2f}; "
          f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip


if __name__ == "__main__":
    main()
