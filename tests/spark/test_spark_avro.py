"""Typed columns (issue 35's must-show 5): the ``samsa`` source reads an Avro topic written
with two schema versions into one typed DataFrame, and writes a DataFrame back as Avro in
Confluent's wire format that confluent-kafka's AvroDeserializer reads.

A broker serving the registry of its own (the package's broker has none); records are
written by confluent-kafka's AvroSerializer, so what Spark reads is what a real producer
wrote."""

from __future__ import annotations

import datetime
import decimal
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "qty", "type": "int"},
    ],
}
V2 = {
    **V1,
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "qty", "type": "long"},  # promoted: int -> long
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]},
            "default": "NEW",
        },
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}, "default": 0},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            "default": "\u0000",
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
        {"name": "attrs", "type": {"type": "map", "values": "long"}, "default": {}},
        {"name": "ref", "type": ["null", "long", "string"], "default": None},
    ],
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, str]]:
    proc = BrokerProcess(
        tmp_path_factory.mktemp("spark-registry") / "data",
        args=["--registry-listen", "127.0.0.1:0"],
    )
    proc.start()
    try:
        assert proc.wait_for_log("schema registry listening on ", 90), proc.log_text()[-2000:]
        found = re.search(r"schema registry listening on (http://\S+?)/?$", proc.log_text(), re.M)
        assert found is not None
        yield proc, found.group(1)
    finally:
        proc.stop()
        proc.kill()


