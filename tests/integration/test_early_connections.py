"""Clients that connect while the single-node broker starts are answered, not dropped.

``samsa broker`` binds its port a few hundred milliseconds before it can answer
clients.  A client connecting in that window (the port just opened) used to be
disconnected ("the broker is still starting"): librdkafka then reports "all
broker connections are down" through its error callback, which its own test
suite and many health checks treat as a failure.  Like Kafka, the broker now
holds such a connection's requests and answers them once it is ready.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient
from tests.startup_probe import (
    CLIENT_APIS,
    connect_when_accepting,
    read_first_answers,
    send_first_requests,
)

from samsa.testing import BrokerProcess
from samsa.testing.cluster import free_ports

pytestmark = pytest.mark.integration


def launch_on_known_port(tmp_path: Path) -> tuple[BrokerProcess, threading.Event, int]:
    port = free_ports(1)[0]
    broker = BrokerProcess(tmp_path / "data", port=port)
    return broker, broker.launch(), port


def test_first_requests_sent_the_instant_the_port_accepts_are_answered(tmp_path: Path) -> None:
    broker, ready, port = launch_on_known_port(tmp_path)
    try:
        with connect_when_accepting(port) as sock:
            connected_before_ready = not ready.is_set()
            send_first_requests(sock)
            apis, metadata = read_first_answers(sock)
        assert connected_before_ready, "the broker was ready before the first connection"
        assert apis >= CLIENT_APIS
        assert [(b["node_id"], b["port"]) for b in metadata["brokers"]] == [(1, port)]
        assert metadata["controller_id"] == 1
        broker.wait_ready(ready)
    finally:
        broker.stop()
        broker.kill()


def test_librdkafka_connecting_as_the_port_opens_sees_no_broker_down(tmp_path: Path) -> None:
    broker, ready, port = launch_on_known_port(tmp_path)
    errors: list[KafkaError] = []
    try:
        connect_when_accepting(port).close()  # what a port wait does
        client_before_ready = not ready.is_set()
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "error_cb": errors.append})
        metadata = admin.list_topics(timeout=30)
        assert client_before_ready, "the broker was ready before the client connected"
        assert list(metadata.brokers) == [1]
        admin.poll(0)  # deliver any error the client saw
        assert errors == []
        del admin  # no reconnect attempts once the broker stops
        broker.wait_ready(ready)
    finally:
        broker.stop()
        broker.kill()
