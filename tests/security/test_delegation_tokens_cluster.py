"""Delegation tokens on three nodes: made through one broker, used on another.

Every listener is SASL_PLAINTEXT with SCRAM-SHA-512 (the nodes log in to each
other as the super user ``admin``) and an authorizer is on.  The token is
created, renewed and expired through brokers that are not the active
controller, so each request reaches the controller in an Envelope carrying
the client's principal; the records reach every node, so the token logs in on
a third node at once, and after it expires no node lets it in.  A token past
its lifetime is removed by the controller's expiry check on every node.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from tests.security.token_broker import SECRET, USERS, broker_jaas, scram_jaas

from samsa.client import Consumer, Producer
from samsa.client.admin import Admin, DelegationToken, NewTopic
from samsa.errors import ErrorCode, KafkaError
from samsa.net.channel import ChannelSecurity
from samsa.net.channels import ChannelPool
from samsa.protocol.acl import AclBinding, AclOperation, PatternType, Permission, ResourceType
from samsa.testing.cluster import LocalCluster, wait_until

pytestmark = pytest.mark.timeout(240)

MECHANISM = "SCRAM-SHA-512"
CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41


def conf(address: str, jaas: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": address,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": MECHANISM,
        "sasl.jaas.config": jaas,
    }


def call_node(address: str, user: str, api_key: int, version: int, body: dict[str, Any]) -> Any:
    """One request to exactly this node, logged in as ``user``."""

    async def run() -> dict[str, Any]:
        security = ChannelSecurity(None, MECHANISM, user, USERS[user])
        pool = ChannelPool(client_id=f"token-test-{user}", security=security)
        try:
            host, port = address.rsplit(":", 1)
            channel = pool.to_address(host, int(port))
            return await channel.request(api_key, version, body, timeout_ms=20000)
        finally:
            await pool.close()

    return asyncio.run(run())


def tokens_on(address: str) -> dict[str, Any]:
    """Alice's tokens as exactly this node lists them (DescribeDelegationToken v3)."""
    owners = [{"principal_type": "User", "principal_name": "alice"}]
    answer = call_node(address, "alice", DESCRIBE, 3, {"owners": owners})
    assert answer["error_code"] == 0, answer
    return {t["token_id"]: t for t in answer["tokens"]}


def token_logs_in(address: str, token: DelegationToken) -> Any:
    admin = Admin({**conf(address, token.jaas_config()), "request.timeout.ms": 10000})
    try:
        admin.list_topics(timeout=10)
        return True
    except KafkaError as exc:
        return exc.code
    finally:
        admin.close()


def test_a_token_made_through_one_broker_logs_in_on_another(tmp_path: Path) -> None:
    cluster = LocalCluster(
        tmp_path / "cluster",
        settings={
            "listener.security.protocol.map": "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": MECHANISM,
            "sasl.mechanism.inter.broker.protocol": MECHANISM,
            "sasl.mechanism.controller.protocol": MECHANISM,
            "sasl.jaas.config": broker_jaas()[:-1] + ' username="admin" password="admin-pw";',
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin",
            "delegation.token.secret.key": SECRET,
            "delegation.token.expiry.check.interval.ms": "500",
        },
    )
    try:
        cluster.start()
        admin_conf = conf(cluster.bootstrap, scram_jaas("admin", USERS["admin"]))
        with Admin(admin_conf) as admin:
            leader = admin.describe_metadata_quorum(timeout=30).leader_id
            admin.create_topics([NewTopic("tok-rf3", 3, 3)])
            admin.create_acls(
                AclBinding(
                    kind, "tok-", PatternType.PREFIXED, "User:alice", "*", op, Permission.ALLOW
                )
                for kind in (ResourceType.TOPIC, ResourceType.GROUP)
                for op in (AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE)
            )
        creator, user_node = [n for n in sorted(cluster.nodes) if n != leader][:2]
        at_creator = cluster.client_address(creator)
        at_other = cluster.client_address(user_node)

        # Created through a broker that is not the controller: forwarded in an Envelope.
        created = call_node(
            at_creator, "alice", CREATE, 3,
            {
                "owner_principal_type": None,
                "owner_principal_name": None,
                "renewers": [{"principal_type": "User", "principal_name": "bob"}],
                "max_lifetime_ms": -1,
            },
        )  # fmt: skip
        assert created["error_code"] == 0, created
        assert (created["principal_name"], created["token_requester_principal_name"]) == (
            "alice",
            "alice",
        )
        token_id = created["token_id"]
        token = DelegationToken(
            token_id, created["hmac"], "User:alice", "User:alice", ("User:bob",),
            created["issue_timestamp_ms"], created["expiry_timestamp_ms"],
            created["max_timestamp_ms"],
        )  # fmt: skip
        # Every node has it as soon as it has caught up with the controller.
        for node_id in cluster.nodes:
            wait_until(
                lambda n=node_id: token_id in tokens_on(cluster.client_address(n)),  # type: ignore[misc]
                30,
                f"node {node_id} lists the token",
            )
        assert tokens_on(at_other)[token_id]["hmac"] == token.hmac

        # It logs in on another node, and writes and reads as alice.
        token_conf = conf(at_other, token.jaas_config())
        producer = Producer({**token_conf, "acks": "all", "max.block.ms": 30000})
        values = [f"v{i}".encode() for i in range(60)]
        try:
            for future in [producer.send("tok-rf3", value=v) for v in values]:
                future.get(30)
        finally:
            producer.close()
        consumer = Consumer({**token_conf, "group.id": "tok-g", "auto.offset.reset": "earliest"})
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        try:
            consumer.subscribe(["tok-rf3"])
            while len(got) < len(values) and time.monotonic() < deadline:
                got.extend(record.value for record in consumer.poll(0.5))
        finally:
            consumer.close()
        assert sorted(got) == sorted(values)

        # The renewer renews through another non-controller node; every node sees it.
        renewed = call_node(
            at_other, "bob", RENEW, 2, {"hmac": token.hmac, "renew_period_ms": 60000}
        )
        assert renewed["error_code"] == 0, renewed

        def everywhere_renewed() -> bool:
            return all(
                tokens_on(cluster.client_address(n))[token_id]["expiry_timestamp"]
                == renewed["expiry_timestamp_ms"]
                for n in cluster.nodes
            )

        wait_until(everywhere_renewed, 30, "every node shows the renewal")
        refused = call_node(at_other, "carol", RENEW, 2, {"hmac": token.hmac, "renew_period_ms": 1})
        assert refused["error_code"] == ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH

        # Expired through the creator: no node lets it in any more.
        expired = call_node(
            at_creator, "alice", EXPIRE, 2, {"hmac": token.hmac, "expiry_time_period_ms": -1}
        )
        assert expired["error_code"] == 0, expired
        for node_id in cluster.nodes:
            wait_until(
                lambda n=node_id: (
                    token_logs_in(cluster.client_address(n), token)  # type: ignore[misc]
                    == ErrorCode.SASL_AUTHENTICATION_FAILED
                ),
                30,
                f"node {node_id} refuses the expired token",
            )

        # A token past its lifetime is swept by the controller, on every node.
        with Admin(conf(at_creator, scram_jaas("alice", USERS["alice"]))) as alice:
            short = alice.create_delegation_token(max_lifetime_ms=1000)
        wait_until(
            lambda: all(
                short.token_id not in tokens_on(cluster.client_address(n)) for n in cluster.nodes
            ),
            30,
            "the expired token removed from every node",
        )
    finally:
        cluster.close()
