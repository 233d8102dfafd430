"""Kafka's ``kafka-reassign-partitions`` moves a replica between two log dirs of one broker.

A plan with ``log_dirs`` makes the tool send AlterReplicaLogDirs to the broker
holding the replica and ``--verify`` follow it through DescribeLogDirs, as it
does against Kafka; ``kafka-log-dirs --describe`` shows the future replica
(``isFuture``) and its lag while the copy runs, throttled by the tool's
``--replica-alter-log-dirs-throttle``.  A move under a producer and a consumer
loses and repeats nothing; a dir the broker does not have is refused with
LOG_DIR_NOT_FOUND.  One broker with two log dirs serves the module.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from tests.cluster.helpers import admin, create_topic
from tests.kafka_tools.conftest import STARTUP_TIMEOUT_S, TEST_TIMEOUT_S, KafkaTools, write_json
from tests.kafka_tools.tool_classes import LOG_DIRS, REASSIGN_PARTITIONS

from samsa.testing import BrokerProcess
from samsa.testing.cluster import wait_until
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"


@pytest.fixture(scope="module")
def two_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, Path]]:
    root = tmp_path_factory.mktemp("jbod")
    broker = BrokerProcess(Path(f"{root / 'a'},{root / 'b'}"))
    broker.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield broker, root
    finally:
        broker.stop()
        broker.kill()


@pytest.fixture(scope="module")
def tools(kafka_reference: KafkaReference, two_dirs: tuple[BrokerProcess, Path]) -> KafkaTools:
    return KafkaTools(kafka_reference, two_dirs[0].bootstrap)


def dirs_of(root: Path, topic: str) -> tuple[Path, Path]:
    """(the dir holding the topic's partition 0, the other one)."""
    a, b = root / "a", root / "b"
    return (a, b) if (a / f"{topic}-0").is_dir() else (b, a)


def plan(tmp_path: Path, topic: str, target: Path) -> str:
    move = {"topic": topic, "partition": 0, "replicas": [1], "log_dirs": [str(target)]}
    return write_json(tmp_path / f"{topic}.json", json.dumps({"version": 1, "partitions": [move]}))


def fill(bootstrap: str, topic: str, count: int, size: int = 1000) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, b"%08d:" % i + b"f" * size, partition=0)
    assert producer.flush(60) == 0


def test_a_move_under_a_producer_and_a_consumer_loses_nothing(
    tools: KafkaTools, two_dirs: tuple[BrokerProcess, Path], tmp_path: Path
) -> None:
    broker, root = two_dirs
    create_topic(broker.bootstrap, "busy")
    fill(broker.bootstrap, "busy", 2000)
    source, target = dirs_of(root, "busy")

    acked: list[bytes] = []
    consumed: list[bytes] = []
    stop = threading.Event()

    def produce() -> None:
        producer = Producer(
            {"bootstrap.servers": broker.bootstrap, "acks": "all", "enable.idempotence": True}
        )
        n = 0
        while not stop.is_set():
            value = b"live-%06d" % n
            producer.produce(
                "busy", value, partition=0, on_delivery=lambda e, m: e or acked.append(m.value())
            )
            producer.poll(0.002)
            n += 1
        assert producer.flush(60) == 0

    def consume() -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "busy-reader",
                "auto.offset.reset": "earliest",
            }
        )
        consumer.subscribe(["busy"])
        while not stop.is_set() or len(consumed) < 2000 + len(acked):
            for message in consumer.consume(500, 0.2):
                if message.error() is None:
                    consumed.append(message.value())
        consumer.close()

    workers = [threading.Thread(target=produce), threading.Thread(target=consume)]
    for worker in workers:
        worker.start()
    try:
        wait_until(lambda: len(acked) > 100 and len(consumed) > 100, 30, "traffic to start")
        started = tools.admin(
            REASSIGN_PARTITIONS,
            "--reassignment-json-file",
            plan(tmp_path, "busy", target),
            "--execute",
        )
        assert (
            f"Successfully started moving log directory to {target} for replica busy-0 with broker 1"
            in started
        )
        assert broker.wait_for_log(f"[busy-0] moved from {source} to {target}", 30)
        verified = tools.admin(
            REASSIGN_PARTITIONS,
            "--reassignment-json-file",
            plan(tmp_path, "busy", target),
            "--verify",
        )
        assert "Reassignment of replica busy-0-1 completed successfully." in verified
        # The controller knows the replica's new dir (KIP-858) before the swap.
        assert broker.wait_for_log(f"[busy-0] the controller recorded the replica in {target}", 1)
        moved_at = len(acked)
        wait_until(lambda: len(acked) > moved_at + 100, 30, "writes to the moved log")
    finally:
        stop.set()
        for worker in workers:
            worker.join(90)
    assert (target / "busy-0").is_dir() and not (source / "busy-0").exists()
    live = [v for v in consumed if v.startswith(b"live-")]
    assert live == acked, "every acknowledged record read once, in order"
    assert len(consumed) == 2000 + len(acked)


