"""Kafka 4.1's ``kafka-configs`` managing SCRAM users on Samsa.

``--alter --add-config 'SCRAM-SHA-512=[password=...]' --entity-type users``
salts the password in the tool and sends AlterUserScramCredentials; the
credential then lives in Samsa's metadata log and is described back with
DescribeUserScramCredentials (which ``--describe`` sends after its client
quota lookup, DescribeClientQuotas).
"""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, ScramMechanism
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, KafkaTools
from tests.kafka_tools.tool_classes import CONFIGS

from samsa.protocol.messages import APIS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

DESCRIBE_CLIENT_QUOTAS = 48


def test_kafka_configs_adds_and_deletes_scram_users(node_tools: KafkaTools) -> None:
    user = ["--entity-type", "users", "--entity-name", "alice"]
    altered = node_tools.admin(
        CONFIGS, *user, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=pw]"
    )
    assert "Completed updating config for user alice." in altered
    altered = node_tools.admin(
        CONFIGS, *user, "--alter", "--add-config", "SCRAM-SHA-256=[password=pw]"
    )
    assert "Completed updating config for user alice." in altered

    admin = AdminClient({"bootstrap.servers": node_tools.bootstrap})
    infos = admin.describe_user_scram_credentials(["alice"])["alice"].result(30)  # type: ignore[index]
    assert sorted((i.mechanism, i.iterations) for i in infos.scram_credential_infos) == [
        (ScramMechanism.SCRAM_SHA_256, 4096),
        (ScramMechanism.SCRAM_SHA_512, 8192),
    ]
    if DESCRIBE_CLIENT_QUOTAS in APIS:
        described = node_tools.admin(CONFIGS, *user, "--describe")
        assert "SCRAM credential configs for user-principal 'alice'" in described
        assert "SCRAM-SHA-256=iterations=4096" in described
        assert "SCRAM-SHA-512=iterations=8192" in described

    deleted = node_tools.admin(CONFIGS, *user, "--alter", "--delete-config", "SCRAM-SHA-512")
    assert "Completed updating config for user alice." in deleted
    infos = admin.describe_user_scram_credentials(["alice"])["alice"].result(30)  # type: ignore[index]
    assert [i.mechanism for i in infos.scram_credential_infos] == [ScramMechanism.SCRAM_SHA_256]
