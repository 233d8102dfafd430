"""Broker-side schema id validation (issue 35's must-show 4) on the package's registry broker.

On a topic with ``confluent.value.schema.validation=true`` a producer whose records carry
no registered schema id gets INVALID_RECORD for each of them (confluent-kafka's delivery
reports), with a RecordError per failing record in the ProduceResponse; records written
by confluent-kafka's AvroSerializer, and every other topic, are unaffected.  Keys, the
RecordNameStrategy and TopicRecordNameStrategy options, every compression codec, the
topic configs as DescribeConfigs and IncrementalAlterConfigs show them."""

from __future__ import annotations

import json
import struct
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)
from confluent_kafka.schema_registry import (
    SchemaRegistryClient,
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
)
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from tests.integration.raw_client import RawClient
from tests.registry.conftest import Served

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_builder import RecordBatchBuilder

pytestmark = pytest.mark.integration

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}],
    }
)
CUSTOMER = json.dumps(
    {
        "type": "record",
        "name": "Customer",
        "namespace": "shop",
        "fields": [{"name": "n", "type": "int"}],
    }
)
VALIDATE = {"confluent.value.schema.validation": "true"}


def new_topic(served: Served, configs: dict[str, str] | None = None) -> str:
    name = f"validated-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": served.broker.bootstrap})
    for future in admin.create_topics([NewTopic(name, 1, 1, config=configs or {})]).values():
        future.result(30)
    return name


def produce(served: Served, topic: str, values: list[Any], **config: Any) -> list[Any]:
    """Send ``(key, value)`` pairs (or values) in one batch; the error of each, in order."""
    outcomes: dict[int, Any] = {}
    producer = Producer(
        {"bootstrap.servers": served.broker.bootstrap, "linger.ms": 50, "retries": 0, **config}
    )
    for i, item in enumerate(values):
        key, value = item if isinstance(item, tuple) else (None, item)
        producer.produce(
            topic, value, key=key, on_delivery=lambda err, _msg, i=i: outcomes.__setitem__(i, err)
        )
    assert producer.flush(30) == 0
    return [outcomes[i] for i in range(len(values))]


def read_values(served: Served, topic: str) -> list[bytes | None]:
    consumer = Consumer(
        {"bootstrap.servers": served.broker.bootstrap, "group.id": uuid.uuid4().hex}
    )
    tp = TopicPartition(topic, 0)
    _, high = consumer.get_watermark_offsets(tp, timeout=10)
    consumer.assign([TopicPartition(topic, 0, 0)])
    found: list[bytes | None] = []
    deadline = time.monotonic() + 30
    while len(found) < high and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and message.error() is None:
            found.append(message.value())
    consumer.close()
    return found


def framed(schema_id: int, body: bytes = b"\x02\x06abc") -> bytes:
    return b"\x00" + struct.pack(">I", schema_id) + body


def avro(served: Served, schema: str, **conf: Any) -> AvroSerializer:
    return AvroSerializer(SchemaRegistryClient({"url": served.url}), schema, conf=conf or None)


def test_only_registered_ids_go_in_and_each_bad_message_hears_why(served: Served) -> None:
    topic = new_topic(served, VALIDATE)
    serializer = avro(served, ORDER)
    ctx = SerializationContext(topic, MessageField.VALUE)
    good = [serializer({"id": i, "item": "pen"}, ctx) for i in range(3)]
    assert produce(served, topic, good) == [None, None, None]

    # Registered, but for another topic's subject: refused as well as unframed bytes.
    other = avro(served, CUSTOMER)(
        {"n": 1}, SerializationContext(f"{topic}-other", MessageField.VALUE)
    )
    outcomes = produce(served, topic, [b"plain bytes", other, framed(999_999)])
    assert [e.code() for e in outcomes] == [KafkaError.INVALID_RECORD] * 3
    assert all(not e.retriable() for e in outcomes)

    # A tombstone passes (it carries no schema); the batch with a bad record does not.
    # (A long linger keeps both in one batch on a loaded machine: flush sends them.)
    outcomes = produce(served, topic, [(b"k", None), (b"k", b"bad")], **{"linger.ms": 5000})
    assert outcomes[1].code() == KafkaError.INVALID_RECORD
    assert outcomes[0] is not None, "the whole batch is refused"
    assert produce(served, topic, [(b"k", None)]) == [None]
    assert read_values(served, topic) == [*good, None]

    plain = new_topic(served)
    assert produce(served, plain, [b"plain bytes", framed(999_999)]) == [None, None]


