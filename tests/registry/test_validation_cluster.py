"""Validation on a broker that does not serve the registry: it reads ``_schemas`` itself.

Two nodes: node 1 serves the registry, node 2 does not and leads the validated topic.
A schema registered through node 1 is accepted by node 2 at once (even one registered
a moment before the produce: node 2 reads ``_schemas`` to its end before refusing an
id it does not know), and a producer without a registered id is refused there too."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from tests.registry.served import registry_url

from samsa.testing.cluster import LocalCluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    directory = tmp_path_factory.mktemp("validation-cluster")
    with LocalCluster(
        directory, controllers=1, brokers=1, settings={"registry.timeout.ms": "20000"}
    ) as c:
        c.nodes[1].settings["registry.listen"] = "127.0.0.1:0"
        c.start()
        try:
            yield c
        finally:
            for node_id, node in c.nodes.items():
                (directory / f"node-{node_id}.log").write_text(node.log_text())


def schema(version: int) -> str:
    fields: list[dict[str, Any]] = [{"name": "id", "type": "int"}]
    fields += [{"name": f"f{i}", "type": "int", "default": 0} for i in range(version)]
    return json.dumps({"type": "record", "name": "Event", "fields": fields})


def produce(bootstrap: str, topic: str, values: list[bytes]) -> list[Any]:
    outcomes: dict[int, Any] = {}
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0})
    for i, value in enumerate(values):
        producer.produce(topic, value, on_delivery=lambda e, _m, i=i: outcomes.__setitem__(i, e))
    assert producer.flush(60) == 0
    return [outcomes[i] for i in range(len(values))]


def test_a_broker_without_the_registry_validates_against_it(cluster: LocalCluster) -> None:
    url = registry_url(cluster.nodes[1])
    topic = f"events-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    new = NewTopic(
        topic,
        num_partitions=1,
        replication_factor=-1,
        replica_assignment=[[2]],
        config={"confluent.value.schema.validation": "true"},
    )
    admin.create_topics([new])[topic].result(30)
    registry = SchemaRegistryClient({"url": url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    # Each version is registered through node 1 and produced to node 2 right away.
    for version in range(6):
        value = AvroSerializer(registry, schema(version))({"id": version}, ctx)
        assert produce(cluster.bootstrap, topic, [value]) == [None], f"version {version}"
    refused = produce(cluster.bootstrap, topic, [b"no schema id", b"\x00\x00\x0f\x42\x40abc"])
    assert [e.code() for e in refused] == [KafkaError.INVALID_RECORD] * 2
    log = cluster.nodes[2].log_text()
    assert re.search(r"reading _schemas for this broker", log), "node 2 read _schemas itself"
    assert "produce to " + topic + "-0 refused" in log
