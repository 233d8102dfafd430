"""Kafka's own ``kafka-acls`` (AclCommand) adding, listing and removing ACLs on Samsa.

The tool logs in over SASL_PLAINTEXT as the super user (``--command-config``,
as operators run it); what it adds is then in force for a real client, and
what it removes is gone from DescribeAcls.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, KafkaTools
from tests.kafka_tools.tool_classes import ACLS
from tests.security.acl_broker import USERS, AclBroker
from tests.security.acl_broker import acl_broker as acl_broker

from samsa.testing.kafka_reference import KafkaReference

pytestmark = pytest.mark.timeout(TEST_TIMEOUT_S)


def _produce_error(conf: dict, topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    producer = Producer({**conf, "message.timeout.ms": 10000})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    return errors[0]


def test_kafka_acls_adds_lists_and_removes(
    kafka_reference: KafkaReference, acl_broker: AclBroker, tmp_path: Path
) -> None:
    config = tmp_path / "admin.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="admin" password="{USERS["admin"]}";\n'
    )
    tools = KafkaTools(kafka_reference, acl_broker.address)

    def acls(*args: str) -> str:
        return tools.admin(ACLS, "--command-config", str(config), *args)

    admin = AdminClient(acl_broker.conf("admin"))
    admin.create_topics([NewTopic("fin-ledger", 1, 1)])["fin-ledger"].result(30)

    acls("--add", "--allow-principal", "User:alice", "--producer", "--topic", "fin-",
         "--resource-pattern-type", "prefixed")  # fmt: skip
    acls("--add", "--deny-principal", "User:bob", "--operation", "Read", "--topic", "fin-ledger")
    listed = acls("--list")
    assert "resourceType=TOPIC, name=fin-, patternType=PREFIXED" in listed
    assert "principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW" in listed
    assert "principal=User:bob, host=*, operation=READ, permissionType=DENY" in listed
    assert _produce_error(acl_broker.conf("alice"), "fin-ledger") is None

    acls("--remove", "--force", "--topic", "fin-", "--resource-pattern-type", "prefixed")
    remaining = acls("--list")
    assert "name=fin-," not in remaining
    assert "principal=User:bob" in remaining
    error = _produce_error(acl_broker.conf("alice"), "fin-ledger")
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
