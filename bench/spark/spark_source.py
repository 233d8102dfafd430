"""Spark through the ``samsa`` source against the ceilings a Python data source has here.

* read: 2,000,000 records of 100 B from a topic into Parquet through
  ``format("samsa")``, as a ratio of the same job reading the same rows from an
  in-process Python data source that yields Arrow batches it generates (the
  fastest any Python data source can feed this Spark; target >= 0.7);
* write: the same number of rows from a DataFrame to a topic through
  ``format("samsa")``, as a ratio of the Samsa producer sending the same rows
  in-process at its defaults (target >= 0.5);
* read vs the JVM: the same topic into Parquet through Spark's own Kafka
  connector (``format("kafka")``, the jars ``scripts/kafka-reference.sh``
  fetched, on ``spark.jars``), as the ratio samsa/connector (target >= 1.0: the
  columnar path should not lose to the JVM connector). ``--jobs read`` runs the
  three read jobs only.

Everything runs in one process with one local[2] SparkSession and one Samsa
broker; each job runs once untimed (JVM warm-up), then ``--runs`` times
interleaved; medians are reported.

    .venv/bin/python -m bench.spark.spark_source --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# Workers import the generated source from this module by name.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition  # noqa: E402

ROWS_PER_BATCH = 100_000


class GeneratedArrowSource(DataSource):
    """Rows shaped like the samsa source's, made up in the worker as Arrow batches."""

    @classmethod
    def name(cls) -> str:
        return "generated_kafka_rows"

    def schema(self) -> str:
        return (
            "key binary, value binary, topic string, partition int, offset long, "
            "timestamp timestamp, timestampType int"
        )

    def reader(self, schema: Any) -> GeneratedReader:
        return GeneratedReader(int(self.options["rows"]), int(self.options["partitions"]))


class GeneratedReader(DataSourceReader):
    def __init__(self, rows: int, partitions: int) -> None:
        self.rows, self.count = rows, partitions

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(p) for p in range(self.count)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        from samsa.client.arrow import arrow_schema

        schema = arrow_schema(spark=True)
        share = self.rows // self.count
        value = b"x" * 100
        for start in range(0, share, ROWS_PER_BATCH):
            n = min(ROWS_PER_BATCH, share - start)
            offsets = pa.array(np.arange(0, (n + 1) * 100, 100, dtype=np.int32))
            values = pa.Array.from_buffers(
                pa.binary(), n, [None, offsets.buffers()[1], pa.py_buffer(value * n)]
            )
            yield pa.RecordBatch.from_arrays(
                [
                    pa.nulls(n, pa.binary()),
                    values,
                    pa.array(["bench"] * n, pa.string()),
                    pa.array(np.full(n, partition.value, dtype=np.int32)),
                    pa.array(np.arange(start, start + n, dtype=np.int64)),
                    pa.array(np.full(n, int(time.time() * 1e6), dtype=np.int64)).cast(
                        pa.timestamp("us", tz="UTC")
                    ),
                    pa.array(np.zeros(n, dtype=np.int32)),
                ],
                schema=schema,
            )


def fill_topic(bootstrap: str, topic: str, rows: int, partitions: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1_000_000,
         "queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 2_000_000}
    )  # fmt: skip
    value = b"x" * 100
    for i in range(rows):
        while True:
            try:
                producer.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(120) == 0


