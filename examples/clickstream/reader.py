"""Print the clickstream job's results: the latest count per (minute, page) from the
counts topic, checked against the Parquet output.

Both sinks got the same updated counts, so the latest value per key in the topic
and the largest count per (window, page) in Parquet must agree.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from samsa.client import Admin, Consumer, TopicPartition


def topic_counts(bootstrap: str, topic: str) -> dict[tuple[str, str], int]:
    """Latest count per (window start, page) key; reads the topic to its end."""
    latest: dict[tuple[str, str], int] = {}
    with Admin({"bootstrap.servers": bootstrap}) as admin:
        count = len(admin.describe_topics([topic])[topic].partitions)
    partitions = [TopicPartition(topic, p) for p in range(count)]
    with Consumer({"bootstrap.servers": bootstrap}) as consumer:
        ends = consumer.end_offsets(partitions)
        consumer.assign(partitions)
        consumer.seek_to_beginning(partitions)
        while any(consumer.position(tp) < ends[tp] for tp in partitions):
            for record in consumer.poll(1.0):
                window, page = record.key.decode().split("|", 1)
                latest[(window, page)] = json.loads(record.value)["count"]
    return latest


def parquet_counts(output: Path) -> dict[tuple[str, str], int]:
    import pyarrow.parquet as pq

    table = pq.read_table(output / "counts")
    best: dict[tuple[str, str], int] = {}
    for start, page, count in zip(
        table.column("window_start").to_pylist(),
        table.column("page").to_pylist(),
        table.column("count").to_pylist(),
        strict=True,
    ):
        key = (start.strftime("%Y-%m-%dT%H:%M"), page)
        best[key] = max(best.get(key, 0), count)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", default="127.0.0.1:9092")
    ap.add_argument("--counts-topic", default="page-counts")
    ap.add_argument("--output", type=Path, default=Path("clickstream-out"))
    args = ap.parse_args()
    from_topic = topic_counts(args.bootstrap, args.counts_topic)
    from_parquet = parquet_counts(args.output)
    print(f"{'minute (UTC)':<18} {'page':<10} {'views':>6}")
    for (window, page), count in sorted(from_topic.items()):
        print(f"{window:<18} {page:<10} {count:>6}")
    total = sum(from_topic.values())
    agree = "agree" if from_topic == from_parquet else "DISAGREE"
    print(f"\n{total} views in {len(from_topic)} (minute, page) cells; topic and Parquet {agree}")
    if from_topic != from_parquet:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
