"""Typed (``valueFormat=avro``) columns of the ``samsa`` source: rows per second decoded.

1. **The decoder alone** (``samsa.spark.schemas``, what each executor does per Arrow
   batch): ``--records`` Avro orders in Confluent's wire format (8 fields: strings, a
   long, an enum, a timestamp, an optional string, an array), decoded with the reader
   schema they were written with and with a newer one (Avro resolution, one added field),
   into one Arrow column per batch of 10,000; beside fastavro's own loop over the same
   bodies (the floor a per-record decoder has here) and beside handing the bytes on
   unchanged.
2. **Spark end to end**: the same records in a 2-partition topic read through
   ``format("samsa")`` into a ``noop`` sink, with ``valueFormat=avro`` against the
   plain binary read, local[2], each job once untimed, then ``--runs`` times
   alternating; rows per second (medians) and the ratio.

One broker serving the registry, one local SparkSession.

    .venv/bin/python -m bench.spark.avro_columns [--records 200000] [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

ORDER: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "customer", "type": "string"},
        {"name": "qty", "type": "long"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "price", "type": "double"},
    ],
}
NEWER = {
    **ORDER,
    "fields": [*ORDER["fields"], {"name": "channel", "type": "string", "default": "web"}],
}
BATCH = 10_000


def orders(count: int) -> list[dict[str, Any]]:
    rng = random.Random(3)
    return [
        {
            "id": f"order-{i}",
            "customer": "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 20))),
            "qty": rng.randint(1, 1000),
            "status": "PAID" if i % 3 else "NEW",
            "at": 1_760_000_000_000 + i,
            "note": None if i % 2 else "leave at the door",
            "tags": ["a", "b"][: i % 3],
            "price": rng.random() * 100,
        }
        for i in range(count)
    ]


def rate(count: int, work: Any) -> float:
    start = time.perf_counter()
    work()
    return count / (time.perf_counter() - start)


def decoder_rates(url: str, values: list[bytes]) -> dict[str, float]:
    import fastavro
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    from samsa.spark.schemas.avro_codec import AvroDecoder, parsed_schema
    from samsa.spark.schemas.avro_types import spark_type_of
    from samsa.spark.schemas.registry_client import RegistryClient

    client = RegistryClient(url)
    cases: dict[str, float] = {}
    same = client.version("bench-orders-value", 1)
    newer = client.version("bench-orders-value", 2)
    writer = fastavro.parse_schema(ORDER)
    bodies = [v[5:] for v in values]

    def fastavro_loop() -> None:
        read = fastavro.schemaless_reader
        for body in bodies:
            read(io.BytesIO(body), writer, None)

    def bytes_as_they_are() -> None:
        for start in range(0, len(values), BATCH):
            pa.array(values[start : start + BATCH], type=pa.binary())

    cases["bytes handed on (pa.array of the values)"] = rate(len(values), bytes_as_they_are)
    cases["fastavro.schemaless_reader alone, per record"] = rate(len(values), fastavro_loop)
    for label, reader in (("same schema", same), ("newer reader schema", newer)):
        decoder = AvroDecoder(client, reader)
        arrow_type = to_arrow_type(spark_type_of(*parsed_schema(client, reader))[0], timezone="UTC")

        def decode(decoder: AvroDecoder = decoder, arrow_type: Any = arrow_type) -> None:
            for start in range(0, len(values), BATCH):
                pa.array(decoder.decode_values(values[start : start + BATCH]), type=arrow_type)

        decode()  # fetch the writer schema, warm
        cases[f"samsa decoder into Arrow, {label}"] = rate(len(values), decode)
    return cases


def spark_rates(
    bootstrap: str, url: str, topic: str, rows: int, runs: int
) -> dict[str, list[float]]:
    from pyspark.sql import SparkSession

    import samsa.spark

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("avro-columns-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    samsa.spark.register(spark)

    def job(typed: bool) -> None:
        reader = (
            spark.read.format("samsa")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
        )
        if typed:
            reader = reader.option("valueFormat", "avro").option("schema.registry.url", url)
        reader.load().write.format("noop").mode("overwrite").save()

    results: dict[str, list[float]] = {"binary value": [], "valueFormat=avro": []}
    try:
        job(False)
        job(True)
        for run in range(runs):
            for typed in (False, True) if run % 2 == 0 else (True, False):
                name = "valueFormat=avro" if typed else "binary value"
                results[name].append(rate(rows, lambda typed=typed: job(typed)))
    finally:
        spark.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from samsa.testing import BrokerProcess

    with tempfile.TemporaryDirectory(prefix="samsa-bench-avro-") as tmp:
        proc = BrokerProcess(Path(tmp) / "data", args=["--registry-listen", "127.0.0.1:0"])
        proc.start(timeout=120)
        try:
            if not proc.wait_for_log("schema registry listening on ", 120):
                raise SystemExit("no registry:\n" + proc.log_text()[-3000:])
            found = re.search(
                r"schema registry listening on (http://\S+?)/?$", proc.log_text(), re.M
            )
            assert found is not None
            url = found.group(1)
            registry = SchemaRegistryClient({"url": url})
            topic = "bench-orders"
            ctx = SerializationContext(topic, MessageField.VALUE)
            serialize = AvroSerializer(registry, json.dumps(ORDER))
            values = [serialize(o, ctx) for o in orders(args.records)]
            AvroSerializer(registry, json.dumps(NEWER))(
                {**orders(1)[0], "channel": "app"}, ctx
            )  # version 2, the newer reader schema
            mean = statistics.mean(len(v) for v in values)
            print(f"# {args.records:,} Avro orders (mean {mean:.0f} bytes with the header)")
            print("decoder alone, rows per second (one process, batches of 10,000)")
            for name, value in decoder_rates(url, values).items():
                print(f"  {name:52} {value:12,.0f}")
            admin = AdminClient({"bootstrap.servers": proc.bootstrap})
            admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
            producer = Producer(
                {"bootstrap.servers": proc.bootstrap, "linger.ms": 5, "batch.size": 1_000_000,
                 "queue.buffering.max.messages": 2_000_000}
            )  # fmt: skip
            for i, value in enumerate(values):
                while True:
                    try:
                        producer.produce(topic, value, partition=i % 2)
                        break
                    except BufferError:
                        producer.poll(0.01)
            assert producer.flush(120) == 0
            results = spark_rates(proc.bootstrap, url, topic, args.records, args.runs)
            base = statistics.median(results["binary value"])
            print(f'Spark, format("samsa") into noop, local[2], {args.runs} runs alternating')
            for name, rates in results.items():
                value = statistics.median(rates)
                runs = ", ".join(f"{r:,.0f}" for r in rates)
                print(f"  {name:20} {value:12,.0f} rows/s  {value / base:6.3f}x   (runs {runs})")
        finally:
            proc.stop()


if __name__ == "__main__":
    main()
