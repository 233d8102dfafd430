"""Real clients over every security protocol of one broker, and bad input at its doors.

One broker serves PLAINTEXT, SSL, SASL_SSL and SASL_PLAINTEXT listeners at
once; confluent-kafka (librdkafka) and kcat produce and consume through each,
with PLAIN and SCRAM logins.  Bad input (a plaintext client on the TLS port,
a wrong password, an unknown mechanism, a SASL frame before the handshake, a
request before login, an oversized frame) each closes only its own connection,
logged once with the peer's address, while a producer on another connection
keeps going with nothing lost.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from tests.security.secured_broker import (
    CLIENT_CASES,
    SecuredBroker,
    raw_exchange,
    request,
    response,
    start_secured_broker,
)

from samsa.errors import ErrorCode
from samsa.protocol.sasl.plain import plain_token

pytestmark = pytest.mark.timeout(120)


def _produce(conf: dict, topic: str, values: list[bytes]) -> None:
    producer = Producer({**conf, "linger.ms": 5})
    failures: list[object] = []
    for value in values:
        producer.produce(topic, value, on_delivery=lambda e, m: failures.append(e) if e else None)
    assert producer.flush(30) == 0
    assert failures == []


def _consume(conf: dict, topic: str, count: int) -> list[bytes]:
    consumer = Consumer(
        {
            **conf,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize(("protocol", "mechanism"), CLIENT_CASES)
def test_confluent_kafka_produces_and_consumes(
    secured: SecuredBroker, protocol: str, mechanism: str
) -> None:
    conf = secured.librdkafka(protocol, mechanism)
    topic = f"t-{protocol}-{mechanism or 'none'}".lower()
    values = [f"{protocol} {mechanism} {i}".encode() for i in range(200)]
    _produce(conf, topic, values)
    assert _consume(conf, topic, len(values)) == values


def test_large_fetches_are_encrypted_not_sent_with_sendfile(secured: SecuredBroker) -> None:
    """Regions past sendfile's threshold are read and encrypted on TLS listeners."""
    conf = secured.librdkafka("SSL")
    values = [bytes([i]) * 200_000 for i in range(12)]
    _produce({**conf, "message.max.bytes": 1_000_000}, "big-over-tls", values)
    assert _consume({**conf, "fetch.max.bytes": 4_000_000}, "big-over-tls", len(values)) == values


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat not installed")
@pytest.mark.parametrize(("protocol", "mechanism"), [("SSL", ""), ("SASL_SSL", "SCRAM-SHA-512")])
def test_kcat_produces_and_consumes(secured: SecuredBroker, protocol: str, mechanism: str) -> None:
    conf = secured.librdkafka(protocol, mechanism)
    args = ["kcat", "-b", conf.pop("bootstrap.servers")]
    for key, value in conf.items():
        args += ["-X", f"{key}={value}"]
    topic = f"kcat-{protocol}".lower()
    lines = [f"line {i}" for i in range(20)]
    subprocess.run(
        [*args, "-P", "-t", topic], input="\n".join(lines) + "\n", text=True, check=True, timeout=60
    )
    out = subprocess.run(
        [*args, "-C", "-t", topic, "-o", "beginning", "-c", str(len(lines)), "-e"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.splitlines() == lines


def test_wrong_password_is_refused_with_kafkas_message(secured: SecuredBroker) -> None:
    conf = secured.librdkafka("SASL_SSL", "PLAIN", password="not-it")
    errors = _client_errors(conf)
    assert any("Invalid username or password" in e for e in errors), errors
    assert secured.broker.wait_for_log("PLAIN authentication failed")


def _client_errors(conf: dict) -> list[str]:
    """The errors librdkafka reports while it cannot get in (bounded wait)."""
    errors: list[str] = []
    producer = Producer({**conf, "error_cb": lambda e: errors.append(str(e))})
    deadline = time.monotonic() + 15
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    with pytest.raises(KafkaException):
        AdminClient(conf).list_topics(timeout=1)
    return errors


def _bad_inputs(secured: SecuredBroker) -> None:
    sasl = secured.address("SASL_PLAINTEXT")
    # A plaintext Kafka client on the TLS port: no answer, closed after the delay.
    started = time.monotonic()
    api_versions = request(18, 3, {"client_software_name": "x"})
    assert raw_exchange(secured.address("SSL"), [api_versions]) == []
    assert time.monotonic() - started >= 0.25  # connection.failed.authentication.delay.ms
    assert secured.broker.wait_for_log("TLS handshake failed")
    # A request before login.
    assert raw_exchange(sasl, [request(3, 12, {"topics": None})]) == []
    assert secured.broker.wait_for_log("unexpected Metadata request during SASL authentication")
    # A SASL token before the handshake.
    assert raw_exchange(sasl, [request(36, 2, {"auth_bytes": b"\0a\0b"})]) == []
    assert secured.broker.wait_for_log("unexpected SaslAuthenticate request")
    # An unknown mechanism: Kafka's error, the mechanisms on offer, then closed.
    (frame,) = raw_exchange(sasl, [request(17, 1, {"mechanism": "GSSAPI"})])
    answer = response(17, 1, frame)
    assert answer["error_code"] == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert answer["mechanisms"] == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    # A wrong password: SASL_AUTHENTICATION_FAILED with Kafka's wording, then closed.
    handshake = request(17, 1, {"mechanism": "PLAIN"}, 1)
    login = request(36, 2, {"auth_bytes": plain_token("alice", "nope")}, 2)
    frames = raw_exchange(sasl, [handshake, login])
    assert len(frames) == 2
    failed = response(36, 2, frames[1])
    assert failed["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert failed["error_message"] == "Authentication failed: Invalid username or password"
    # A frame larger than sasl.server.max.receive.size before login.
    assert raw_exchange(sasl, [b"\x00\x10\x00\x00" + b"\x00" * 64]) == []
    assert secured.broker.wait_for_log("exceeds socket.request.max.bytes=524288")
    # Garbage where a TLS ClientHello should be, and a client that hangs up mid-handshake.
    # (the broker answers with a TLS alert, then hangs up)
    raw_exchange(secured.address("SASL_SSL"), [b"\x16\x03\x01\x00\x05hello"])
    with socket.create_connection(("127.0.0.1", secured.ports["SSL"])) as sock:
        sock.sendall(b"\x16\x03")
    _fuzz(secured, random.Random(22))


def _fuzz(secured: SecuredBroker, rng: random.Random) -> None:
    """Random bytes and random SASL exchanges; each connection half-closes after
    writing, so the broker sees the end whatever state the bytes left it in."""
    mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "", "X" * 300]
    for _ in range(40):
        listener = rng.choice(["SSL", "SASL_SSL", "SASL_PLAINTEXT"])
        kind = rng.random()
        if kind < 0.4:
            data = rng.randbytes(rng.randrange(1, 4000))
        elif kind < 0.7:
            body = rng.randbytes(rng.randrange(0, 600))
            data = len(body).to_bytes(4, "big") + body
        else:
            version = rng.choice([0, 1])
            data = request(17, version, {"mechanism": rng.choice(mechanisms)})
            for i in range(rng.randrange(1, 4)):
                token = rng.randbytes(rng.randrange(0, 200))
                data += request(36, rng.choice([0, 1, 2]), {"auth_bytes": token}, 2 + i)
        with socket.create_connection(("127.0.0.1", secured.ports[listener]), timeout=10) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass


def test_bad_input_closes_only_its_own_connection(secured: SecuredBroker) -> None:
    conf = secured.librdkafka("SASL_SSL", "SCRAM-SHA-512")
    producer = Producer({**conf, "linger.ms": 1})
    delivered: list[bytes] = []
    failures: list[object] = []
    stop = threading.Event()

    def keep_producing() -> None:
        i = 0
        while not stop.is_set():
            producer.produce(
                "beside-bad-input",
                str(i).encode(),
                on_delivery=lambda e, m: failures.append(e) if e else delivered.append(m.value()),
            )
            producer.poll(0.005)
            i += 1

    worker = threading.Thread(target=keep_producing)
    worker.start()
    try:
        _bad_inputs(secured)
    finally:
        stop.set()
        worker.join()
    assert producer.flush(30) == 0
    assert failures == []
    assert delivered == [str(i).encode() for i in range(len(delivered))]
    assert _consume(conf, "beside-bad-input", len(delivered)) == delivered
    logged = secured.broker.log_text()
    assert "unexpected error" not in logged and "Traceback" not in logged


def test_handshake_v0_clients_send_raw_tokens(secured: SecuredBroker) -> None:
    """kafka-python's old flow: SaslHandshake v0, then bare size-prefixed tokens."""
    token = plain_token("alice", "alice-secret")
    frames = raw_exchange_then_close(
        secured.address("SASL_PLAINTEXT"),
        [
            request(17, 0, {"mechanism": "PLAIN"}),
            len(token).to_bytes(4, "big") + token,
            request(3, 1, {"topics": []}, 3),
        ],
        expect=3,
    )
    assert response(17, 0, frames[0])["error_code"] == 0
    assert frames[1] == b""  # PLAIN's empty answer
    assert response(3, 1, frames[2])["brokers"][0]["port"] == secured.ports["SASL_PLAINTEXT"]


def raw_exchange_then_close(address: str, frames: list[bytes], expect: int) -> list[bytes]:
    host, port = address.rsplit(":", 1)
    out: list[bytes] = []
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for frame in frames:
            sock.sendall(frame)
        data = b""
        while len(out) < expect:
            chunk = sock.recv(65536)
            assert chunk, f"closed after {len(out)} responses"
            data += chunk
            while len(data) >= 4 and len(data) >= 4 + int.from_bytes(data[:4], "big"):
                size = int.from_bytes(data[:4], "big")
                out.append(data[4 : 4 + size])
                data = data[4 + size :]
    return out


def test_client_certificates_when_required(tmp_path: Path) -> None:
    secured = start_secured_broker(tmp_path, {"listener.name.ssl.ssl.client.auth": "required"})
    try:
        cert, key, _ = secured.ca.issue("alice").write(tmp_path, "alice")
        conf = secured.librdkafka("SSL")
        with_cert = {**conf, "ssl.certificate.location": str(cert), "ssl.key.location": str(key)}
        _produce(with_cert, "mutual-tls", [b"signed"])
        assert _consume(with_cert, "mutual-tls", 1) == [b"signed"]
        assert _client_errors(conf)
        assert secured.broker.wait_for_log("TLS handshake failed")
    finally:
        secured.broker.stop()
