"""A TLS listener's certificate replaced without a restart, as Kafka's operators do it.

``kafka-configs --alter --entity-type brokers --add-config
listener.name.ssl.ssl.keystore.location=...`` (here: confluent-kafka's
incremental_alter_configs, the same request) makes new connections get the
new certificate while a producer connected before keeps producing.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer as KafkaProducer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from tests.security.secured_broker import SecuredBroker, running_secured_broker

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    with running_secured_broker(tmp_path_factory.mktemp("reload")) as broker:
        yield broker


def _served_certificate(secured: SecuredBroker) -> str:
    host, port = secured.address("SSL").rsplit(":", 1)
    return ssl.get_server_certificate((host, int(port)), timeout=10)


def _alter(secured: SecuredBroker, key: str, value: str) -> None:
    admin = AdminClient({"bootstrap.servers": secured.address("PLAINTEXT")})
    resource = ConfigResource(
        ResourceType.BROKER,
        "1",
        incremental_configs=[ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def test_new_connections_get_the_new_certificate_old_ones_continue(
    secured: SecuredBroker, tmp_path: Any
) -> None:
    before = _served_certificate(secured)
    errors: list[Any] = []
    producer = KafkaProducer({**secured.librdkafka("SSL"), "error_cb": errors.append})
    producer.produce("reload", b"before")
    assert producer.flush(30) == 0

    pem = secured.ca.issue("broker-renewed")
    _, _, keystore = pem.write(tmp_path, "renewed")
    _alter(secured, "listener.name.ssl.ssl.keystore.location", str(keystore))
    # The context is swapped before the broker logs it: connections after the
    # line get the new certificate.
    assert secured.broker.wait_for_log("listener SSL: reloaded its SSL keystore", 30)
    served = ssl.PEM_cert_to_DER_cert(_served_certificate(secured))
    renewed = ssl.PEM_cert_to_DER_cert(pem.cert)
    assert served == renewed != ssl.PEM_cert_to_DER_cert(before)

    producer.produce("reload", b"after")
    assert producer.flush(30) == 0
    assert errors == []


def test_a_keystore_that_does_not_load_keeps_the_old_one(secured: SecuredBroker) -> None:
    before = _served_certificate(secured)
    _alter(secured, "listener.name.ssl.ssl.keystore.location", "/nonexistent/keystore.pem")
    assert secured.broker.wait_for_log("keeping the old SSL keystore", 30)
    assert _served_certificate(secured) == before
