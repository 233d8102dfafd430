"""Kafka 4.4's Java consumer with ``group.protocol=consumer`` commits its offsets
inside transactions (issue 36, bug 1).

java/SamsaConsumeTransformProduce.java runs Kafka's consume-transform-produce
loop: ``sendOffsetsToTransaction(offsets, consumer.groupMetadata())`` sends the
KIP-848 member's id and epoch in TxnOffsetCommit, which the coordinator checks as
OffsetCommit does.  Before the fix Samsa answered ILLEGAL_GENERATION and the
first commit failed.  A classic-protocol run beside it keeps the old path honest.
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
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

JAVA_SOURCE = Path(__file__).parent / "java" / "SamsaConsumeTransformProduce.java"
RECORDS = 30
PARTITIONS = 3


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_java_consume_transform_produce_commits_offsets_in_each_transaction(
    kafka_reference: KafkaReference, samsa_node: BrokerProcess, tmp_path: Path, protocol: str
) -> None:
    bootstrap = samsa_node.bootstrap
    suffix = uuid.uuid4().hex[:8]
    source, sink, group = f"ctp-in-{suffix}", f"ctp-out-{suffix}", f"ctp-{protocol}-{suffix}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics(
        [NewTopic(source, PARTITIONS, 1), NewTopic(sink, PARTITIONS, 1)]
    ).values():
        future.result(30)
    seed = ck.Producer({"bootstrap.servers": bootstrap})
    for i in range(RECORDS):
        seed.produce(source, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTITIONS)
    assert seed.flush(10) == 0

    classes = compile_java(kafka_reference, JAVA_SOURCE, tmp_path / "classes", ("kafka-clients-",))
    argv = kafka_reference.java_command(
        "SamsaConsumeTransformProduce",
        bootstrap,
        source,
        sink,
        group,
        f"tx-{group}",
        str(RECORDS),
        protocol,
        quick_start=True,
        classpath=f"{classes}:{kafka_reference.kafka_classpath}",
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert f"DONE {RECORDS}" in done.stdout.splitlines(), done.stdout

    reader = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        committed = reader.committed(
            [ck.TopicPartition(source, p) for p in range(PARTITIONS)], timeout=10
        )
    finally:
        reader.close()
    assert sum(tp.offset for tp in committed) == RECORDS
    outputs = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{suffix}",
            "isolation.level": "read_committed",
        }
    )
    outputs.assign([ck.TopicPartition(sink, p, 0) for p in range(PARTITIONS)])
    values: list[bytes] = []
    try:
        for _ in range(150):  # bounded: 30 s of 0.2 s polls
            if len(values) >= RECORDS:
                break
            msg = outputs.poll(0.2)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
    finally:
        outputs.close()
    assert sorted(values) == sorted(b"out-v%d" % i for i in range(RECORDS))
