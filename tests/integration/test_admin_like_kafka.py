"""Admin answers that must match Apache Kafka's, checked through real admin clients.

Topic names colliding on '.' and '_', each resource type's own authorized
operations, and DeleteRecords refused on a topic without the delete policy.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    OffsetSpec,
    ResourcePatternType,
    ResourceType,
)

from samsa.testing import BrokerProcess

Op = AclOperation
TOPIC_OPERATIONS = {
    Op.READ,
    Op.WRITE,
    Op.CREATE,
    Op.DESCRIBE,
    Op.DELETE,
    Op.ALTER,
    Op.DESCRIBE_CONFIGS,
    Op.ALTER_CONFIGS,
}
CLUSTER_OPERATIONS = {
    Op.CREATE,
    Op.CLUSTER_ACTION,
    Op.DESCRIBE_CONFIGS,
    Op.ALTER_CONFIGS,
    Op.IDEMPOTENT_WRITE,
    Op.ALTER,
    Op.DESCRIBE,
}
GROUP_OPERATIONS = {Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}


def admin(broker: BrokerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def create(client: AdminClient, name: str, **configs: str) -> None:
    client.create_topics([NewTopic(name, 1, 1, config=configs)])[name].result(10)


@pytest.mark.parametrize(("first", "second"), [("a.b", "a_b"), ("a_b", "a.b")])
def test_topic_names_colliding_on_dot_and_underscore_are_refused(
    broker: BrokerProcess, topic_name: str, first: str, second: str
) -> None:
    client = admin(broker)
    existing = f"{topic_name}-{first}"
    create(client, existing)
    with pytest.raises(KafkaException) as info:
        create(client, f"{topic_name}-{second}")
    error = info.value.args[0]
    assert error.code() == KafkaError.TOPIC_EXCEPTION
    assert existing in error.str()
    # The same name again is still "already exists", not a collision.
    with pytest.raises(KafkaException) as again:
        create(client, existing)
    assert again.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS


def test_authorized_operations_are_each_resource_types_own(
    broker: BrokerProcess, topic_name: str
) -> None:
    client = admin(broker)
    create(client, topic_name)
    topics = client.describe_topics(
        TopicCollection([topic_name]), include_authorized_operations=True
    )
    assert set(topics[topic_name].result(10).authorized_operations) == TOPIC_OPERATIONS
    cluster = client.describe_cluster(include_authorized_operations=True).result(10)
    assert set(cluster.authorized_operations) == CLUSTER_OPERATIONS

    group = f"{topic_name}-group"
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "session.timeout.ms": 10000}
    )
    try:
        consumer.subscribe([topic_name])
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert consumer.assignment(), "the consumer never joined its group"
        described = client.describe_consumer_groups([group], include_authorized_operations=True)
        assert set(described[group].result(10).authorized_operations) == GROUP_OPERATIONS
    finally:
        consumer.close()


def test_delete_records_needs_the_delete_policy(broker: BrokerProcess, topic_name: str) -> None:
    client = admin(broker)
    compacted, deletable = f"{topic_name}-compact", f"{topic_name}-both"
    create(client, compacted, **{"cleanup.policy": "compact"})
    create(client, deletable, **{"cleanup.policy": "compact,delete"})
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for topic in (compacted, deletable):
        for i in range(3):
            producer.produce(topic, key=b"k%d" % i, value=b"v")
    assert producer.flush(10) == 0

    refused = TopicPartition(compacted, 0, 2)
    with pytest.raises(KafkaException) as info:
        client.delete_records([refused])[refused].result(10)
    assert info.value.args[0].code() == KafkaError.POLICY_VIOLATION
    earliest = client.list_offsets({refused: OffsetSpec.earliest()})[refused].result(10)
    assert earliest.offset == 0  # nothing moved

    allowed = TopicPartition(deletable, 0, 2)
    assert client.delete_records([allowed])[allowed].result(10).low_watermark == 2


def test_acl_apis_without_an_authorizer_answer_security_disabled(broker: BrokerProcess) -> None:
    """As Kafka: no ``authorizer.class.name``, no ACLs to create or list."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    acl = AclBinding(
        ResourceType.TOPIC,
        "t",
        ResourcePatternType.LITERAL,
        "User:a",
        "*",
        Op.READ,
        AclPermissionType.ALLOW,
    )
    with pytest.raises(KafkaException) as caught:
        admin.create_acls([acl])[acl].result(30)
    assert caught.value.args[0].code() == KafkaError.SECURITY_DISABLED