def test_kafka_log_dirs_shows_the_future_replica_while_it_copies(
    tools: KafkaTools, two_dirs: tuple[BrokerProcess, Path], tmp_path: Path
) -> None:
    broker, root = two_dirs
    create_topic(broker.bootstrap, "slow")
    # 3 MB at 100 KB/s: the quota's ten-second window lets at most its first MB through at once.
    fill(broker.bootstrap, "slow", 3000)
    source, target = dirs_of(root, "slow")
    moving = plan(tmp_path, "slow", target)
    tools.admin(
        REASSIGN_PARTITIONS,
        "--reassignment-json-file",
        moving,
        "--execute",
        "--replica-alter-log-dirs-throttle",
        "100000",
    )
    report = json.loads(
        tools.admin(LOG_DIRS, "--describe", "--topic-list", "slow").splitlines()[-1]
    )
    (described,) = report["brokers"]
    by_dir = {d["logDir"]: d["partitions"] for d in described["logDirs"]}
    (current,) = by_dir[str(source)]
    (future,) = by_dir[str(target)]
    assert current["partition"] == future["partition"] == "slow-0"
    assert current["isFuture"] is False and future["isFuture"] is True
    assert 0 < future["offsetLag"] <= 3000 and future["size"] < current["size"]
    verified = tools.admin(REASSIGN_PARTITIONS, "--reassignment-json-file", moving, "--verify")
    assert "Reassignment of replica slow-0-1 is still in progress." in verified
    with admin(broker.bootstrap) as client:  # off with the throttle: the copy finishes
        assert client.describe_configs("broker", "1", [THROTTLE])[THROTTLE].value == "100000"
        client.alter_configs("broker", "1", {THROTTLE: None}, timeout=10)
    assert broker.wait_for_log(f"[slow-0] moved from {source} to {target}", 60)
    verified = tools.admin(REASSIGN_PARTITIONS, "--reassignment-json-file", moving, "--verify")
    assert "Reassignment of replica slow-0-1 completed successfully." in verified
    assert "Clearing broker-level throttles on broker 1" in verified


def test_a_dir_the_broker_does_not_have_is_refused(
    tools: KafkaTools, two_dirs: tuple[BrokerProcess, Path], tmp_path: Path
) -> None:
    broker, root = two_dirs
    create_topic(broker.bootstrap, "stays")
    source, _ = dirs_of(root, "stays")
    missing = root / "c"
    refused = tools.run(
        REASSIGN_PARTITIONS,
        "--bootstrap-server",
        broker.bootstrap,
        "--reassignment-json-file",
        plan(tmp_path, "stays", missing),
        "--execute",
        check=False,
    )
    assert "LogDirNotFoundException" in refused, refused
    assert broker.wait_for_log(f"Log dir {missing} is not found in the config", 1)
    assert (source / "stays-0").is_dir() and not missing.exists()
