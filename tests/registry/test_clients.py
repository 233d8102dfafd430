"""Real registry clients against Samsa's registry, records through Samsa's broker (issue 35's
must-show 1): confluent-kafka's SchemaRegistryClient with its Avro, Protobuf and JSON Schema
serializers and deserializers, and python-schema-registry-client."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tests.registry.conftest import Served

pytestmark = pytest.mark.integration

ORDER_AVRO = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "samsa.test",
        "fields": [
            {"name": "id", "type": "string"},
            {"name": "qty", "type": "int"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)
ORDER_JSON = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Order",
        "type": "object",
        "properties": {"id": {"type": "string"}, "qty": {"type": "integer"}},
        "required": ["id", "qty"],
    }
)
ORDERS = [{"id": f"o-{i}", "qty": i, "note": None if i % 2 else f"n{i}"} for i in range(5)]


def order_message_class() -> Any:
    """A Protobuf message class built from a descriptor (no protoc on the machine)."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="samsa_test_order.proto", package="samsa.test", syntax="proto3"
    )
    message = fdp.message_type.add(name="Order")
    for number, (name, kind) in enumerate(
        (("id", descriptor_pb2.FieldDescriptorProto.TYPE_STRING),
         ("qty", descriptor_pb2.FieldDescriptorProto.TYPE_INT32)), 1
    ):  # fmt: skip
        message.field.add(
            name=name,
            number=number,
            type=kind,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("samsa.test.Order"))


def round_trip(served: Served, serialize: Any, deserialize: Any, values: list[Any]) -> list[Any]:
    """Serialize ``values`` into a new topic with confluent-kafka, read them back, deserialize."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": served.broker.bootstrap})
    for value in values:
        data = serialize(value, SerializationContext(topic, MessageField.VALUE))
        assert data[0] == 0  # Confluent's wire format: magic byte, then the schema id
        producer.produce(topic, data)
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": served.broker.bootstrap,
            "group.id": f"g-{topic}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out: list[Any] = []
    try:
        for _ in range(200):
            if len(out) == len(values):
                break
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                out.append(
                    deserialize(message.value(), SerializationContext(topic, MessageField.VALUE))
                )
    finally:
        consumer.close()
    return out


@pytest.fixture(scope="module")
def client(served: Served) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": served.url})


def test_confluent_avro_round_trip(served: Served, client: SchemaRegistryClient) -> None:
    serializer = AvroSerializer(client, ORDER_AVRO)
    deserializer = AvroDeserializer(client)
    assert round_trip(served, serializer, deserializer, ORDERS) == ORDERS


def test_confluent_protobuf_round_trip(served: Served, client: SchemaRegistryClient) -> None:
    order = order_message_class()
    serializer = ProtobufSerializer(order, client, {"use.deprecated.format": False})
    deserializer = ProtobufDeserializer(order, {"use.deprecated.format": False})
    values = [order(id=o["id"], qty=o["qty"]) for o in ORDERS]
    got = round_trip(served, serializer, deserializer, values)
    assert [(m.id, m.qty) for m in got] == [(o["id"], o["qty"]) for o in ORDERS]


def test_confluent_json_schema_round_trip(served: Served, client: SchemaRegistryClient) -> None:
    serializer = JSONSerializer(ORDER_JSON, client)
    deserializer = JSONDeserializer(ORDER_JSON)
    values = [{"id": o["id"], "qty": o["qty"]} for o in ORDERS]
    assert round_trip(served, serializer, deserializer, values) == values


def test_confluent_client_api(served: Served, client: SchemaRegistryClient) -> None:
    subject = f"api-{uuid.uuid4().hex[:6]}-value"
    schema_id = client.register_schema(subject, Schema(ORDER_AVRO, "AVRO"))
    assert client.register_schema(subject, Schema(ORDER_AVRO, "AVRO")) == schema_id
    assert client.get_schema(schema_id).schema_str == json.dumps(
        json.loads(ORDER_AVRO), separators=(",", ":")
    )
    latest = client.get_latest_version(subject)
    assert (latest.schema_id, latest.version, latest.subject) == (schema_id, 1, subject)
    assert client.lookup_schema(subject, Schema(ORDER_AVRO, "AVRO")).version == 1
    assert subject in client.get_subjects()
    assert client.get_versions(subject) == [1]
    narrowed = json.loads(ORDER_AVRO)
    narrowed["fields"].append({"name": "extra", "type": "long"})
    assert not client.test_compatibility(subject, Schema(json.dumps(narrowed), "AVRO"))
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, Schema(json.dumps(narrowed), "AVRO"))
    assert refused.value.http_status_code == 409
    client.set_compatibility(subject, "NONE")
    assert client.get_compatibility(subject) == "NONE"
    second = client.register_schema(subject, Schema(json.dumps(narrowed), "AVRO"))
    assert second != schema_id
    assert client.delete_subject(subject) == [1, 2]
    with pytest.raises(SchemaRegistryError) as gone:  # (get_latest_version is cached)
        client.get_versions(subject)
    assert gone.value.error_code == 40401


def test_python_schema_registry_client(served: Served) -> None:
    from schema_registry.client import SchemaRegistryClient as PsrClient
    from schema_registry.client import schema as psr_schema
    from schema_registry.serializers import AvroMessageSerializer

    psr = PsrClient(url=served.url)
    subject = f"psr-{uuid.uuid4().hex[:6]}-value"
    avro = psr_schema.AvroSchema(ORDER_AVRO)
    schema_id = psr.register(subject, avro)
    assert psr.register(subject, avro) == schema_id
    assert psr.get_by_id(schema_id) == avro
    found = psr.get_schema(subject)
    assert found is not None and (found.schema_id, found.version) == (schema_id, 1)
    assert psr.check_version(subject, avro).schema_id == schema_id  # type: ignore[union-attr]
    assert psr.test_compatibility(subject, avro)
    assert psr.get_subjects() and subject in psr.get_subjects()
    serializer = AvroMessageSerializer(psr)
    encoded = serializer.encode_record_with_schema(subject.removesuffix("-value"), avro, ORDERS[0])
    assert serializer.decode_message(encoded) == ORDERS[0]
    assert psr.update_compatibility("FULL", subject)
    assert psr.get_compatibility(subject) == "FULL"
    assert psr.delete_subject(subject) == [1]
