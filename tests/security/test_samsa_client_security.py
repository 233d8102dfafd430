"""The Samsa client over SSL and SASL: TLS in memory BIOs, SASL after ApiVersions."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.security.secured_broker import CLIENT_CASES, SecuredBroker

from samsa.client import Consumer, Producer
from samsa.errors import ConfigError, ErrorCode, KafkaError

pytestmark = pytest.mark.timeout(120)


def _conf(
    secured: SecuredBroker, protocol: str, mechanism: str = "", password: str = "alice-secret"
) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": secured.address(protocol),
        "security.protocol": protocol,
    }
    if "SSL" in protocol:
        conf["ssl.truststore.certificates"] = secured.ca.pem.cert
    if mechanism:
        conf["sasl.mechanism"] = mechanism
        conf["sasl.jaas.config"] = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="alice" password="{password}";'
        )
    return conf


def _round_trip(conf: dict[str, Any], topic: str, values: list[bytes]) -> list[bytes]:
    producer = Producer(conf)
    try:
        futures = [producer.send(topic, value=v) for v in values]
        producer.flush()
        for future in futures:
            future.get(30)
    finally:
        producer.close()
    consumer = Consumer({**conf, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        consumer.subscribe([topic])
        while len(got) < len(values) and time.monotonic() < deadline:
            got.extend(record.value for record in consumer.poll(0.5))
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize(("protocol", "mechanism"), CLIENT_CASES)
def test_samsa_client_produces_and_consumes(
    secured: SecuredBroker, protocol: str, mechanism: str
) -> None:
    values = [f"{protocol}-{i}".encode() for i in range(300)]
    topic = f"samsa-{protocol}-{mechanism or 'tls'}".lower()
    assert _round_trip(_conf(secured, protocol, mechanism), topic, values) == values


def test_large_records_cross_tls_both_ways(secured: SecuredBroker) -> None:
    values = [bytes([i]) * 300_000 for i in range(8)]
    assert _round_trip(_conf(secured, "SSL"), "samsa-big-tls", values) == values


def test_wrong_password_never_gets_in_and_the_broker_says_who(secured: SecuredBroker) -> None:
    producer = Producer(
        {**_conf(secured, "SASL_SSL", "SCRAM-SHA-256", "wrong"), "max.block.ms": 30000}
    )
    try:
        with pytest.raises(KafkaError) as refused:
            producer.send("never", value=b"x").get(10)
        assert refused.value.code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in str(refused.value)
    finally:
        producer.close()
    assert secured.broker.wait_for_log("SCRAM-SHA-256 authentication failed (user 'alice')")


def test_client_security_settings_are_checked_at_construction(secured: SecuredBroker) -> None:
    with pytest.raises(ConfigError, match="GSSAPI is not supported"):
        Producer(
            {"bootstrap.servers": secured.address("SASL_SSL"), "security.protocol": "SASL_SSL"}
        )
    with pytest.raises(ConfigError, match=r"security\.protocol"):
        Producer({"bootstrap.servers": secured.address("SSL"), "security.protocol": "TLS"})
    with pytest.raises(ConfigError, match="username"):
        Producer(
            {
                "bootstrap.servers": secured.address("SASL_PLAINTEXT"),
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": 'M required password="x";',
            }
        )
