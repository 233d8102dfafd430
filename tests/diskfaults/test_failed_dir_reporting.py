"""A broker reports its failed log dir where an operator looks.

With one log dir a broker stops right after it fails (see
test_full_disk_single_node.py), too soon to look at it.  So this node runs in
the test process, where nothing acts on its request to stop: it stays up with
its dir offline, as a broker with a second, working dir would, and is asked
what a client, Prometheus and ``samsa cluster status`` ask.  The fault is an
EIO on write from ``io_faults``; the clients are real and talk over sockets.
"""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from tests.cluster.helpers import admin, create_topic, wait_until

from samsa.cli.actions.cluster_status import gather
from samsa.config.broker_config import BrokerConfig
from samsa.errors import ErrorCode
from samsa.server.node import Node
from samsa.storage.files import io_faults
from samsa.testing import TEST_SETTINGS
from samsa.testing.cluster import free_ports

pytestmark = pytest.mark.integration

TOPIC = "reported"


def test_a_failed_dir_shows_in_describe_log_dirs_metrics_and_cluster_status(
    tmp_path: Path, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = tmp_path / "io-faults"
    monkeypatch.setattr(io_faults, "_rules_file", str(rules))
    data_dir = tmp_path / "data"
    client_port, metrics_port = free_ports(2)
    config = BrokerConfig(
        {
            **TEST_SETTINGS,
            "log.dirs": str(data_dir),
            "listeners": f"PLAINTEXT://127.0.0.1:{client_port}",
            "metrics.listen": f"127.0.0.1:{metrics_port}",
        }
    )
    node = Node(config)
    asyncio.run_coroutine_threadsafe(node.start(), loop).result(60)
    try:
        bootstrap = f"127.0.0.1:{client_port}"
        create_topic(bootstrap, TOPIC)
        rules.write_text(f"write {data_dir}/{TOPIC}-\n")
        errors: list[KafkaError | None] = []
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "retries": 0})
        producer.produce(TOPIC, b"x", on_delivery=lambda err, _msg: errors.append(err))
        assert producer.flush(30) == 0
        assert errors[0] is not None and errors[0].code() == KafkaError.KAFKA_STORAGE_ERROR
        wait_until(node.stop_requested.is_set, 10, "the node asking to stop")
        assert node.exit_code == 1

        with admin(bootstrap) as client:
            assert client.failed_log_dirs(timeout=10) == {
                1: [(str(data_dir), int(ErrorCode.KAFKA_STORAGE_ERROR))]
            }
            status = gather(client, 10)
        assert status["brokers"][0]["offline_log_dirs"] == [
            {"log_dir": str(data_dir), "error": "KAFKA_STORAGE_ERROR"}
        ]
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            metrics = response.read().decode()
        assert "samsa_offline_log_dirs 1.0" in metrics
        assert f'samsa_log_dir_offline{{log_dir="{data_dir}"}} 1.0' in metrics
    finally:
        asyncio.run_coroutine_threadsafe(node.stop(), loop).result(60)
        rules.unlink(missing_ok=True)
