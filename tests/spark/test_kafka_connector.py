"""Spark's own JVM Kafka connector (``format("kafka")``, the way most PySpark users
read Kafka) against Samsa's broker on a local SparkSession: batch and streaming
reads (with a checkpoint restart) and batch writes, and the same topic read by
the ``samsa`` source gives identical rows.

The connector's jars come from ``scripts/kafka-reference.sh`` (they are put on
``spark.jars`` by the session fixture); without them these tests skip, except
in CI where ``scripts/test.sh`` always fetches them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from samsa.testing import BrokerProcess
from samsa.testing.kafka_reference import KafkaReference

from .test_spark_read import create, produce, stream_to_parquet
from .test_spark_write import read_back

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]
COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")


@pytest.fixture(scope="module", autouse=True)
def connector(kafka_reference: KafkaReference, spark: Any) -> None:
    """Skip (or fail in CI, via ``kafka_reference``) without the connector's jars."""
    jars = spark.sparkContext.getConf().get("spark.jars", "")
    assert "spark-sql-kafka" in jars, f"the session has no Kafka connector on spark.jars: {jars!r}"


def read_batch(spark: Any, source: str, bootstrap: str, topic: str) -> list[tuple[Any, ...]]:
    df = (
        spark.read.format(source)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
    )
    rows = df.select(*COLUMNS, "headers").collect()
    return sorted(
        ((*(row[c] for c in COLUMNS), _headers(row.headers)) for row in rows),
        key=lambda r: (r[3], r[4]),
    )


def _headers(headers: Any) -> list[tuple[str, bytes]]:
    return [(h.key, bytes(h.value)) for h in headers or []]


def test_batch_read_by_the_connector_equals_the_samsa_source(
    spark: Any, broker: BrokerProcess
) -> None:
    bootstrap, topic = broker.bootstrap, "connector-read"
    create(bootstrap, topic, 3)
    written = produce(bootstrap, topic, 120, 3)
    by_connector = read_batch(spark, "kafka", bootstrap, topic)
    assert [(r[3], r[4], r[0], r[1]) for r in by_connector] == written
    assert all(r[2] == topic and r[7][0][0] == "n" for r in by_connector)
    assert by_connector == read_batch(spark, "samsa", bootstrap, topic)


def test_streaming_read_by_the_connector_restarts_from_its_checkpoint(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    bootstrap, topic = broker.bootstrap, "connector-stream"
    create(bootstrap, topic, 3)
    produce(bootstrap, topic, 90, 3, headers=False)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run_once() -> None:
        options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
        assert stream_to_parquet(spark, out, checkpoint, "kafka", **options) is None

    run_once()
    assert spark.read.parquet(str(out)).count() == 90
    produce(bootstrap, topic, 60, 3, start=90, headers=False)
    run_once()
    rows = spark.read.parquet(str(out)).select("partition", "offset", "value").collect()
    assert len({(r.partition, r.offset) for r in rows}) == len(rows) == 150
    assert {r.value for r in rows} == {b"value-%d" % i for i in range(150)}
    samsa_out = tmp_path / "samsa-out"
    options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
    assert stream_to_parquet(spark, samsa_out, tmp_path / "samsa-ck", **options) is None
    same = spark.read.parquet(str(samsa_out)).select("partition", "offset", "value").collect()
    assert sorted(same) == sorted(rows)


def test_batch_write_by_the_connector_to_a_samsa_topic(spark: Any, broker: BrokerProcess) -> None:
    bootstrap, topic = broker.bootstrap, "connector-write"
    create(bootstrap, topic, 2)
    df = spark.createDataFrame(
        [(f"k{i}", f"v{i}".encode(), i % 2, [("n", str(i).encode())]) for i in range(50)],
        "key string, value binary, partition int, headers array<struct<key: string, value: binary>>",
    )
    (
        df.write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.acks", "all")
        .option("topic", topic)
        .save()
    )
    rows = read_back(bootstrap, topic, 2, 50)
    assert [(p, k, v, h) for p, k, v, h in rows] == sorted(
        ((i % 2, b"k%d" % i, b"v%d" % i, [("n", b"%d" % i)]) for i in range(50)),
        key=lambda r: (r[0], r[2]),
    )
    by_samsa = read_batch(spark, "samsa", bootstrap, topic)
    assert by_samsa == read_batch(spark, "kafka", bootstrap, topic)
