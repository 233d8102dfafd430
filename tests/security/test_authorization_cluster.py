"""ACLs on three nodes: created through one broker, in force on every one.

The nodes log in to each other over SASL_PLAINTEXT as ``admin``, the super
user, so replication and the quorum keep working with authorization on (as in
Kafka, the principal nodes use must be a super user).  An ACL created through
node 1 (forwarded to whichever node is the active controller) reaches every
node through the metadata log, which DescribeAcls on each node shows; bob's
acks=all writes to a three-replica topic then succeed (the followers fetch as
``admin``), and alice's are refused with TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.security.acl_broker import AUTHORIZER, DESCRIBE_ALL_ACLS, USERS, call, plain_jaas

from samsa.testing.cluster import LocalCluster, wait_until

pytestmark = pytest.mark.timeout(240)


def _conf(address: str, user: str) -> dict[str, object]:
    return {
        "bootstrap.servers": address,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": USERS[user],
    }


def _produce(address: str, user: str, topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    producer = Producer({**_conf(address, user), "acks": "all", "message.timeout.ms": 15000})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    assert len(errors) == 1
    return errors[0]


def test_acls_created_on_one_broker_apply_on_all(tmp_path: Path) -> None:
    cluster = LocalCluster(
        tmp_path / "cluster",
        settings={
            "listener.security.protocol.map": "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "sasl.jaas.config": plain_jaas("admin"),
            "authorizer.class.name": AUTHORIZER,
            "super.users": "User:admin",
        },
    )
    try:
        cluster.start()
        first = cluster.client_address(1)
        admin = AdminClient(_conf(first, "admin"))
        admin.create_topics([NewTopic("shared", 1, 3)])["shared"].result(30)
        created = call(
            int(first.rsplit(":", 1)[1]),
            "admin",
            30,
            3,
            {
                "creations": [
                    {
                        "resource_type": 2,
                        "resource_name": "shared",
                        "resource_pattern_type": 3,
                        "principal": "User:bob",
                        "host": "*",
                        "operation": 4,
                        "permission_type": 3,
                    }
                ]
            },
        )
        assert created["results"][0]["error_code"] == 0

        def everywhere() -> bool:
            for node_id in cluster.nodes:
                port = int(cluster.client_address(node_id).rsplit(":", 1)[1])
                answer = call(port, "admin", 29, 3, DESCRIBE_ALL_ACLS)
                if [r["resource_name"] for r in answer["resources"]] != ["shared"]:
                    return False
            return True

        wait_until(everywhere, 30, "every node describes the new ACL")
        for node_id in cluster.nodes:
            address = cluster.client_address(node_id)
            assert _produce(address, "bob", "shared") is None
            refused = _produce(address, "alice", "shared")
            assert refused is not None
            assert refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        cluster.close()
