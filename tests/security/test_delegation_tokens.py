"""Delegation tokens (KIP-48) on a real broker: Kafka 4.4's rules and SCRAM login by token.

One broker with an authorizer (``admin`` the super user) and a secret key.
A token is created over SASL by a user, logs in by SCRAM (either mechanism)
as that user with the token's id and HMAC and ``tokenauth=true``, produces
and consumes under that user's ACLs, is renewed and expired; the requests
Kafka refuses are refused with Kafka's codes (checked against Kafka 4.4
itself while building this: the same calls gave the same answers).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.security.secured_broker import librdkafka_delivers, request, response
from tests.security.token_broker import (
    SECRET,
    USERS,
    TokenBroker,
    running_token_broker,
    scram_jaas,
)

from samsa.client import Consumer, Producer
from samsa.client.admin import Admin, DelegationToken, NewTopic
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.protocol.sasl.delegation_token import token_hmac
from samsa.protocol.sasl.scram import ScramClient
from samsa.testing.cluster import wait_until

pytestmark = pytest.mark.timeout(180)

TOPIC, GROUP = ResourceType.TOPIC, ResourceType.GROUP
READ, WRITE, DESCRIBE = AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenBroker]:
    with running_token_broker(tmp_path_factory.mktemp("tokens") / "data") as broker:
        with broker.admin("admin") as admin:
            admin.create_topics([NewTopic("tok-orders", 1, 1), NewTopic("secret-ledger", 1, 1)])
        broker.allow("User:alice", TOPIC, "tok-", READ, WRITE, DESCRIBE)
        broker.allow("User:alice", GROUP, "tok-", READ)
        yield broker


def _error(call: Any) -> ErrorCode:
    with pytest.raises(KafkaError) as refused:
        call()
    return refused.value.code


def _round_trip(conf: dict[str, Any], topic: str, values: list[bytes], group: str) -> list[bytes]:
    producer = Producer({**conf, "max.block.ms": 20000})
    try:
        for future in [producer.send(topic, value=v) for v in values]:
            future.get(30)
    finally:
        producer.close()
    consumer = Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest"})
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        consumer.subscribe([topic])
        while len(got) < len(values) and time.monotonic() < deadline:
            got.extend(record.value for record in consumer.poll(0.5))
    finally:
        consumer.close()
    return got


def _logs_in(tokens: TokenBroker, token: DelegationToken, mechanism: str = "SCRAM-SHA-256") -> Any:
    """True when the token logs in; else the login's error code."""
    admin = Admin({**tokens.token_conf(token, mechanism), "request.timeout.ms": 10000})
    try:
        admin.list_topics(timeout=10)
        return True
    except KafkaError as exc:
        return exc.code
    finally:
        admin.close()


def test_a_token_logs_in_as_its_owner_with_either_mechanism(tokens: TokenBroker) -> None:
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token()
    assert (token.owner, token.requester) == ("User:alice", "User:alice")
    assert token.hmac == token_hmac(SECRET, token.token_id)  # Kafka's HmacSHA512 of the id
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        conf = tokens.token_conf(token, mechanism)
        values = [f"{mechanism}-{i}".encode() for i in range(50)]
        got = _round_trip(conf, "tok-orders", values, f"tok-{mechanism}")
        assert values == [v for v in got if v.startswith(mechanism.encode())]
        # The login is alice's: her ACLs, nothing more.
        producer = Producer({**conf, "max.block.ms": 20000})
        try:
            assert (
                _error(lambda p=producer: p.send("secret-ledger", value=b"x").get(20))  # type: ignore[misc]
                == ErrorCode.TOPIC_AUTHORIZATION_FAILED
            )
        finally:
            producer.close()
    assert token.password not in tokens.broker.log_text()  # the HMAC never shows in the log


