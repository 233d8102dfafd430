"""Samsa's ``__remote_log_metadata`` bytes and partitioning, checked by Kafka's own classes.

A small Java program (``java/RemoteLogMetadataBytes.java``) runs Kafka's
RemoteLogMetadataSerde and RemoteLogMetadataTopicPartitioner from the pinned
Kafka jars: Kafka must decode every record Samsa writes, write the very same
bytes back, and put every partition in the metadata partition Samsa chose.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.kafka_tools.conftest import compile_java

from samsa.testing.kafka_reference import KafkaReference
from samsa.testing.kafka_reference import kafka_reference as kafka_reference
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogMetadata,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
    encode_remote_log_metadata,
    metadata_partition,
    new_uuid,
    uuid_str,
)

JAVA = Path(__file__).parent / "java" / "RemoteLogMetadataBytes.java"


Ask = Callable[[list[str]], list[str]]


@pytest.fixture(scope="module")
def kafka_answers(kafka_reference: KafkaReference, tmp_path_factory: pytest.TempPathFactory) -> Ask:
    classes = compile_java(
        kafka_reference,
        JAVA,
        tmp_path_factory.mktemp("rlmm-java"),
        ("kafka-storage", "kafka-clients", "kafka-server-common"),
    )

    def ask(lines: list[str]) -> list[str]:
        argv = kafka_reference.java_command(
            "RemoteLogMetadataBytes",
            quick_start=True,
            classpath=f"{classes}:{kafka_reference.kafka_classpath}",
        )
        done = subprocess.run(
            argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stderr[-4000:]
        return done.stdout.splitlines()

    return ask


def _values() -> list[RemoteLogMetadata]:
    tip = TopicIdPartition(new_uuid(), "orders", 3)
    segment_id = RemoteLogSegmentId.generate_new(tip)
    started = RemoteLogSegmentMetadata(
        segment_id,
        start_offset=1000,
        end_offset=1999,
        max_timestamp_ms=1_700_000_123_456,
        broker_id=1,
        event_timestamp_ms=1_700_000_200_000,
        segment_size_bytes=1_048_576,
        segment_leader_epochs=(EpochEntry(0, 1000), EpochEntry(4, 1500)),
        txn_index_empty=True,
    )
    return [
        started,
        RemoteLogSegmentMetadata(
            RemoteLogSegmentId.generate_new(TopicIdPartition(new_uuid(), "ü-topic", 0)),
            0,
            0,
            -1,
            2,
            5,
            0,
            (EpochEntry(7, 0),),
        ),
        RemoteLogSegmentMetadataUpdate(
            segment_id, 1_700_000_300_000, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1
        ),
        RemoteLogSegmentMetadataUpdate(
            segment_id, 1_700_000_400_000, RemoteLogSegmentState.DELETE_SEGMENT_STARTED, 2
        ),
        RemotePartitionDeleteMetadata(
            tip, RemotePartitionDeleteState.DELETE_PARTITION_STARTED, 1_700_000_500_000, 3
        ),
    ]


def test_kafka_reads_and_rewrites_samsas_records_byte_for_byte(kafka_answers: Ask) -> None:
    values = _values()
    encoded = [encode_remote_log_metadata(v).hex() for v in values]
    answers = kafka_answers([f"serde {e}" for e in encoded])
    assert len(answers) == len(values)
    for value, sent, answer in zip(values, encoded, answers, strict=True):
        rewritten, text = answer.split("\t", 1)
        assert rewritten == sent, text
        if isinstance(value, RemoteLogSegmentMetadata):
            assert f"startOffset={value.start_offset}" in text
            assert f"id={uuid_str(value.segment_id.id)}" in text
            assert f"txnIdxEmpty={str(value.txn_index_empty).lower()}" in text
        else:
            assert value.state.name in text


def test_metadata_partition_matches_kafkas_partitioner(kafka_answers: Ask) -> None:
    cases = [(new_uuid(), partition, count) for partition in (0, 1, 7, 999) for count in (1, 3, 50)]
    cases.append((b"\xff" * 16, 2**31 - 1, 50))  # every sign bit set
    answers = kafka_answers([f"partition {uuid_str(t)} {p} {n}" for t, p, n in cases])
    ours = [metadata_partition(TopicIdPartition(t, "t", p), n) for t, p, n in cases]
    assert [int(a) for a in answers] == ours
