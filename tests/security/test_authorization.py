"""The authorization matrix with real clients over SASL_PLAINTEXT (PLAIN users).

One broker with Kafka's StandardAuthorizer and ``User:admin`` as super user.
For each API a principal without the ACL Kafka asks for gets Kafka's exact
error, and with it succeeds; prefixed ACLs, deny beating allow, Metadata
hiding what a principal may not describe, and ACLs surviving a restart.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from tests.security.acl_broker import DESCRIBE_ALL_ACLS, USERS, AclBroker
from tests.security.acl_broker import acl_broker as acl_broker

from samsa.errors import ErrorCode

pytestmark = pytest.mark.timeout(180)

LITERAL, PREFIXED = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY


@pytest.fixture(scope="module")
def admin(acl_broker: AclBroker) -> AdminClient:
    return AdminClient(acl_broker.conf("admin"))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def binding(
    principal: str,
    operation: AclOperation,
    name: str,
    resource: ResourceType = ResourceType.TOPIC,
    pattern: ResourcePatternType = LITERAL,
    permission: AclPermissionType = ALLOW,
) -> AclBinding:
    return AclBinding(resource, name, pattern, f"User:{principal}", "*", operation, permission)


def grant(admin: AdminClient, *bindings: AclBinding) -> None:
    for future in admin.create_acls(list(bindings)).values():
        future.result(30)


def create_topic(admin: AdminClient, name: str) -> None:
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(30)


def produce_error(conf: dict, topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    producer = Producer({**conf, "message.timeout.ms": 10000, "enable.idempotence": False})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    assert len(errors) == 1
    return errors[0]


def error_code(exc: BaseException) -> int:
    assert isinstance(exc, KafkaException), exc
    return int(exc.args[0].code())


def test_produce_needs_write(acl_broker: AclBroker, admin: AdminClient) -> None:
    topic = unique("orders")
    create_topic(admin, topic)
    error = produce_error(acl_broker.conf("alice"), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(admin, binding("alice", AclOperation.WRITE, topic))
    assert produce_error(acl_broker.conf("alice"), topic) is None


def test_prefixed_acl_and_deny_beats_allow(acl_broker: AclBroker, admin: AdminClient) -> None:
    prefix = unique("fin") + "-"
    ledger, secret, other = prefix + "ledger", prefix + "secret", unique("finance")
    for topic in (ledger, secret, other):
        create_topic(admin, topic)
    grant(
        admin,
        binding("alice", AclOperation.WRITE, prefix, pattern=PREFIXED),
        binding("alice", AclOperation.WRITE, secret, permission=DENY),
    )
    conf = acl_broker.conf("alice")
    assert produce_error(conf, ledger) is None
    for denied in (secret, other):
        error = produce_error(conf, denied)
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def _consume_one(conf: dict, topic: str, group: str) -> tuple[bytes | None, KafkaError | None]:
    consumer = Consumer(
        {**conf, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                return None, msg.error()
            return msg.value(), None
        raise AssertionError("neither a record nor an error within 30 s")
    finally:
        consumer.close()


def test_consume_needs_topic_read_and_group_read(acl_broker: AclBroker, admin: AdminClient) -> None:
    topic, group = unique("events"), unique("readers")
    create_topic(admin, topic)
    assert produce_error(acl_broker.conf("admin"), topic) is None
    conf = acl_broker.conf("bob")
    grant(admin, binding("bob", AclOperation.READ, topic))
    _, error = _consume_one(conf, topic, group)
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    grant(admin, binding("bob", AclOperation.READ, group, ResourceType.GROUP))
    value, error = _consume_one(conf, topic, group)
    assert (value, error) == (b"v", None)


def test_metadata_hides_undescribable_topics(acl_broker: AclBroker, admin: AdminClient) -> None:
    seen, hidden = unique("seen"), unique("hidden")
    create_topic(admin, seen)
    create_topic(admin, hidden)
    grant(admin, binding("bob", AclOperation.READ, seen))  # READ implies DESCRIBE
    bob = AdminClient(acl_broker.conf("bob"))
    topics = bob.list_topics(timeout=10).topics
    assert seen in topics and hidden not in topics
    named = bob.list_topics(topic=hidden, timeout=10).topics[hidden]
    assert named.error is not None
    assert named.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert hidden in admin.list_topics(timeout=10).topics

    # Metadata v12 by topic id is judged by the topic's name too.
    def by_id(user: str, name: str) -> dict:
        request = {
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False,
        }
        topic_id = acl_broker.call(
            "admin", 3, 12, {**request, "topics": [{"topic_id": b"\0" * 16, "name": name}]}
        )["topics"][0]["topic_id"]
        answer = acl_broker.call(
            user, 3, 12, {**request, "topics": [{"topic_id": topic_id, "name": None}]}
        )
        return answer["topics"][0]

    assert by_id("bob", hidden)["error_code"] == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert by_id("bob", hidden)["partitions"] == []
    described = by_id("bob", seen)
    assert described["error_code"] == 0 and described["name"] == seen


def test_create_and_delete_topics(acl_broker: AclBroker, admin: AdminClient) -> None:
    alice = AdminClient(acl_broker.conf("alice"))
    name = unique("made-by-alice")
    with pytest.raises(KafkaException) as caught:
        alice.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    assert error_code(caught.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(admin, binding("alice", AclOperation.CREATE, "made-by-", pattern=PREFIXED))
    alice.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    with pytest.raises(KafkaException) as caught:
        alice.delete_topics([name])[name].result(30)
    assert error_code(caught.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(admin, binding("alice", AclOperation.DELETE, name))
    alice.delete_topics([name])[name].result(30)


def test_configs_need_describe_configs(acl_broker: AclBroker, admin: AdminClient) -> None:
    topic = unique("configured")
    create_topic(admin, topic)
    bob = AdminClient(acl_broker.conf("bob"))
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    with pytest.raises(KafkaException) as caught:
        bob.describe_configs([resource])[resource].result(30)
    assert error_code(caught.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    broker_resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    with pytest.raises(KafkaException) as caught:
        bob.describe_configs([broker_resource])[broker_resource].result(30)
    assert error_code(caught.value) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    grant(admin, binding("bob", AclOperation.ALTER_CONFIGS, topic))  # implies DESCRIBE_CONFIGS
    configs = bob.describe_configs([resource])[resource].result(30)
    assert "cleanup.policy" in configs


def test_transactional_id_needs_write(acl_broker: AclBroker, admin: AdminClient) -> None:
    txn = unique("txn")
    conf = {**acl_broker.conf("alice"), "transactional.id": txn}
    producer = Producer(conf)
    with pytest.raises(KafkaException) as caught:
        producer.init_transactions(20)
    assert error_code(caught.value) == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(admin, binding("alice", AclOperation.WRITE, txn, ResourceType.TRANSACTIONAL_ID))
    Producer(conf).init_transactions(20)


def test_acl_apis_need_the_cluster(acl_broker: AclBroker, admin: AdminClient) -> None:
    alice = AdminClient(acl_broker.conf("alice"))
    acl = binding("alice", AclOperation.ALL, "*")
    with pytest.raises(KafkaException) as caught:
        alice.create_acls([acl])[acl].result(30)
    assert error_code(caught.value) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    describe = DESCRIBE_ALL_ACLS
    # librdkafka reports DescribeAcls' top-level error as an empty list: ask raw.
    answer = acl_broker.call("alice", 29, 3, describe)
    assert answer["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert answer["resources"] == []
    assert acl_broker.call("admin", 29, 3, describe)["error_code"] == 0


def test_group_apis_refuse_without_the_group(acl_broker: AclBroker, admin: AdminClient) -> None:
    group = unique("private")
    find = acl_broker.call("alice", 10, 4, {"key_type": 0, "coordinator_keys": [group]})
    assert find["coordinators"][0]["error_code"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    fetch = acl_broker.call(
        "alice", 9, 8, {"groups": [{"group_id": group, "topics": None}], "require_stable": False}
    )
    assert fetch["groups"][0]["error_code"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    deleted = acl_broker.call("alice", 42, 2, {"groups_names": [group]})
    assert deleted["results"][0]["error_code"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    grant(admin, binding("alice", AclOperation.DESCRIBE, group, ResourceType.GROUP))
    find = acl_broker.call("alice", 10, 4, {"key_type": 0, "coordinator_keys": [group]})
    assert find["coordinators"][0]["error_code"] == 0
    described = acl_broker.call(
        "alice", 15, 5, {"groups": [group], "include_authorized_operations": True}
    )
    # DESCRIBE only: bit 8 of Kafka's AclOperation codes.
    assert described["groups"][0]["authorized_operations"] == 1 << 8


def test_inter_node_apis_need_cluster_action(acl_broker: AclBroker) -> None:
    heartbeat = {
        "broker_id": 1,
        "broker_epoch": 0,
        "current_metadata_offset": 0,
        "want_fence": False,
        "want_shut_down": False,
    }
    answer = acl_broker.call("alice", 63, 0, heartbeat)
    assert answer["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_describe_and_delete_acls(acl_broker: AclBroker, admin: AdminClient) -> None:
    topic = unique("doomed")
    create_topic(admin, topic)
    grant(admin, binding("bob", AclOperation.WRITE, topic))
    mine = AclBindingFilter(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    assert [b.name for b in admin.describe_acls(mine).result(30)] == [topic]
    assert produce_error(acl_broker.conf("bob"), topic) is None
    deleted = admin.delete_acls([mine])[mine].result(30)
    assert [(b.name, b.principal) for b in deleted] == [(topic, "User:bob")]
    assert admin.describe_acls(mine).result(30) == []
    error = produce_error(acl_broker.conf("bob"), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_acls_survive_a_restart(acl_broker: AclBroker, admin: AdminClient) -> None:
    """Last in the module: it restarts the shared broker."""
    topic = unique("durable")
    create_topic(admin, topic)
    grant(admin, binding("bob", AclOperation.WRITE, topic))
    acl_broker.broker.restart()
    assert produce_error(acl_broker.conf("bob"), topic) is None
    error = produce_error(acl_broker.conf("alice"), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_incremental_fetch_session_loses_a_revoked_topic(
    acl_broker: AclBroker, admin: AdminClient
) -> None:
    """A KIP-227 session keeps serving partitions from earlier requests; once
    READ is revoked, new data there is refused, not sent."""
    topic = unique("session")
    create_topic(admin, topic)
    assert produce_error(acl_broker.conf("admin"), topic) is None
    read = binding("bob", AclOperation.READ, topic)
    grant(admin, read)
    partition = {
        "partition": 0,
        "current_leader_epoch": -1,
        "fetch_offset": 0,
        "last_fetched_epoch": -1,
        "log_start_offset": -1,
        "partition_max_bytes": 1 << 20,
    }
    fetch = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": 0,
        "topics": [{"topic": topic, "partitions": [partition]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    first = acl_broker.call("bob", 1, 12, fetch)
    assert first["error_code"] == 0 and first["session_id"] != 0
    assert first["responses"][0]["partitions"][0]["error_code"] == 0

    as_filter = AclBindingFilter(
        ResourceType.TOPIC,
        topic,
        LITERAL,
        "User:bob",
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    admin.delete_acls([as_filter])[as_filter].result(30)
    assert produce_error(acl_broker.conf("admin"), topic) is None
    incremental = {**fetch, "session_id": first["session_id"], "session_epoch": 1, "topics": []}
    second = acl_broker.call("bob", 1, 12, incremental)
    served = [p for t in second["responses"] for p in t["partitions"]]
    assert served, "the new record makes the session answer for the partition"
    assert all(p["error_code"] == ErrorCode.TOPIC_AUTHORIZATION_FAILED for p in served)
    assert all(not p["records"] for p in served)


def _samsa_acls(acl_broker: AclBroker, config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "samsa.cli", "acls", *args, "--command-config", str(config),
         "--bootstrap-server", acl_broker.address],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _login(tmp_path: Path, user: str) -> Path:
    path = tmp_path / f"{user}.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{user}" password="{USERS[user]}";\n'
    )
    return path


def test_samsa_acls_command(acl_broker: AclBroker, admin: AdminClient, tmp_path: Path) -> None:
    topic = unique("cli")
    create_topic(admin, topic)
    as_admin = _login(tmp_path, "admin")
    created = _samsa_acls(
        acl_broker, as_admin, "create", "--principal", "User:bob", "--operation", "Write",
        "--operation", "Describe", "--topic", topic,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "Created 2 ACL(s)" in created.stdout
    assert produce_error(acl_broker.conf("bob"), topic) is None

    listed = _samsa_acls(acl_broker, as_admin, "list", "--topic", topic, "--output", "json")
    assert listed.returncode == 0, listed.stderr
    assert sorted((e["principal"], e["operation"]) for e in json.loads(listed.stdout)) == [
        ("User:bob", "DESCRIBE"),
        ("User:bob", "WRITE"),
    ]
    refused = _samsa_acls(acl_broker, _login(tmp_path, "alice"), "list")
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("samsa acls: CLUSTER_AUTHORIZATION_FAILED")
    assert len(refused.stderr.strip().splitlines()) == 1

    deleted = _samsa_acls(acl_broker, as_admin, "delete", "--topic", topic)
    assert deleted.returncode == 0, deleted.stderr
    assert "Deleted 2 ACL(s)." in deleted.stdout
    error = produce_error(acl_broker.conf("bob"), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def streams_join(group: str, source: str, member: str = "m1") -> dict[str, Any]:
    """A first StreamsGroupHeartbeat: one subtopology reading ``source`` into a store."""
    internal = {"partitions": 0, "replication_factor": -1, "topic_configs": []}
    return {
        "group_id": group,
        "member_id": member,
        "member_epoch": 0,
        "endpoint_information_epoch": -1,
        "rebalance_timeout_ms": 30000,
        "topology": {
            "epoch": 0,
            "subtopologies": [
                {
                    "subtopology_id": "0",
                    "source_topics": [source],
                    "source_topic_regex": [],
                    "state_changelog_topics": [{"name": f"{group}-store-changelog", **internal}],
                    "repartition_sink_topics": [],
                    "repartition_source_topics": [],
                    "copartition_groups": [],
                }
            ],
        },
        "process_id": "p1",
        "client_tags": [],
        "active_tasks": [],
        "standby_tasks": [],
        "warmup_tasks": [],
    }


def test_streams_groups_need_the_group_the_topics_and_create(
    acl_broker: AclBroker, admin: AdminClient
) -> None:
    """Kafka's rules for StreamsGroupHeartbeat: READ on the group, DESCRIBE on every topic
    of the topology, and CREATE (on the cluster or the topics) for the coordinator to
    create the missing internal ones; StreamsGroupDescribe needs DESCRIBE on the group."""
    group, source = unique("streams-app"), unique("streams-in")
    create_topic(admin, source)
    join = streams_join(group, source)
    assert (
        acl_broker.call("alice", 88, 1, join)["error_code"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    )
    described = acl_broker.call("alice", 89, 1, {"group_ids": [group]})
    assert described["groups"][0]["error_code"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    grant(admin, binding("alice", AclOperation.READ, group, ResourceType.GROUP))
    assert (
        acl_broker.call("alice", 88, 1, join)["error_code"] == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    )
    grant(
        admin,
        binding("alice", AclOperation.DESCRIBE, source),
        binding("alice", AclOperation.DESCRIBE, group, pattern=PREFIXED),
    )
    refused = acl_broker.call("alice", 88, 1, join)
    assert refused["error_code"] == 0, refused
    (status,) = refused["status"]
    assert status["status_code"] == 3
    assert status["status_detail"].endswith(
        f"; Unauthorized to CREATE on topics {group}-store-changelog."
    ), status
    grant(admin, binding("alice", AclOperation.CREATE, group, pattern=PREFIXED))
    acl_broker.call("alice", 88, 1, join)  # asks the controller for the changelog topic
    deadline = time.monotonic() + 30
    while f"{group}-store-changelog" not in admin.list_topics(timeout=10).topics:
        assert time.monotonic() < deadline, "the changelog topic was never created"
        time.sleep(0.2)
    internal = {**join, "member_id": "m2"}
    internal["topology"] = {**join["topology"]}
    internal["topology"]["subtopologies"] = [
        {**join["topology"]["subtopologies"][0], "source_topics": ["__consumer_offsets"]}
    ]
    prohibited = acl_broker.call("alice", 88, 1, internal)
    assert prohibited["error_code"] == ErrorCode.STREAMS_INVALID_TOPOLOGY
    assert prohibited["error_message"] == (
        "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited."
    )
    ready = acl_broker.call("alice", 88, 1, join)
    assert ready["status"] is None and ready["active_tasks"], ready
    grant(admin, binding("alice", AclOperation.DESCRIBE, group, ResourceType.GROUP))
    described = acl_broker.call("alice", 89, 1, {"group_ids": [group]})
    assert (described["groups"][0]["error_code"], described["groups"][0]["group_state"]) == (
        0,
        "Stable",
    ), described
    grant(admin, binding("bob", AclOperation.DESCRIBE, group, ResourceType.GROUP))
    hidden = acl_broker.call("bob", 89, 1, {"group_ids": [group]})["groups"][0]
    assert (hidden["error_code"], hidden["error_message"]) == (
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        "The described group uses topics that the client is not authorized to describe.",
    )