def test_requests_kafka_refuses_are_refused(tokens: TokenBroker) -> None:
    with Admin({"bootstrap.servers": tokens.plain_address}) as anonymous:
        for call in (
            anonymous.create_delegation_token,
            anonymous.describe_delegation_tokens,
            lambda: anonymous.renew_delegation_token(b"x"),
            lambda: anonymous.expire_delegation_token(b"x"),
        ):
            assert _error(call) == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token()
        assert _error(lambda: alice.create_delegation_token(renewers=["Group:ops"])) == (
            ErrorCode.INVALID_PRINCIPAL_TYPE
        )
        assert _error(lambda: alice.renew_delegation_token(b"no such token")) == (
            ErrorCode.DELEGATION_TOKEN_NOT_FOUND
        )
    # A token cannot beget tokens, nor renew, expire or describe any.
    with Admin(tokens.token_conf(token)) as by_token:
        for call in (
            by_token.create_delegation_token,
            by_token.describe_delegation_tokens,
            lambda: by_token.renew_delegation_token(token.hmac),
            lambda: by_token.expire_delegation_token(token.hmac),
        ):
            assert _error(call) == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    wrong = dataclasses.replace(token, hmac=b"\x00" * 64)
    assert _logs_in(tokens, wrong) == ErrorCode.SASL_AUTHENTICATION_FAILED


def test_renewers_renew_and_expiry_ends_the_token(tokens: TokenBroker) -> None:
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token(renewers=["User:bob"], max_lifetime_ms=3_600_000)
    assert token.expiry_timestamp_ms == token.max_timestamp_ms  # the maximum is the shorter
    with tokens.admin("bob") as bob:
        renewed = bob.renew_delegation_token(token.hmac, 60_000)
        assert 0 < renewed - int(time.time() * 1000) <= 60_000  # a renewal can also shorten
        seen = {t.token_id: t for t in bob.describe_delegation_tokens(["User:alice"])}
        assert seen[token.token_id].expiry_timestamp_ms == renewed
        assert bob.renew_delegation_token(token.hmac, 120_000) > renewed
    with tokens.admin("carol") as carol:
        assert _error(lambda: carol.renew_delegation_token(token.hmac)) == (
            ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
        )
        assert _error(lambda: carol.expire_delegation_token(token.hmac)) == (
            ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
        )
    assert _logs_in(tokens, token) is True
    with tokens.admin("alice") as alice:
        alice.expire_delegation_token(token.hmac)  # now
        assert token.token_id not in {t.token_id for t in alice.describe_delegation_tokens()}
        assert _error(lambda: alice.renew_delegation_token(token.hmac)) == (
            ErrorCode.DELEGATION_TOKEN_NOT_FOUND
        )
    assert _logs_in(tokens, token) == ErrorCode.SASL_AUTHENTICATION_FAILED


def test_a_token_past_its_expiry_is_refused_before_the_sweep(tokens: TokenBroker) -> None:
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token(max_lifetime_ms=1500)
    # It works until its expiry, then logins are refused though it is still
    # listed (the controller removes it at its next expiry check, an hour off).
    assert _logs_in(tokens, token) is True
    wait_until(
        lambda: _logs_in(tokens, token) == ErrorCode.SASL_AUTHENTICATION_FAILED,
        30,
        "the expired token refused",
    )
    assert time.time() * 1000 > token.expiry_timestamp_ms
    assert tokens.broker.wait_for_log(f"delegation token '{token.token_id}' has expired", 10)
    with tokens.admin("alice") as alice:
        assert token.token_id in {t.token_id for t in alice.describe_delegation_tokens()}
        assert _error(lambda: alice.renew_delegation_token(token.hmac)) == (
            ErrorCode.DELEGATION_TOKEN_EXPIRED
        )
        assert _error(lambda: alice.expire_delegation_token(token.hmac, 1000)) == (
            ErrorCode.DELEGATION_TOKEN_EXPIRED
        )
        alice.expire_delegation_token(token.hmac, -1)  # removing it still works


