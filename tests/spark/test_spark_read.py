"""``spark.read`` / ``spark.readStream`` of the ``samsa`` format on a local SparkSession.

Records are written by confluent-kafka (compressed and not, with headers), so
what Spark reads is checked against what a real client wrote.  The batch read
test runs against Samsa's broker and against the peer broker (tansu).  tansu
answers ListOffsets(latest) with the last batch's base offset + 1 rather than
the offset after its last record, so any client (Spark's own Kafka source
included) would end a "latest" read early on multi-record batches; against
tansu the test therefore writes one record per batch.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
from _tansu import Tansu

Row = tuple[int, int, bytes | None, bytes | None]
SPARK_SCHEMA = (
    "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
    "timestamp:timestamp,timestampType:int>"
)


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)


def produce(
    bootstrap: str,
    topic: str,
    count: int,
    partitions: int,
    *,
    start: int = 0,
    headers: bool = True,
    one_per_batch: bool = False,
) -> list[Row]:
    """Half the records lz4-compressed, half not; returns (partition, offset, key, value)."""
    written: list[Row] = []
    for compression, part in (("lz4", range(start, start + count // 2)), ("none", range(start + count // 2, start + count))):  # fmt: skip
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "compression.type": compression,
                "linger.ms": 0 if one_per_batch else 5,
                "batch.num.messages": 1 if one_per_batch else 10_000,
            }
        )

        def done(err: Any, msg: Any) -> None:
            assert err is None, err
            written.append((msg.partition(), msg.offset(), msg.key(), msg.value()))

        for i in part:
            producer.produce(
                topic,
                key=b"key-%d" % i,
                value=b"value-%d" % i,
                partition=i % partitions,
                headers=[("n", b"%d" % i), ("src", b"test")] if headers else None,
                on_delivery=done,
            )
        assert producer.flush(15) == 0
    return sorted(written)


@pytest.fixture(scope="module", params=["samsa", "tansu"])
def source(request: pytest.FixtureRequest, broker: BrokerProcess) -> Iterator[tuple[str, bool]]:
    """(bootstrap, is the peer) of Samsa's broker or of the peer broker."""
    if request.param == "samsa":
        yield broker.bootstrap, False
        return
    peer = Tansu()
    try:
        yield peer.bootstrap, True
    finally:
        peer.stop()


