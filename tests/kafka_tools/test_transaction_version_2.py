"""Kafka 4.1's Java transactional producer with transaction version 2 (KIP-890 part 2).

Samsa advertises ``transaction.version`` 2, so the Java client sends Produce v12
(no AddPartitionsToTxn: the leader adds the partition) and EndTxn v5 (every
commit or abort bumps the epoch).  java/SamsaTxnV2Producer.java commits, aborts,
is fenced by a second instance, and prints the epoch DescribeTransactions shows
after each step; a confluent-kafka (classic) transactional producer writes beside it.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, TOOL_TIMEOUT_S, compile_java

from samsa.testing import BrokerProcess
from samsa.testing.cluster import LocalCluster
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

JAVA_SOURCE = Path(__file__).parent / "java" / "SamsaTxnV2Producer.java"


def compile_producer(reference: KafkaReference, out_dir: Path) -> Path:
    return compile_java(reference, JAVA_SOURCE, out_dir, ("kafka-clients-",))


def read_committed(bootstrap: str, topic: str, want: int) -> list[bytes]:
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    try:
        for _ in range(150):  # bounded: 30 s of 0.2 s polls
            if len(values) >= want:
                break
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
    finally:
        consumer.close()
    return values


def test_java_producer_commits_aborts_and_is_fenced_with_an_epoch_bump_per_transaction(
    kafka_reference: KafkaReference, samsa_node: BrokerProcess, tmp_path: Path
) -> None:
    run_java_and_classic_producers(kafka_reference, samsa_node.bootstrap, tmp_path, 1)


def test_the_same_on_three_nodes_where_leaders_ask_a_remote_coordinator(
    kafka_reference: KafkaReference, samsa_cluster: LocalCluster, tmp_path: Path
) -> None:
    """Partition leaders add partitions with AddPartitionsToTxn (not verify-only)
    sent to the coordinator's broker when it is another node."""
    run_java_and_classic_producers(kafka_reference, samsa_cluster.bootstrap, tmp_path, 3)


def run_java_and_classic_producers(
    kafka_reference: KafkaReference, bootstrap: str, tmp_path: Path, replicas: int
) -> None:
    topic = f"tv2-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, replicas)])[topic].result(30)
    classes = compile_producer(kafka_reference, tmp_path / "classes")
    argv = kafka_reference.java_command(
        "SamsaTxnV2Producer",
        bootstrap,
        topic,
        f"java-{topic}",
        quick_start=True,
        classpath=f"{classes}:{kafka_reference.kafka_classpath}",
    )
    # A classic (transaction version 1) producer beside it, on the same partition.
    classic = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": f"ck-{topic}"})
    classic.init_transactions(30)
    classic.begin_transaction()
    classic.produce(topic, value=b"classic")
    classic.commit_transaction(30)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.split("\n")
    # Every commit or abort bumps the epoch: three transactions take 0 to 3; the
    # second instance's InitProducerId bumps once more and its commit once again.
    assert "EPOCH init 0" in lines and "EPOCH after3 3" in lines, done.stdout
    assert "EPOCH second 5" in lines, done.stdout
    assert any(line.startswith("FENCED ") for line in lines), done.stdout
    assert "DONE" in lines, done.stdout
    values = read_committed(bootstrap, topic, 4)
    assert sorted(values) == [b"b1", b"c1", b"c2", b"classic"]