def test_tokens_for_other_owners_and_who_sees_them(tokens: TokenBroker) -> None:
    """KIP-373: CREATE_TOKENS on a user lets one create that user's tokens;
    a token is listed to its owner, requester and renewers, and to whoever may
    DESCRIBE_TOKENS of its owner."""
    with tokens.admin("alice") as alice:
        assert _error(lambda: alice.create_delegation_token(owner="User:carol")) == (
            ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED
        )
    tokens.allow("User:alice", ResourceType.USER, "User:carol", AclOperation.CREATE_TOKENS)
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token(owner="User:carol")
        assert (token.owner, token.requester) == ("User:carol", "User:alice")
        assert token.token_id in {t.token_id for t in alice.describe_delegation_tokens()}
    with tokens.admin("carol") as carol:
        assert token.token_id in {t.token_id for t in carol.describe_delegation_tokens()}
        # The requester is no renewer: only the owner (and renewers) renew.
        carol.renew_delegation_token(token.hmac)
    with tokens.admin("alice") as alice:
        assert _error(lambda: alice.renew_delegation_token(token.hmac)) == (
            ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
        )
    with tokens.admin("bob") as bob:
        assert token.token_id not in {t.token_id for t in bob.describe_delegation_tokens()}
    tokens.allow("User:bob", ResourceType.USER, "User:carol", AclOperation.DESCRIBE_TOKENS)
    with tokens.admin("bob") as bob:
        listed = {t.token_id: t for t in bob.describe_delegation_tokens(["User:carol"])}
        assert listed[token.token_id].hmac == token.hmac
        assert bob.describe_delegation_tokens([]) == []  # an empty owner list asks for none
    # carol's token logs in as carol, who has no ACLs at all.
    producer = Producer({**tokens.token_conf(token), "max.block.ms": 20000})
    try:
        assert _error(lambda: producer.send("tok-orders", value=b"x").get(20)) == (
            ErrorCode.TOPIC_AUTHORIZATION_FAILED
        )
    finally:
        producer.close()


def test_librdkafka_logs_in_by_token_without_the_extension(tokens: TokenBroker) -> None:
    """librdkafka (2.x, as confluent-kafka bundles it) has no setting for SCRAM
    extensions: its first message is always ``n,,n=USER,r=NONCE``.  Kafka looks
    the token id up as a SCRAM user and refuses it; Samsa, finding no such user,
    looks it up as a token, so librdkafka clients log in by token as its owner,
    under the owner's ACLs.  A wrong HMAC, and an expired token, are refused."""
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token()
        doomed = alice.create_delegation_token()
        alice.expire_delegation_token(doomed.hmac, 0)
    conf = {
        "bootstrap.servers": tokens.sasl_address,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": token.token_id,
        "sasl.password": base64.b64encode(token.hmac).decode(),
    }
    assert librdkafka_delivers(conf, "tok-orders") == "delivered"
    wrong = {**conf, "sasl.password": base64.b64encode(b"not the hmac").decode()}
    assert "Authentication failed" in librdkafka_delivers(wrong, "tok-orders")
    expired = {
        **conf,
        "sasl.username": doomed.token_id,
        "sasl.password": base64.b64encode(doomed.hmac).decode(),
    }
    assert "Authentication failed" in librdkafka_delivers(expired, "tok-orders")
    alice_conf = {**conf, "sasl.username": "alice", "sasl.password": "alice-pw"}
    assert librdkafka_delivers(alice_conf, "tok-orders") == "delivered"


def test_tokens_survive_a_restart_and_log_in_again(tokens: TokenBroker) -> None:
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token()
    tokens.broker.stop()
    tokens.broker.start(timeout=90)
    with tokens.admin("alice") as alice:
        (found,) = [t for t in alice.describe_delegation_tokens() if t.token_id == token.token_id]
    assert found.hmac == token.hmac
    assert _logs_in(tokens, token) is True


def test_tokens_are_disabled_without_a_secret_key(tmp_path: Path) -> None:
    settings = {"delegation.token.secret.key": ""}
    with running_token_broker(tmp_path / "data", **settings) as off, off.admin("alice") as alice:
        assert _error(alice.create_delegation_token) == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
        assert _error(alice.describe_delegation_tokens) == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
        assert _error(lambda: alice.renew_delegation_token(b"x")) == (
            ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
        )


def _samsa(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samsa.cli", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=dict(os.environ),
    )


