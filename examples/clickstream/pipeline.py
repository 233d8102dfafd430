"""The clickstream job: windowed page views per minute, to a topic and to Parquet.

Reads click events from a topic with the ``samsa`` source, parses their JSON,
counts views per page in one-minute event-time windows (a 2-minute watermark
bounds the state), and writes each micro-batch's updated counts both to a
topic (key ``<window start>|<page>``, value JSON; the latest value per key is
the count) and to Parquet.  ``--available-now`` processes what is there and
stops; without it the job runs until interrupted.

    python pipeline.py --bootstrap 127.0.0.1:9092 --output ./clickstream-out
    spark-submit --master spark://HOST:7077 pipeline.py --bootstrap BROKER:9092 ...
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

EVENT_SCHEMA = "user string, page string, ts timestamp"


def build_query(
    spark: Any,
    bootstrap: str,
    source_topic: str,
    counts_topic: str,
    output: Path,
    available_now: bool = True,
) -> Any:
    from pyspark.sql import functions as F

    clicks = (
        spark.readStream.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source_topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("e"))
        .select("e.*")
    )
    counts = (
        clicks.withWatermark("ts", "2 minutes")
        .groupBy(F.window("ts", "1 minute").alias("window"), "page")
        .count()
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "page",
            "count",
        )
    )

    def write_both(batch: Any, batch_id: int) -> None:
        batch.persist()
        batch.write.mode("append").parquet(str(output / "counts"))
        (
            batch.select(
                F.concat_ws("|", F.date_format("window_start", "yyyy-MM-dd'T'HH:mm"), "page").alias(
                    "key"
                ),
                F.to_json(F.struct("window_start", "window_end", "page", "count")).alias("value"),
            )
            .write.format("samsa")
            .mode("append")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", counts_topic)
            .save()
        )
        batch.unpersist()

    writer = (
        counts.writeStream.outputMode("update")
        .foreachBatch(write_both)
        .option("checkpointLocation", str(output / "checkpoint"))
    )
    if available_now:
        writer = writer.trigger(availableNow=True)
    return writer.start()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", default="127.0.0.1:9092")
    ap.add_argument("--source-topic", default="clicks")
    ap.add_argument("--counts-topic", default="page-counts")
    ap.add_argument("--output", type=Path, default=Path("clickstream-out"))
    ap.add_argument("--master", help="Spark master URL (default: spark-submit's, else local[2])")
    ap.add_argument("--available-now", action="store_true", help="process what is there, stop")
    args = ap.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import samsa.spark

    builder = SparkSession.builder.appName("samsa-clickstream")
    if args.master:
        builder = builder.master(args.master)
    builder = (
        # Executors run Python from this venv (it has samsa[spark]); on a cluster
        # every machine needs the same path, or pass --conf spark.pyspark.python.
        builder.config("spark.pyspark.python", os.environ["PYSPARK_PYTHON"])
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    samsa.spark.register(spark)
    query = build_query(
        spark, args.bootstrap, args.source_topic, args.counts_topic, args.output, args.available_now
    )
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