def timed(job: Any) -> float:
    started = time.perf_counter()
    job()
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--jobs", choices=("all", "read"), default="all")
    args = ap.parse_args()

    from tests.spark.conftest import build_session  # the tests' session settings, tuned for 2 cores

    import samsa.spark
    from samsa.client import Producer
    from samsa.testing import BrokerProcess

    work = Path(tempfile.mkdtemp(prefix="samsa-spark-bench-"))
    broker = BrokerProcess(work / "data")
    bootstrap = broker.start(timeout=120)  # a loaded shared host starts slowly
    spark = build_session(app="samsa-spark-bench")
    spark.sparkContext.setLogLevel("ERROR")
    samsa.spark.register(spark)
    spark.dataSource.register(GeneratedArrowSource)
    try:
        fill_topic(bootstrap, "bench-read", args.rows, args.partitions)

        def read_samsa() -> None:
            out = work / "read-samsa"
            shutil.rmtree(out, ignore_errors=True)
            (spark.read.format("samsa").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", "bench-read").load().write.parquet(str(out)))  # fmt: skip

        def read_connector() -> None:
            out = work / "read-connector"
            shutil.rmtree(out, ignore_errors=True)
            (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", "bench-read").load().write.parquet(str(out)))  # fmt: skip

        def read_generated() -> None:
            out = work / "read-generated"
            shutil.rmtree(out, ignore_errors=True)
            (spark.read.format("generated_kafka_rows").option("rows", str(args.rows))
             .option("partitions", str(args.partitions)).load().write.parquet(str(out)))  # fmt: skip

        frame = spark.range(args.rows, numPartitions=args.partitions).selectExpr(
            "cast(repeat('x', 100) as binary) as value"
        )
        if args.jobs == "all":  # cached only when the write jobs use it
            frame = frame.cache()
            frame.count()
        topics = iter(range(1000))

        def write_samsa() -> None:
            (frame.write.format("samsa").mode("append").option("kafka.bootstrap.servers", bootstrap)
             .option("topic", f"bench-write-{next(topics)}").save())  # fmt: skip

        value = b"x" * 100

        def write_producer() -> None:
            with Producer({"bootstrap.servers": bootstrap}) as producer:
                topic = f"bench-produce-{next(topics)}"
                send = producer.send
                for _ in range(args.rows):
                    send(topic, value)
                producer.flush()

        jobs = {
            "read samsa": read_samsa,
            "read kafka connector": read_connector,
            "read generated": read_generated,
        }
        if args.jobs == "all":
            jobs |= {"write samsa": write_samsa, "write producer": write_producer}
        for job in jobs.values():
            job()  # warm-up: JVM, Python workers, topic metadata
        times: dict[str, list[float]] = {name: [] for name in jobs}
        for run in range(args.runs):
            for name, job in jobs.items():
                times[name].append(timed(job))
            print(f"run {run + 1}: " + ", ".join(f"{n} {t[-1]:.2f}s" for n, t in times.items()),
                  flush=True)  # fmt: skip
        med = {name: statistics.median(t) for name, t in times.items()}
        rate = {name: args.rows / s for name, s in med.items()}
        print(f"\n{args.runs} runs each, interleaved; medians. {args.rows:,} rows of 100 B, "
              f"{args.partitions} partitions, local[2].\n")  # fmt: skip
        print("| job | rows/s | ratio | target |")
        print("|---|---|---|---|")
        print(f"| read topic -> Parquet, samsa source | {rate['read samsa']:,.0f} | "
              f"{rate['read samsa'] / rate['read generated']:.2f} of generated Arrow source | >= 0.7 |")  # fmt: skip
        print(f"| read topic -> Parquet, Spark's JVM Kafka connector | {rate['read kafka connector']:,.0f} | "
              f"samsa/connector {rate['read samsa'] / rate['read kafka connector']:.2f} | samsa >= 1.0 |")  # fmt: skip
        print(f"| read generated Arrow -> Parquet (ceiling) | {rate['read generated']:,.0f} | | |")
        if args.jobs != "all":
            return
        print(f"| write DataFrame -> topic, samsa sink | {rate['write samsa']:,.0f} | "
              f"{rate['write samsa'] / rate['write producer']:.2f} of in-process producer | >= 0.5 |")  # fmt: skip
        print(f"| Samsa producer in-process, defaults | {rate['write producer']:,.0f} | | |")
    finally:
        spark.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
