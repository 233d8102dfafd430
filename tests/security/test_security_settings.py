"""Security settings a node refuses at start-up, each with one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"listeners": "SSL://127.0.0.1:0"}, "an SSL listener needs a keystore"),
        (
            {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "GSSAPI"},
            "sasl.enabled.mechanisms: GSSAPI is not supported",
        ),
        (
            {
                "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": "PlainLoginModule",
            },
            "listener.name.sasl_plaintext.plain.sasl.jaas.config: expected",
        ),
        (
            {
                "listeners": "PLAINTEXT://127.0.0.1:0",
                "listener.security.protocol.map": "PLAINTEXT:TLS",
            },
            "unknown security protocol 'TLS'",
        ),
        (
            {
                "listeners": "SASL_SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
                "controller.listener.names": "CONTROLLER",
                "controller.quorum.voters": "1@127.0.0.1:1",
                "cluster.id": "MkU3OEVBNTcwNTJENDM2Qg",
                "inter.broker.listener.name": "SASL_SSL",
                "listener.security.protocol.map": "SASL_SSL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            },
            "sasl.jaas.config: this node logs in to SASL_SSL with PLAIN "
            "(sasl.mechanism.inter.broker.protocol)",
        ),
    ],
)
def test_bad_security_settings_stop_the_node_with_the_key_named(
    tmp_path: Path, settings: dict[str, str], message: str
) -> None:
    broker = BrokerProcess(tmp_path / "data", settings, port=None)
    with pytest.raises(RuntimeError, match="exited during start"):
        broker.start()
    assert broker.proc is not None and broker.proc.wait(10) != 0
    assert any(message in line for line in broker.log_lines), broker.log_text()[-2000:]
    assert "Traceback" not in broker.log_text()


def test_a_single_node_with_only_a_sasl_listener_needs_no_login_of_its_own(
    tmp_path: Path,
) -> None:
    """Its quorum and controller are in-process: only the users it accepts are needed."""
    from confluent_kafka import Producer

    broker = BrokerProcess(
        tmp_path / "data",
        {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "sasl.jaas.config": 'PlainLoginModule required user_alice="alice-secret";',
        },
        port=None,
    )
    bootstrap = broker.start()
    try:
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": "alice-secret",
            }
        )
        outcomes: list[object] = []
        producer.produce("only-sasl", b"in", on_delivery=lambda e, m: outcomes.append(e))
        assert producer.flush(30) == 0
        assert outcomes == [None]
    finally:
        broker.stop()
