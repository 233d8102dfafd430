"""Kafka 4.4's ``kafka-delegation-tokens`` and Java clients logging in by token, on Samsa.

The tool (DelegationTokenCommand) creates, describes, renews and expires a
token over SASL/SCRAM, as an operator runs it with ``--command-config``; Kafka's
console producer and consumer (Java clients) then log in with the token's id
and HMAC and ``tokenauth="true"`` in their JAAS line, and write and read as the
token's owner; once expired, the token no longer logs a Java client in.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, TOOL_TIMEOUT_S, KafkaTools
from tests.kafka_tools.tool_classes import (
    CONSOLE_CONSUMER,
    CONSOLE_PRODUCER,
    DELEGATION_TOKENS,
    TOPICS,
    client_config_flag,
)
from tests.security.token_broker import (
    USERS,
    TokenBroker,
    running_token_broker,
    scram_jaas,
)

from samsa.client.admin import NewTopic
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

# A created or described token's row: id, HMAC (base64), owner, requester, renewers.
_ROW = re.compile(r"^(\S{22})\s+(\S+)\s+(User:\w+)\s+(User:\w+)\s+\[([^\]]*)\]", re.MULTILINE)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenBroker]:
    with running_token_broker(tmp_path_factory.mktemp("tokens") / "data") as running:
        with running.admin("admin") as admin:
            admin.create_topics([NewTopic("tok-java", 1, 1)])
        for resource in (ResourceType.TOPIC, ResourceType.GROUP):
            running.allow(
                "User:alice",
                resource,
                "tok-",
                AclOperation.READ,
                AclOperation.WRITE,
                AclOperation.DESCRIBE,
            )
        yield running


def properties(path: Path, jaas: str) -> str:
    path.write_text(
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config={jaas}\n"
    )
    return str(path)


def test_kafka_tools_and_java_clients_use_a_token(
    kafka_reference: KafkaReference, broker: TokenBroker, tmp_path: Path
) -> None:
    tools = KafkaTools(kafka_reference, broker.sasl_address)
    alice = properties(tmp_path / "alice.properties", scram_jaas("alice", USERS["alice"]))
    bob = properties(tmp_path / "bob.properties", scram_jaas("bob", USERS["bob"]))

    def tokens(config: str, *args: str) -> str:
        return tools.admin(DELEGATION_TOKENS, "--command-config", config, *args)

    created = tokens(
        alice, "--create", "--renewer-principal", "User:bob", "--max-life-time-period", "3600000"
    )
    assert "Created delegation token with tokenId" in created, created
    (token_id, hmac, owner, requester, renewers) = _ROW.findall(created)[0]
    assert (owner, requester, renewers) == ("User:alice", "User:alice", "User:bob")
    # Without --owner-principal the tool asks for an empty owner list, which
    # Kafka 4.4 answers with no tokens (``ownersListEmpty``): so does Samsa.
    assert "Total number of tokens : 0" in tokens(alice, "--describe")
    described = tokens(alice, "--describe", "--owner-principal", "User:alice")
    assert (token_id, hmac) in [row[:2] for row in _ROW.findall(described)]

    # Kafka's Java clients log in by the token, as alice.
    token = properties(tmp_path / "token.properties", scram_jaas(token_id, hmac, token=True))
    version = kafka_reference.kafka_version
    tools.admin(
        CONSOLE_PRODUCER, "--topic", "tok-java",
        client_config_flag(CONSOLE_PRODUCER, version), token,
        stdin="one\ntwo\nthree\n",
    )  # fmt: skip
    consumed = tools.admin(
        CONSOLE_CONSUMER, "--topic", "tok-java", "--group", "tok-java-group",
        client_config_flag(CONSOLE_CONSUMER, version), token,
        "--from-beginning", "--max-messages", "3",
    )  # fmt: skip
    assert consumed.split() == ["one", "two", "three"]

    # Renewed by its renewer: the new expiry shows in the describe output.
    before = int(time.time() * 1000)
    renewed = tokens(bob, "--renew", "--hmac", hmac, "--renew-time-period", "600000")
    assert "Completed renew operation" in renewed, renewed
    with broker.admin("alice") as admin:
        (listed,) = [t for t in admin.describe_delegation_tokens() if t.token_id == token_id]
    assert before + 600_000 <= listed.expiry_timestamp_ms <= int(time.time() * 1000) + 600_000

    expired = tokens(alice, "--expire", "--hmac", hmac, "--expiry-time-period", "-1")
    assert "Completed expire operation" in expired, expired
    assert token_id not in tokens(alice, "--describe", "--owner-principal", "User:alice")
    refused = subprocess.run(
        kafka_reference.java_command(
            TOPICS, "--bootstrap-server", broker.sasl_address, "--command-config", token,
            "--list", quick_start=True,
        ),
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT_S,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "SaslAuthenticationException" in refused.stdout + refused.stderr


def test_the_tool_is_refused_where_kafka_refuses_it(
    kafka_reference: KafkaReference, broker: TokenBroker, tmp_path: Path
) -> None:
    """Over PLAINTEXT, and by a token-authenticated client: Kafka's own
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as the tool reports it."""
    plain = tmp_path / "plain.properties"
    plain.write_text("security.protocol=PLAINTEXT\n")
    with broker.admin("alice") as admin:
        token = admin.create_delegation_token()
    by_token = properties(
        tmp_path / "token.properties", scram_jaas(token.token_id, token.password, token=True)
    )
    for address, config in ((broker.plain_address, str(plain)), (broker.sasl_address, by_token)):
        done = subprocess.run(
            kafka_reference.java_command(
                DELEGATION_TOKENS, "--bootstrap-server", address, "--command-config", config,
                "--create", "--max-life-time-period", "-1", quick_start=True,
            ),
            capture_output=True,
            text=True,
            timeout=TOOL_TIMEOUT_S,
        )  # fmt: skip
        output = done.stdout + done.stderr
        assert done.returncode != 0
        assert "UnsupportedByAuthenticationException" in output, output[-3000:]
