"""``df.write`` / ``df.writeStream`` to the ``samsa`` format, read back by confluent-kafka,
and the errors a user gets for bad options and columns (at planning time)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

Read = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]]]


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)


def read_back(bootstrap: str, topic: str, partitions: int, count: int) -> list[Read]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}"})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out: list[Read] = []
    deadline = time.monotonic() + 30
    try:
        while len(out) < count:
            assert time.monotonic() < deadline, f"read {len(out)} of {count}"
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            headers = [(k, bytes(v)) for k, v in (msg.headers() or [])]
            out.append((msg.partition(), msg.key(), msg.value(), headers))  # type: ignore[arg-type]
    finally:
        consumer.close()
    return sorted(out, key=lambda r: (r[0], r[2] or b""))


def test_batch_write_with_keys_partitions_and_headers(spark: Any, broker: BrokerProcess) -> None:
    bootstrap, topic = broker.bootstrap, "spark-write"
    create(bootstrap, topic, 2)
    df = spark.createDataFrame(
        [(f"k{i}", f"v{i}".encode(), i % 2, [("n", str(i).encode())]) for i in range(50)],
        "key string, value binary, partition int, headers array<struct<key: string, value: binary>>",
    )
    (
        df.write.format("samsa")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .save()
    )
    rows = read_back(bootstrap, topic, 2, 50)
    assert len(rows) == 50
    for partition, key, value, headers in rows:
        assert key is not None and value is not None
        i = int(key[1:])
        assert (partition, value, headers) == (i % 2, b"v%d" % i, [("n", b"%d" % i)])


def test_batch_write_with_a_topic_column_and_compression(spark: Any, broker: BrokerProcess) -> None:
    bootstrap = broker.bootstrap
    for topic in ("spark-route-a", "spark-route-b"):
        create(bootstrap, topic, 1)
    df = spark.createDataFrame(
        [("spark-route-a" if i % 3 else "spark-route-b", f"value {i}") for i in range(30)],
        "topic string, value string",
    )
    (
        df.write.format("samsa")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.compression.type", "zstd")
        .option("kafka.acks", "all")
        .save()
    )
    assert len(read_back(bootstrap, "spark-route-a", 1, 20)) == 20
    b = read_back(bootstrap, "spark-route-b", 1, 10)
    assert sorted(int(v[6:]) for _, _, v, _ in b if v) == list(range(0, 30, 3))


def test_streaming_write_from_a_streaming_read(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    bootstrap = broker.bootstrap
    create(bootstrap, "spark-stream-in", 2)
    create(bootstrap, "spark-stream-out", 2)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(40):
        producer.produce("spark-stream-in", key=b"%d" % i, value=b"in-%d" % i, partition=i % 2)
    assert producer.flush(10) == 0
    query = (
        spark.readStream.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "spark-stream-in")
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "upper(cast(value as string)) as value", "partition")
        .writeStream.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", "spark-stream-out")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    rows = read_back(bootstrap, "spark-stream-out", 2, 40)
    assert sorted(v for _, _, v, _ in rows if v) == sorted(b"IN-%d" % i for i in range(40))
    assert all(int(k or b"-1") % 2 == p for p, k, _, _ in rows)


def bad(spark: Any, run: Any, message: str) -> None:
    """``run`` fails quickly, with ``message`` in what the user sees."""
    started = time.monotonic()
    with pytest.raises(Exception) as error:
        run()
    assert message in str(error.value), str(error.value)[:2000]
    assert time.monotonic() - started < 60


def test_bad_read_options_are_named_at_planning_time(spark: Any, broker: BrokerProcess) -> None:
    bootstrap = broker.bootstrap

    def read(**options: str) -> Any:
        reader = spark.read.format("samsa")
        for k, v in options.items():
            reader = reader.option(k, v)
        return lambda: reader.load().collect()

    bad(spark, read(subscribe="t"), "option 'kafka.bootstrap.servers' is required")
    both = read(**{"kafka.bootstrap.servers": bootstrap, "subscribe": "t", "assign": '{"t": [0]}'})
    bad(spark, both, "exactly one of the options 'subscribe', 'subscribePattern' and 'assign'")
    bad(spark, read(**{"kafka.bootstrap.servers": bootstrap}), "exactly one of the options")
    bad(
        spark,
        read(
            **{"kafka.bootstrap.servers": bootstrap, "subscribe": "t", "startingOffsets": "{oops"}
        ),
        "option 'startingOffsets' is not valid JSON",
    )
    bad(
        spark,
        read(
            **{"kafka.bootstrap.servers": bootstrap, "subscribe": "t", "startingOffsets": "latest"}
        ),
        "option 'startingOffsets' cannot be 'latest' for batch queries",
    )
    bad(
        spark,
        read(
            **{
                "kafka.bootstrap.servers": bootstrap,
                "subscribe": "t",
                "kafka.auto.offset.reset": "earliest",
            }
        ),
        "option 'kafka.auto.offset.reset' is not supported",
    )
    unreachable = read(
        **{
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "subscribe": "t",
            "kafka.request.timeout.ms": "2000",
        }
    )
    bad(spark, unreachable, "cannot read offsets from kafka.bootstrap.servers=127.0.0.1:1")

    stream = (
        spark.readStream.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "t")
        .option("endingOffsets", json.dumps({"t": {"0": 5}}))
    )
    bad(
        spark,
        lambda: stream.load().writeStream.format("console").start().awaitTermination(30),
        "option 'endingOffsets' is not supported for streaming queries",
    )


def test_bad_write_columns_are_named_at_planning_time(spark: Any, broker: BrokerProcess) -> None:
    def write(df: Any, **options: str) -> Any:
        writer = (
            df.write.format("samsa")
            .mode("append")
            .option("kafka.bootstrap.servers", broker.bootstrap)
        )
        for k, v in options.items():
            writer = writer.option(k, v)
        return writer.save

    no_value = spark.createDataFrame([("k",)], "key string")
    bad(spark, write(no_value, topic="t"), "a 'value' column (binary or string) is required")
    int_value = spark.createDataFrame([(1,)], "value int")
    bad(spark, write(int_value, topic="t"), "column 'value' must be binary or string, not int")
    long_partition = spark.createDataFrame([("v", 1)], "value string, partition long")
    bad(spark, write(long_partition, topic="t"), "column 'partition' must be int, not bigint")
    no_topic = spark.createDataFrame([("v",)], "value string")
    bad(spark, write(no_topic), "no 'topic' column and no 'topic' option")