def test_samsa_tokens_command(tokens: TokenBroker, tmp_path: Path) -> None:
    config = tmp_path / "alice.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        f"sasl.jaas.config={scram_jaas('alice', USERS['alice'])}\n"
    )
    connect = ["--bootstrap-server", tokens.sasl_address, "--command-config", str(config)]
    created = _samsa("tokens", "create", "--renewer", "User:bob", *connect)
    assert created.returncode == 0, created.stderr
    header, row = created.stdout.splitlines()[:2]
    assert header.split()[:5] == ["TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS"]
    token_id, hmac, owner, requester, renewers = row.split()[:5]
    assert (owner, requester, renewers) == ("User:alice", "User:alice", "User:bob")
    assert base64.b64decode(hmac) == token_hmac(SECRET, token_id)

    renewed = _samsa("tokens", "renew", "--hmac", hmac, "--renew-time-ms", "60000", *connect)
    assert renewed.returncode == 0 and "renewed; its expiry is" in renewed.stdout, renewed.stderr
    listed = _samsa("tokens", "describe", "--owner", "User:alice", "--output", "json", *connect)
    (mine,) = [t for t in json.loads(listed.stdout) if t["token_id"] == token_id]
    assert mine["hmac"] == hmac and mine["renewers"] == ["User:bob"]
    assert _samsa("tokens", "expire", "--hmac", hmac, *connect).returncode == 0

    garbled = _samsa("tokens", "renew", "--hmac", "not base64!", *connect)
    assert garbled.returncode == 2 and "--hmac 'not base64!' is not base64" in garbled.stderr
    plain = _samsa("tokens", "describe", "--bootstrap-server", tokens.plain_address)
    assert plain.returncode == 2 and "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED" in plain.stderr


def _raw_token_login(tokens: TokenBroker, token: DelegationToken) -> tuple[socket.socket, int]:
    """Log in by ``token`` on a raw socket (SaslHandshake v1, SaslAuthenticate v2):
    the socket and the session lifetime the broker gave."""
    host, port = tokens.sasl_address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    scram = ScramClient(
        "SCRAM-SHA-256", token.token_id, token.password, extensions={"tokenauth": "true"}
    )
    correlation = iter(range(1, 100))

    def call(api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        sock.sendall(request(api_key, version, body, next(correlation)))
        size = struct.unpack(">i", _read(sock, 4))[0]
        return response(api_key, version, _read(sock, size))

    assert call(17, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
    first = call(36, 2, {"auth_bytes": scram.first_message()})
    final = call(36, 2, {"auth_bytes": scram.final_message(bytes(first["auth_bytes"]))})
    assert final["error_code"] == 0, final
    scram.check_server_final(bytes(final["auth_bytes"]))
    return sock, int(final["session_lifetime_ms"])


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed by the broker")
        data += chunk
    return data


def test_a_token_session_ends_at_the_tokens_expiry(tokens: TokenBroker) -> None:
    """As Kafka's SaslServerAuthenticator: a token's login lasts until the token's
    expiry (no connections.max.reauth.ms here); a request after that closes the
    connection unless the client logged in again (with a renewed token)."""
    with tokens.admin("alice") as alice:
        token = alice.create_delegation_token(max_lifetime_ms=3000)
    sock, lifetime_ms = _raw_token_login(tokens, token)
    with sock:
        assert 0 < lifetime_ms <= 3000
        assert lifetime_ms >= token.expiry_timestamp_ms - time.time() * 1000 - 1000
        metadata = {"topics": [], "allow_auto_topic_creation": False}
        sock.sendall(request(3, 9, metadata, 50))
        size = struct.unpack(">i", _read(sock, 4))[0]
        assert response(3, 9, _read(sock, size))["brokers"]  # answered while the session lasts
        wait_until(lambda: time.time() * 1000 > token.expiry_timestamp_ms + 100, 10, "expiry")
        sock.sendall(request(3, 9, metadata, 51))
        with pytest.raises((ConnectionError, OSError)):
            _read(sock, 4)
    assert tokens.broker.wait_for_log("expired without re-authentication", 10)
