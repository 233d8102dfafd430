"""Three nodes whose client, inter-broker and controller traffic all run over SASL_SSL.

Every listener (the one named PLAINTEXT included, as Kafka allows) maps to
SASL_SSL; the nodes log in to each other with SCRAM-SHA-512 as ``admin``.
A replicated topic written with acks=all and read back proves that the
quorum, the broker registrations and the replica fetchers all got in.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from tests.security.certs import CertificateAuthority

from samsa.testing.cluster import LocalCluster, wait_until

pytestmark = pytest.mark.timeout(240)

JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)


def test_three_nodes_over_sasl_ssl(tmp_path: Path) -> None:
    ca = CertificateAuthority()
    certs = tmp_path / "certs"
    certs.mkdir()
    ca_file, _, _ = ca.pem.write(certs, "ca")
    _, _, keystore = ca.issue("node", hosts=("localhost", "127.0.0.1")).write(certs, "node")
    cluster = LocalCluster(
        tmp_path / "cluster",
        settings={
            "listener.security.protocol.map": "PLAINTEXT:SASL_SSL,CONTROLLER:SASL_SSL",
            "ssl.keystore.location": str(keystore),
            "ssl.truststore.location": str(ca_file),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "sasl.jaas.config": JAAS,
        },
    )
    try:
        cluster.start()
        for node in cluster.nodes.values():
            assert not any("authentication failed" in line for line in node.log_lines)
        conf = {
            "bootstrap.servers": cluster.bootstrap,
            "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(ca_file),
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "alice",
            "sasl.password": "alice-secret",
        }
        admin = AdminClient(conf)
        admin.create_topics([NewTopic("replicated", 3, 3)])["replicated"].result(30)
        producer = Producer({**conf, "acks": "all"})
        values = [f"v{i}".encode() for i in range(300)]
        failures: list[object] = []
        for value in values:
            producer.produce(
                "replicated", value, on_delivery=lambda e, m: failures.append(e) if e else None
            )
        assert producer.flush(60) == 0
        assert failures == []

        # Every partition's followers caught up over SASL_SSL: full ISR.
        def full_isr() -> bool:
            topic = admin.list_topics("replicated", timeout=10).topics["replicated"]
            return all(len(p.isrs) == 3 for p in topic.partitions.values())

        wait_until(full_isr, 60, "every replica in sync over SASL_SSL")
        consumer = Consumer({**conf, "group.id": "g", "auto.offset.reset": "earliest"})
        consumer.subscribe(["replicated"])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < len(values) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
        consumer.close()
        assert sorted(got) == sorted(values)

        # A SCRAM user added through node 1 (forwarded to the active controller)
        # logs in at node 3: the record was replayed on every node.
        via_node_1 = AdminClient({**conf, "bootstrap.servers": cluster.bootstrap_of([1])})
        upsert = UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"carol-secret"
        )
        via_node_1.alter_user_scram_credentials([upsert])["carol"].result(30)
        carol = {
            **conf,
            "bootstrap.servers": cluster.bootstrap_of([3]),
            "sasl.username": "carol",
            "sasl.password": "carol-secret",
        }

        def carol_gets_in() -> bool:
            seen = AdminClient(carol).list_topics(timeout=5)
            return "replicated" in seen.topics

        wait_until(carol_gets_in, 60, "carol logs in at node 3")
    finally:
        cluster.close()