def test_the_produce_response_names_every_failing_record(served: Served) -> None:
    topic = new_topic(served, VALIDATE)
    good = avro(served, ORDER)(
        {"id": 1, "item": "ink"}, SerializationContext(topic, MessageField.VALUE)
    )
    now = int(time.time() * 1000)
    builder = RecordBatchBuilder(batch_size=1 << 24)
    for value in (good, b"\x01" + good[1:], None, framed(999_999), good[:4]):
        builder.append(now, b"key", value)
    client = RawClient(served.broker.bootstrap)
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 5000,
        "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": builder.build()}]}
        ],
    }
    refused = client.call(0, 9, body)["responses"][0]["partition_responses"][0]
    client.close()
    assert refused["error_code"] == ErrorCode.INVALID_RECORD
    errors = {e["batch_index"]: e["batch_index_error_message"] for e in refused["record_errors"]}
    assert sorted(errors) == [1, 3, 4], "the valid record and the null value pass"
    assert "magic byte" in errors[1] and "magic byte" in errors[4]
    assert f"schema id 999999: it is not registered under subject {topic}-value" in errors[3]
    assert refused["error_message"].startswith(
        "One or more records have been rejected due to 3 record errors in total"
    )
    assert refused["base_offset"] == -1


def test_keys_are_checked_against_the_key_subject(served: Served) -> None:
    topic = new_topic(served, {"confluent.key.schema.validation": "true"})
    key = avro(served, CUSTOMER)({"n": 7}, SerializationContext(topic, MessageField.KEY))
    as_value = avro(served, ORDER)(
        {"id": 7, "item": "x"}, SerializationContext(topic, MessageField.VALUE)
    )
    assert produce(served, topic, [(key, b"any value"), (None, b"no key")]) == [None, None]
    outcome = produce(served, topic, [(as_value, b"v")])[0]
    assert outcome.code() == KafkaError.INVALID_RECORD, "registered for -value, not -key"


@pytest.mark.parametrize(
    ("strategy", "conf"),
    [
        ("RecordNameStrategy", record_subject_name_strategy),
        (
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
            topic_record_subject_name_strategy,
        ),
    ],
)
def test_record_name_strategies(served: Served, strategy: str, conf: Any) -> None:
    topic = new_topic(served, {**VALIDATE, "confluent.value.subject.name.strategy": strategy})
    ctx = SerializationContext(topic, MessageField.VALUE)
    right = avro(served, ORDER, **{"subject.name.strategy": conf})({"id": 2, "item": "x"}, ctx)
    # The same schema under the topic's own subject only: not what the strategy names.
    other = avro(served, CUSTOMER)({"n": 3}, ctx)
    assert produce(served, topic, [right]) == [None]
    outcome = produce(served, topic, [other])[0]
    assert outcome.code() == KafkaError.INVALID_RECORD


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_are_checked(served: Served, codec: str) -> None:
    topic = new_topic(served, VALIDATE)
    good = avro(served, ORDER)(
        {"id": 4, "item": "cap"}, SerializationContext(topic, MessageField.VALUE)
    )
    assert produce(served, topic, [good] * 50, **{"compression.type": codec}) == [None] * 50
    outcomes = produce(served, topic, [good] * 20 + [b"bad"], **{"compression.type": codec})
    assert outcomes[20].code() == KafkaError.INVALID_RECORD


def test_the_topic_configs_are_described_and_altered(served: Served) -> None:
    topic = new_topic(served)
    admin = AdminClient({"bootstrap.servers": served.broker.bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    described = admin.describe_configs([resource])[resource].result(30)
    assert described["confluent.value.schema.validation"].value == "false"
    assert (
        described["confluent.key.subject.name.strategy"].value
        == "io.confluent.kafka.serializers.subject.TopicNameStrategy"
    )
    assert produce(served, topic, [b"before"]) == [None]
    change = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry(
                "confluent.value.schema.validation",
                "true",
                incremental_operation=AlterConfigOpType.SET,
            )
        ],
    )
    admin.incremental_alter_configs([change])[change].result(30)
    deadline = time.monotonic() + 30
    while produce(served, topic, [b"after"])[0] is None:
        assert time.monotonic() < deadline, "validation never started"
    bad = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry(
                "confluent.value.subject.name.strategy",
                "ByGuessStrategy",
                incremental_operation=AlterConfigOpType.SET,
            )
        ],
    )
    with pytest.raises(Exception, match="TopicRecordNameStrategy"):
        admin.incremental_alter_configs([bad])[bad].result(30)
