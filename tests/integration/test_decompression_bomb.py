"""A decompression bomb against a real broker: refused, not inflated.

A client allowed to produce sends one compressed batch holding 128 MiB of
zeros (a few KB to a few MB on the wire).  On a compacted topic the broker
must look inside it (every record needs a key); with the topic's
``max.decompressed.message.bytes`` it answers INVALID_RECORD after
inflating at most the records' bound, stays up, and its peak RSS (the
kernel's high-water mark, reset just before) does not grow by the bomb's
size.  A stored batch over the limit (the topic was not compacted when it
came) answers ListOffsets by timestamp with INVALID_RECORD and leaves the
cleaner's partition uncleanable, every record still readable.  Requests
are built with Samsa's own protocol code on a bare socket.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka import KafkaError as ClientError
from tests.integration.raw_client import RawClient

from samsa.errors import ErrorCode
from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.testing import BrokerProcess

BOMB_BYTES = 128 << 20
LIMIT = 1024
MB = 1 << 20


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(
        tmp_path_factory.mktemp("bomb") / "data", {"log.cleaner.backoff.ms": "100"}
    ) as proc:
        yield proc


@pytest.fixture
def client(broker: BrokerProcess) -> Iterator[RawClient]:
    raw = RawClient(broker.bootstrap)
    try:
        yield raw
    finally:
        raw.close()


def create(client: RawClient, topic: str, configs: dict[str, str]) -> None:
    body = {
        "topics": [
            {
                "name": topic,
                "num_partitions": 1,
                "replication_factor": 1,
                "assignments": [],
                "configs": [{"name": k, "value": v} for k, v in configs.items()],
            }
        ],
        "timeout_ms": 5000,
        "validate_only": False,
    }
    result = client.call(19, 7, body)["topics"][0]
    assert result["error_code"] == 0, result


def batch(codec: Compression, values: list[bytes], timestamp: int) -> bytes:
    builder = RecordBatchBuilder(codec, batch_size=1 << 30)
    for i, value in enumerate(values):
        builder.append(timestamp, b"key-%d" % i, value)
    return builder.build()


def produce(client: RawClient, topic: str, records: bytes) -> dict[str, Any]:
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    response = client.call(0, 9, body)
    (partition,) = response["responses"][0]["partition_responses"]
    return partition  # type: ignore[no-any-return]


def list_offset(client: RawClient, topic: str, timestamp: int) -> dict[str, Any]:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp}
                ],
            }
        ],
    }
    return client.call(2, 7, body)["topics"][0]["partitions"][0]  # type: ignore[no-any-return]


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")


@pytest.mark.parametrize(
    "codec", [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
)
def test_a_bomb_is_invalid_record_and_the_broker_does_not_inflate_it(
    broker: BrokerProcess, client: RawClient, topic_name: str, codec: Compression
) -> None:
    create(
        client,
        topic_name,
        {
            "cleanup.policy": "compact",
            "max.decompressed.message.bytes": str(LIMIT),
            "max.message.bytes": str(16 * MB),  # snappy's bomb is ~6 MB on the wire
        },
    )
    now = int(time.time() * 1000)
    bomb = batch(codec, [bytes(BOMB_BYTES)], now)
    assert len(bomb) < 16 * MB
    assert broker.proc is not None
    pid = broker.proc.pid
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # reset the peak RSS mark
    before = _status_kb(pid, "VmRSS")

    refused = produce(client, topic_name, bomb)

    growth_mb = (_status_kb(pid, "VmHWM") - before) // 1024
    assert refused["error_code"] == ErrorCode.INVALID_RECORD, refused
    assert "max.decompressed.message.bytes=1024" in refused["error_message"]
    assert growth_mb < 64 + len(bomb) // MB, f"the broker's RSS grew by {growth_mb} MB"
    assert broker.running

    normal = produce(client, topic_name, batch(codec, [b"value-%d" % i for i in range(10)], now))
    assert normal["error_code"] == 0, normal
    assert normal["base_offset"] == 0  # nothing of the bomb was stored


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_librdkafka_batches_pass_within_the_limit_and_a_larger_record_is_refused(
    broker: BrokerProcess, client: RawClient, topic_name: str, codec: str
) -> None:
    """librdkafka's own framings (xerial snappy, lz4 frames, ...) read through the
    bounded path; its producer reports a record over the limit as INVALID_RECORD."""
    create(
        client,
        topic_name,
        {"cleanup.policy": "compact", "max.decompressed.message.bytes": str(LIMIT)},
    )
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "compression.type": codec, "linger.ms": 50}
    )
    outcomes: list[int | None] = []

    def delivered(err: ClientError | None, _msg: object) -> None:
        outcomes.append(None if err is None else err.code())

    for i in range(200):
        producer.produce(topic_name, key=b"k%d" % (i % 7), value=b"v" * 100, on_delivery=delivered)
    assert producer.flush(20) == 0
    assert outcomes == [None] * 200
    producer.produce(topic_name, key=b"big", value=b"v" * (2 * LIMIT), on_delivery=delivered)
    assert producer.flush(20) == 0
    assert outcomes[200:] == [ClientError.INVALID_RECORD]


def test_a_stored_batch_over_the_limit_fails_lookups_and_cleaning_but_stays_readable(
    broker: BrokerProcess, client: RawClient, topic_name: str
) -> None:
    # Not compacted yet: the broker stores the batches without looking inside them.
    create(
        client,
        topic_name,
        {
            "max.decompressed.message.bytes": "100",
            "segment.bytes": "2048",
            "min.cleanable.dirty.ratio": "0",
        },
    )
    now = int(time.time() * 1000)
    values = [os.urandom(300) for _ in range(24)]
    for i in range(0, len(values), 3):  # ~1 KB a batch: several segments
        stored = produce(client, topic_name, batch(Compression.ZSTD, values[i : i + 3], now + i))
        assert stored["error_code"] == 0, stored

    by_time = list_offset(client, topic_name, now + 4)
    assert by_time["error_code"] == ErrorCode.INVALID_RECORD, by_time
    assert list_offset(client, topic_name, -3)["error_code"] == ErrorCode.INVALID_RECORD
    latest = list_offset(client, topic_name, -1)
    assert (latest["error_code"], latest["offset"]) == (0, len(values))

    altered = client.call(
        44,
        1,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": topic_name,
                    "configs": [
                        {"name": "cleanup.policy", "config_operation": 0, "value": "compact"}
                    ],
                }
            ],
            "validate_only": False,
        },
    )
    assert altered["responses"][0]["error_code"] == 0, altered
    assert broker.wait_for_log(f"[{topic_name}-0] cleaning failed; partition marked uncleanable")
    assert broker.wait_for_log("max.decompressed.message.bytes=100")
    assert broker.running

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic_name})
    consumer.assign([TopicPartition(topic_name, 0, OFFSET_BEGINNING)])
    read: list[bytes] = []
    deadline = time.monotonic() + 20
    try:
        while len(read) < len(values) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                read.append(message.value())
    finally:
        consumer.close()
    assert read == values
