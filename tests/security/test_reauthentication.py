"""KIP-368 re-authentication: session lifetimes, re-login on a live connection, expiry.

One broker for the module with ``connections.max.reauth.ms`` short enough that
a test sees several sessions end.  Raw frames check the broker's side exactly;
librdkafka and the Samsa client must keep producing across re-logins without
losing their connection.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer as KafkaProducer
from tests.security.secured_broker import (
    SecuredBroker,
    request,
    response,
    running_secured_broker,
)

from samsa.client import Producer
from samsa.errors import ErrorCode
from samsa.protocol.sasl.plain import plain_token

pytestmark = pytest.mark.timeout(180)

REAUTH_MS = 1500


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    with running_secured_broker(
        tmp_path_factory.mktemp("reauth"), {"connections.max.reauth.ms": str(REAUTH_MS)}
    ) as broker:
        yield broker


class RawConnection:
    """Requests on one socket, answered in order."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self._correlation = 0

    def call(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any] | None:
        """The response body, or None when the broker hung up instead."""
        self._correlation += 1
        self.sock.sendall(request(api_key, version, body, self._correlation))
        head = self._read(4)
        if head is None:
            return None
        frame = self._read(struct.unpack(">i", head)[0])
        return None if frame is None else response(api_key, version, frame)

    def _read(self, size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            try:
                chunk = self.sock.recv(size - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data

    def login(self, user: str, password: str) -> dict[str, Any]:
        handshake = self.call(17, 1, {"mechanism": "PLAIN"})
        assert handshake is not None and handshake["error_code"] == 0
        answer = self.call(36, 1, {"auth_bytes": plain_token(user, password)})
        assert answer is not None
        return answer


def test_session_lifetime_is_sent_and_a_relogin_keeps_the_connection(
    secured: SecuredBroker,
) -> None:
    conn = RawConnection(secured.address("SASL_PLAINTEXT"))
    first = conn.login("alice", "alice-secret")
    assert first["error_code"] == 0 and first["session_lifetime_ms"] == REAUTH_MS
    assert conn.call(3, 12, {"topics": None, "allow_auto_topic_creation": False}) is not None
    again = conn.login("alice", "alice-secret")
    assert again["error_code"] == 0 and again["session_lifetime_ms"] == REAUTH_MS
    assert conn.call(3, 12, {"topics": None, "allow_auto_topic_creation": False}) is not None


def test_a_relogin_as_someone_else_is_refused_and_closes(secured: SecuredBroker) -> None:
    conn = RawConnection(secured.address("SASL_PLAINTEXT"))
    assert conn.login("alice", "alice-secret")["error_code"] == 0
    refused = conn.login("admin", "admin-secret")
    assert refused["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert "Cannot change principals during re-authentication" in refused["error_message"]
    assert conn.call(3, 12, {"topics": None, "allow_auto_topic_creation": False}) is None


def test_an_expired_session_is_closed_at_its_next_request(secured: SecuredBroker) -> None:
    conn = RawConnection(secured.address("SASL_PLAINTEXT"))
    assert conn.login("alice", "alice-secret")["session_lifetime_ms"] == REAUTH_MS
    # The session's end is the event waited for: nothing but time can show it.
    time.sleep(REAUTH_MS / 1000 + 0.3)
    assert conn.call(3, 12, {"topics": None, "allow_auto_topic_creation": False}) is None
    assert secured.broker.wait_for_log("expired without re-authentication", 10)


def _expired_sessions(secured: SecuredBroker) -> int:
    return sum("expired without re-authentication" in line for line in secured.broker.log_lines)


def _produce_for(send: Any, seconds: float) -> int:
    sent = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        send(sent)
        sent += 1
        time.sleep(0.05)
    return sent


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "PLAIN"])
def test_librdkafka_relogs_in_and_keeps_producing(secured: SecuredBroker, mechanism: str) -> None:
    expired_before = _expired_sessions(secured)
    errors: list[Any] = []
    delivered: list[Any] = []
    producer = KafkaProducer(
        {
            **secured.librdkafka("SASL_SSL", mechanism),
            "error_cb": errors.append,
            "linger.ms": 0,
        }
    )
    sent = _produce_for(
        lambda i: (
            producer.produce(
                "reauth-rdkafka",
                str(i).encode(),
                on_delivery=lambda e, m: (errors if e else delivered).append(e or m),
            ),
            producer.poll(0),
        ),
        3 * REAUTH_MS / 1000,
    )
    assert producer.flush(30) == 0
    assert errors == []
    assert len(delivered) == sent
    assert _expired_sessions(secured) == expired_before


def test_samsa_client_relogs_in_and_keeps_its_connection(
    secured: SecuredBroker, caplog: pytest.LogCaptureFixture
) -> None:
    conf = {
        "bootstrap.servers": secured.address("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="alice" password="alice-secret";'
        ),
        "linger.ms": 0,
    }
    caplog.set_level(logging.DEBUG, logger="samsa.client")
    expired_before = _expired_sessions(secured)
    producer = Producer(conf)
    try:
        futures: list[Any] = []
        _produce_for(lambda i: futures.append(producer.send("reauth-samsa", value=b"v")), 3.5)
        producer.flush()
        assert all(f.get(30) is not None for f in futures)
    finally:
        producer.close()
    messages = [r.getMessage() for r in caplog.records]
    assert sum("re-authenticating with node" in m for m in messages) >= 2
    assert not any("closed the connection" in m for m in messages)
    assert _expired_sessions(secured) == expired_before