def new_topic(bootstrap: str, partitions: int = 2) -> str:
    name = f"avro-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def write_both_versions(bootstrap: str, url: str, topic: str, partitions: int = 2) -> None:
    """Four records written with version 1, four with version 2, and a tombstone."""
    registry = SchemaRegistryClient({"url": url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    first = AvroSerializer(registry, json.dumps(V1))
    second = AvroSerializer(registry, json.dumps(V2))
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(4):
        value = first({"id": i, "item": f"pen-{i}", "qty": i}, ctx)
        producer.produce(topic, value, key=b"%d" % i, partition=i % partitions)
    for i in range(4, 8):
        order = {
            "id": i,
            "item": f"ink-{i}",
            "qty": 2**40 + i,
            "note": None if i % 2 else f"note {i}",
            "status": "PAID",
            "at": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
            "price": decimal.Decimal("12.34"),
            "tags": ["a", f"t{i}"],
            "attrs": {"w": i},
            "ref": i if i % 2 else f"r{i}",
        }
        producer.produce(topic, second(order, ctx), key=b"%d" % i, partition=i % partitions)
    producer.produce(topic, None, key=b"tombstone", partition=0)
    assert producer.flush(30) == 0


def avro_read(spark: Any, bootstrap: str, url: str, topic: str, **options: str) -> Any:
    reader = (
        spark.read.format("samsa")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("valueFormat", "avro")
        .option("schema.registry.url", url)
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def test_two_schema_versions_read_into_one_typed_dataframe(
    spark: Any, registry: tuple[BrokerProcess, str]
) -> None:
    proc, url = registry
    topic = new_topic(proc.bootstrap)
    write_both_versions(proc.bootstrap, url, topic)
    df = avro_read(spark, proc.bootstrap, url, topic)
    assert df.schema["value"].dataType.simpleString() == (
        "struct<id:bigint,item:string,qty:bigint,note:string,status:string,at:timestamp,"
        "price:decimal(9,2),tags:array<string>,attrs:map<string,bigint>,"
        "ref:struct<member0:bigint,member1:string>>"
    )
    assert df.schema["key"].dataType.simpleString() == "binary"
    rows = {r["key"]: r["value"] for r in df.collect()}
    assert rows[b"tombstone"] is None
    old = rows[b"1"]
    assert (old.id, old.item, old.qty, old.note, old.status) == (1, "pen-1", 1, None, "NEW")
    assert old.tags == [] and old.attrs == {} and old.ref is None, "the reader's defaults"
    new = rows[b"5"]
    assert (new.id, new.qty, new.status, new.price) == (
        5,
        2**40 + 5,
        "PAID",
        decimal.Decimal("12.34"),
    )
    assert new.at == datetime.datetime(2026, 1, 2, 3, 4, 5)  # the session's zone is UTC
    assert new.tags == ["a", "t5"] and new.attrs == {"w": 5}
    assert new.ref.asDict() == {"member0": 5, "member1": None}
    assert rows[b"6"].ref.asDict() == {"member0": None, "member1": "r6"}
    # Typed columns work in SQL like any struct, and in a streaming read.
    df.createOrReplaceTempView("orders")
    paid = spark.sql("SELECT value.id FROM orders WHERE value.status = 'PAID' ORDER BY 1").collect()
    assert [r.id for r in paid] == [4, 5, 6, 7]
    stream = (
        spark.readStream.format("samsa")
        .option("kafka.bootstrap.servers", proc.bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("valueFormat", "avro")
        .option("schema.registry.url", url)
        .load()
    )
    query = (
        stream.selectExpr("value.item")
        .writeStream.format("memory")
        .queryName(f"typed_{topic.replace('-', '_')}")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    items = spark.sql(f"SELECT item FROM typed_{topic.replace('-', '_')}").collect()
    assert sorted(r.item for r in items if r.item) == sorted(
        [f"pen-{i}" for i in range(4)] + [f"ink-{i}" for i in range(4, 8)]
    )


def test_an_older_version_and_records_that_are_not_avro(
    spark: Any, registry: tuple[BrokerProcess, str]
) -> None:
    proc, url = registry
    topic = new_topic(proc.bootstrap, partitions=1)
    write_both_versions(proc.bootstrap, url, topic, partitions=1)
    producer = Producer({"bootstrap.servers": proc.bootstrap})
    producer.produce(topic, b"not avro", key=b"bad")
    assert producer.flush(30) == 0
    # Version 1 as the reader, PERMISSIVE: what it cannot read is null (version 2 wrote
    # qty as a long, which an int cannot hold; and the bytes that are not Avro at all).
    first = avro_read(spark, proc.bootstrap, url, topic, valueSchemaVersion="1", mode="PERMISSIVE")
    assert [f.name for f in first.schema["value"].dataType.fields] == ["id", "item", "qty"]
    rows = {r["key"]: r["value"] for r in first.collect()}
    assert rows[b"2"].asDict() == {"id": 2, "item": "pen-2", "qty": 2}
    assert rows[b"bad"] is None and rows[b"7"] is None
    with pytest.raises(Exception, match=r"offset 9 of .*-0 cannot be read as Avro"):
        avro_read(spark, proc.bootstrap, url, topic).collect()
    with pytest.raises(Exception, match="valueSubject"):
        avro_read(spark, proc.bootstrap, url, f"{topic},{topic}x").schema  # noqa: B018


def test_a_dataframe_written_as_avro_is_read_by_confluent_kafka(
    spark: Any, registry: tuple[BrokerProcess, str]
) -> None:
    proc, url = registry
    topic = new_topic(proc.bootstrap, partitions=1)
    df = spark.createDataFrame(
        [
            (i, f"item-{i}", None if i % 2 else [1.5, float(i)], datetime.date(2026, 3, i + 1))
            for i in range(5)
        ],
        "id long, item string, sizes array<double>, day date",
    ).selectExpr("CAST(id AS STRING) AS key", "struct(*) AS value")
    (
        df.write.format("samsa")
        .option("kafka.bootstrap.servers", proc.bootstrap)
        .option("topic", topic)
        .option("valueFormat", "avro")
        .option("schema.registry.url", url)
        .option("valueRecordName", "Line")
        .option("valueRecordNamespace", "shop")
        .mode("append")
        .save()
    )
    registry_client = SchemaRegistryClient({"url": url})
    latest = registry_client.get_latest_version(f"{topic}-value")
    assert json.loads(latest.schema.schema_str)["name"] == "Line"
    deserialize = AvroDeserializer(registry_client)
    consumer = Consumer({"bootstrap.servers": proc.bootstrap, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, 0, 0)])
    read: dict[bytes, Any] = {}
    while len(read) < 5:
        message = consumer.poll(10)
        assert message is not None, f"only {len(read)} records came back"
        ctx = SerializationContext(topic, MessageField.VALUE)
        read[message.key()] = deserialize(message.value(), ctx)
    consumer.close()
    assert read[b"2"] == {
        "id": 2,
        "item": "item-2",
        "sizes": [1.5, 2.0],
        "day": datetime.date(2026, 3, 3),
    }
    assert read[b"1"]["sizes"] is None
    # Written again with auto.register.schemas=false: the schema is found, not added.
    df.write.format("samsa").option("kafka.bootstrap.servers", proc.bootstrap).option(
        "topic", topic
    ).option("valueFormat", "avro").option("schema.registry.url", url).option(
        "valueRecordName", "Line"
    ).option("valueRecordNamespace", "shop").option("auto.register.schemas", "false").mode(
        "append"
    ).save()
    assert registry_client.get_versions(f"{topic}-value") == [1]
    # And Spark reads its own writing back into the same columns.
    back = avro_read(spark, proc.bootstrap, url, topic).select("value.*").orderBy("id").collect()
    assert [r.item for r in back] == [f"item-{i}" for i in range(5) for _ in range(2)]