def stream_to_parquet(
    spark: Any, out: Path, checkpoint: Path, source: str = "samsa", **options: str
) -> Any:
    """Run one availableNow streaming read of the ``samsa`` source (or Spark's
    ``kafka`` connector) into Parquet; returns the query's failure (None when it
    finished cleanly)."""
    reader = spark.readStream.format(source).option("startingOffsets", "earliest")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (
        reader.load()
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(120)
    except Exception as exc:  # the query's failure, as Spark raises it
        return exc
    return query.exception()


def rows_of(df: Any) -> list[Row]:
    return sorted((r.partition, r.offset, r.key, r.value) for r in df.collect())


def test_batch_read_of_every_partition_with_compression_and_headers(
    spark: Any, source: tuple[str, bool]
) -> None:
    bootstrap, is_peer = source
    topic = f"spark-read-{bootstrap.rsplit(':', 1)[1]}"
    create(bootstrap, topic, 3)
    written = produce(bootstrap, topic, 60, 3, one_per_batch=is_peer)
    df = (
        spark.read.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
    )
    assert (
        df.schema.simpleString()
        == SPARK_SCHEMA[:-1] + ",headers:array<struct<key:string,value:binary>>>"
    )
    rows = df.collect()
    assert sorted((r.partition, r.offset, r.key, r.value) for r in rows) == written
    assert {r.topic for r in rows} == {topic} and {r.timestampType for r in rows} == {0}
    first = next(r for r in rows if r.key == b"key-7")
    assert [(h.key, h.value) for h in first.headers] == [("n", b"7"), ("src", b"test")]
    assert abs(first.timestamp.timestamp() - time.time()) < 600

    plain = spark.read.format("samsa").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load()  # fmt: skip
    assert plain.schema.simpleString() == SPARK_SCHEMA
    split = plain.select("partition", "offset")
    assert split.count() == 60


def test_starting_and_ending_offsets_json_and_timestamps(spark: Any, broker: BrokerProcess) -> None:
    bootstrap, topic = broker.bootstrap, "spark-offsets"
    create(bootstrap, topic, 2)
    written = produce(bootstrap, topic, 40, 2, headers=False)

    def read(**options: str) -> list[Row]:
        reader = spark.read.format("samsa").option("kafka.bootstrap.servers", bootstrap)
        for k, v in {"subscribe": topic, **options}.items():
            reader = reader.option(k, v)
        return rows_of(reader.load())

    starting = json.dumps({topic: {"0": 5, "1": -2}})
    ending = json.dumps({topic: {"0": 15, "1": -1}})
    assert read(startingOffsets=starting, endingOffsets=ending) == [
        r for r in written if (r[0] == 0 and 5 <= r[1] < 15) or r[0] == 1
    ]
    assert len(read(minPartitions="7")) == 40

    # By time: everything is written "now", so a timestamp from the past starts
    # at the beginning and one from the future reads nothing.
    past, future = int((time.time() - 3600) * 1000), int((time.time() + 3600) * 1000)
    assert len(read(startingTimestamp=str(past))) == 40
    assert read(startingTimestamp=str(future)) == []
    by_time = json.dumps({topic: {"0": future, "1": past}})
    assert [r[0] for r in read(startingOffsetsByTimestamp=by_time)] == [1] * 20


def test_min_partitions_splits_ranges_across_spark_partitions(
    spark: Any, broker: BrokerProcess
) -> None:
    bootstrap, topic = broker.bootstrap, "spark-split"
    create(bootstrap, topic, 1)
    produce(bootstrap, topic, 100, 1, headers=False)
    df = (
        spark.read.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("minPartitions", "4")
        .load()
    )
    assert df.rdd.getNumPartitions() == 4
    assert sorted(r.offset for r in df.select("offset").collect()) == list(range(100))


def test_streaming_available_now_to_parquet_restarts_exactly_once(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    bootstrap, topic = broker.bootstrap, "spark-stream"
    create(bootstrap, topic, 3)
    produce(bootstrap, topic, 90, 3, headers=False)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run_once() -> None:
        options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
        assert stream_to_parquet(spark, out, checkpoint, **options) is None

    run_once()
    assert spark.read.parquet(str(out)).count() == 90
    produce(bootstrap, topic, 60, 3, start=90, headers=False)
    run_once()
    rows = spark.read.parquet(str(out)).select("partition", "offset", "value").collect()
    assert len(rows) == 150
    assert len({(r.partition, r.offset) for r in rows}) == 150
    assert {r.value for r in rows} == {b"value-%d" % i for i in range(150)}


def test_max_offsets_per_trigger_limits_every_micro_batch(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    bootstrap, topic = broker.bootstrap, "spark-limit"
    create(bootstrap, topic, 2)
    produce(bootstrap, topic, 100, 2, headers=False)
    query = (
        spark.readStream.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "30")
        .load()
        .writeStream.format("memory")
        .queryName("limited")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes == [30, 30, 30, 10]
    latest = query.recentProgress[-1]["sources"][0]["latestOffset"]
    assert json.loads(latest) == {topic: {"0": 50, "1": 50}}
    assert spark.sql("select count(*) as n from limited").collect()[0].n == 100


def test_subscribe_pattern_picks_up_new_topics(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    bootstrap = broker.bootstrap
    create(bootstrap, "pattern-a", 1)
    produce(bootstrap, "pattern-a", 10, 1, headers=False)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run_once() -> list[tuple[str, int, int]]:
        options = {"kafka.bootstrap.servers": bootstrap, "subscribePattern": "pattern-.*"}
        assert stream_to_parquet(spark, out, checkpoint, **options) is None
        rows = spark.read.parquet(str(out)).collect()
        return sorted((r.topic, r.partition, r.offset) for r in rows)

    assert run_once() == [("pattern-a", 0, i) for i in range(10)]
    create(bootstrap, "pattern-b", 2)
    produce(bootstrap, "pattern-b", 20, 2, headers=False)
    rows = run_once()  # the new topic, from its start; nothing of the old one again
    assert len(rows) == 30 and len(set(rows)) == 30
    assert sum(1 for topic, _, _ in rows if topic == "pattern-b") == 20


def test_records_deleted_before_they_were_read_fail_or_are_skipped(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    from samsa.client import Admin

    bootstrap, topic = broker.bootstrap, "spark-data-loss"
    create(bootstrap, topic, 1)
    produce(bootstrap, topic, 20, 1, headers=False)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run(fail_on_data_loss: str) -> Any:
        options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
        return stream_to_parquet(
            spark, out, checkpoint, failOnDataLoss=fail_on_data_loss, **options
        )

    assert run("true") is None
    produce(bootstrap, topic, 20, 1, start=20, headers=False)
    with Admin({"bootstrap.servers": bootstrap}) as admin:
        admin.delete_records({(topic, 0): 30})  # offsets 20..29 go before being read

    failure = run("true")
    assert failure is not None
    assert f"offsets 20..29 of {topic}-0 were deleted" in str(failure)
    assert "failOnDataLoss=false" in str(failure)

    assert run("false") is None
    offsets = sorted(r.offset for r in spark.read.parquet(str(out)).collect())
    assert offsets == list(range(20)) + list(range(30, 40))
