"""A real broker with one listener per security protocol, and clients' settings for each.

Certificates are made in the test's temporary directory; the broker logs the
port each listener bound (``listener NAME (PROTOCOL) bound to HOST:PORT``),
which is how the tests find them (every listener binds port 0).
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.security.certs import CertificateAuthority

from samsa.protocol.api import decode_response, encode_request
from samsa.testing import BrokerProcess

USERS = {"admin": "admin-secret", "alice": "alice-secret"}
LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL", "SASL_PLAINTEXT")
# (security.protocol, sasl.mechanism) pairs every client is tested with.
CLIENT_CASES = [
    ("SSL", ""),
    ("SASL_SSL", "SCRAM-SHA-512"),
    ("SASL_SSL", "PLAIN"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", "PLAIN"),
]
_BOUND = re.compile(r"listener (\w+) \((\w+)\) bound to ([\d.]+):(\d+)")


def users_jaas(module: str = "PlainLoginModule") -> str:
    entries = " ".join(f'user_{name}="{password}"' for name, password in USERS.items())
    return f"org.apache.kafka.common.security.plain.{module} required {entries};"


@dataclass
class SecuredBroker:
    broker: BrokerProcess
    ca: CertificateAuthority
    ca_file: Path
    ports: dict[str, int] = field(default_factory=dict)

    def find_ports(self) -> None:
        """The ports the listeners bound (the latest start's, after a restart)."""
        for line in self.broker.log_lines:
            match = _BOUND.search(line)
            if match:
                self.ports[match.group(1)] = int(match.group(4))

    def address(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def librdkafka(
        self, protocol: str, mechanism: str = "", user: str = "alice", password: str = ""
    ) -> dict[str, Any]:
        """confluent-kafka settings for ``protocol`` on its listener."""
        conf: dict[str, Any] = {
            "bootstrap.servers": self.address(protocol),
            "security.protocol": protocol,
        }
        if "SSL" in protocol:
            conf["ssl.ca.location"] = str(self.ca_file)
        if mechanism:
            conf["sasl.mechanism"] = mechanism
            conf["sasl.username"] = user
            conf["sasl.password"] = password or USERS[user]
        return conf


def start_secured_broker(tmp_path: Path, extra: dict[str, str] | None = None) -> SecuredBroker:
    ca = CertificateAuthority()
    certs = tmp_path / "certs"
    certs.mkdir()
    ca_file, _, _ = ca.pem.write(certs, "ca")
    _, _, keystore = ca.issue("broker").write(certs, "broker")
    settings = {
        "listeners": ",".join(f"{name}://127.0.0.1:0" for name in LISTENERS),
        "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.truststore.location": str(ca_file),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "sasl.jaas.config": users_jaas("ScramLoginModule"),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": users_jaas(),
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": users_jaas(),
        "connection.failed.authentication.delay.ms": "300",
    }
    settings.update(extra or {})
    broker = BrokerProcess(tmp_path / "data", settings, port=None)
    broker.start(timeout=60)  # a loaded machine can take a while to start four listeners
    secured = SecuredBroker(broker, ca, ca_file)
    secured.find_ports()
    assert set(secured.ports) == set(LISTENERS), broker.log_text()[-3000:]
    return secured


@contextlib.contextmanager
def running_secured_broker(
    tmp_path: Path, extra: dict[str, str] | None = None
) -> Iterator[SecuredBroker]:
    """A secured broker for a module's tests, stopped (then killed if need be) after."""
    broker = start_secured_broker(tmp_path, extra)
    try:
        yield broker
    finally:
        broker.broker.stop()
        broker.broker.kill()


def librdkafka_delivers(conf: dict[str, Any], topic: str) -> str:
    """Produce one record with confluent-kafka: "delivered", or the first error
    librdkafka reported (a refused login among them)."""
    from confluent_kafka import Producer

    errors: list[Any] = []
    delivered: list[Any] = []
    producer = Producer({**conf, "message.timeout.ms": 20000, "error_cb": errors.append})
    producer.produce(
        topic, b"x", on_delivery=lambda e, m: (errors if e else delivered).append(e or m)
    )
    while not delivered and not errors:
        producer.poll(0.2)
    producer.purge()
    producer.flush(5)
    return "delivered" if delivered else str(errors[0])


def raw_exchange(address: str, frames: list[bytes], timeout: float = 10.0) -> list[bytes]:
    """Send frames on a plain socket; return each whole response frame until the broker hangs up."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        for frame in frames:
            sock.sendall(frame)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    out = []
    while len(data) >= 4:
        (size,) = struct.unpack_from(">i", data)
        out.append(data[4 : 4 + size])
        data = data[4 + size :]
    return out


def request(api_key: int, version: int, body: dict[str, Any], correlation_id: int = 1) -> bytes:
    return encode_request(api_key, version, correlation_id, "raw-test", body)


def response(api_key: int, version: int, frame: bytes) -> dict[str, Any]:
    return decode_response(api_key, version, memoryview(frame))[1]
