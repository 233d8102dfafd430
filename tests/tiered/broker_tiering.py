"""What the tests of tiered storage in a running broker share: settings, producing, reading back.

The brokers are real processes (``samsa.testing``); the clients are
confluent-kafka (librdkafka) and Kafka's own tools; offsets are asked of one
node at a time with raw ListOffsets v9 (``samsa.testing.cluster.call``), the
version that knows -4 (earliest local) and -5 (latest tiered).  Every wait is
bounded and ends on an observable answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing.cluster import call, wait_until
from samsa.tiered.metadata import METADATA_TOPIC, decode_remote_log_metadata

EARLIEST, EARLIEST_LOCAL, LATEST_TIERED = -2, -4, -5

BROKER_SETTINGS = {
    "remote.log.storage.system.enable": "true",
    "remote.log.manager.task.interval.ms": "200",
    "log.retention.check.interval.ms": "200",
    "rlmm.config.remote.log.metadata.topic.num.partitions": "3",
}
"""Tiering on, with tasks and local retention every 200 ms so a test waits
fractions of a second, not Kafka's 30 s and 5 min."""

TOPIC_CONFIG = {
    "remote.storage.enable": "true",
    "segment.bytes": "4096",
    "local.retention.bytes": "1",
}
"""Small segments, and local retention that keeps only the active one once
the others are copied."""


_FILLER = b"abcdefghijklmnopqrstuvwxyz0123456789" * 3


@dataclass(frozen=True)
class Produced:
    offset: int
    key: bytes
    value: bytes
    headers: list[tuple[str, bytes]]
    timestamp: int


def create_topic(
    bootstrap: str, topic: str, replication_factor: int = 1, extra: dict[str, str] | None = None
) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    config = {**TOPIC_CONFIG, **(extra or {})}
    admin.create_topics([NewTopic(topic, 1, replication_factor, config=config)])[topic].result(30)


def produce(bootstrap: str, topic: str, count: int, *, start: int = 0) -> list[Produced]:
    """``count`` records with keys, headers and distinct values, acks=all; their
    offsets and timestamps as the broker acknowledged them."""
    producer = ck.Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 20, "acks": "all"}
    )
    acked: dict[int, Produced] = {}

    def on_delivery(err: Any, msg: Any) -> None:
        assert err is None, err
        # A delivery report carries no headers: they are the ones sent.
        headers = [("n", msg.key()[4:].lstrip(b"0").decode() or "0")]
        acked[msg.offset()] = Produced(
            msg.offset(),
            msg.key(),
            msg.value(),
            [(k, v.encode()) for k, v in headers],
            msg.timestamp()[1],
        )

    base_ms = int(time.time() * 1000)
    for i in range(start, start + count):
        producer.produce(
            topic,
            key=b"key-%06d" % i,
            value=b"value-%06d-" % i + _FILLER[i % 30 : i % 30 + 40],
            headers=[("n", str(i).encode())],  # what on_delivery reconstructs
            timestamp=base_ms + i,
            on_delivery=on_delivery,
        )
        producer.poll(0)
    assert producer.flush(30) == 0
    return [acked[o] for o in sorted(acked)]


def list_offset(address: str, topic: str, timestamp: int) -> tuple[int, int, int]:
    """(error code, offset, leader epoch) of ListOffsets v9 at one node."""
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
    entry = call(address, 2, 9, body)["topics"][0]["partitions"][0]
    return entry["error_code"], entry["offset"], entry["leader_epoch"]


def wait_tiered(
    address: str, topic: str, partition_dir: Path, timeout: float = 60.0
) -> tuple[int, int]:
    """Until the leader at ``address`` (whose log is in ``partition_dir``) has
    copied every rolled segment and local retention kept only the active one:
    (earliest local, latest tiered)."""

    def tiered() -> tuple[int, int] | None:
        segments = local_segments(partition_dir)
        if len(segments) != 1 or segments[0] == 0:
            return None
        _, local_start, _ = list_offset(address, topic, EARLIEST_LOCAL)
        _, tiered_end, _ = list_offset(address, topic, LATEST_TIERED)
        if local_start == segments[0] and tiered_end == local_start - 1:
            return local_start, tiered_end
        return None

    return wait_until(tiered, timeout, f"{topic} tiered up to its active segment")


def read_all(bootstrap: str, topic: str, count: int, **config: Any) -> list[Produced]:
    """Records from offset 0 with confluent-kafka, until ``count`` are read."""
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{topic}-{time.monotonic_ns()}",
            "enable.auto.commit": False,
            **config,
        }
    )
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    got: list[Produced] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append(_received(msg))
    finally:
        consumer.close()
    return got


def _received(msg: Any) -> Produced:
    key, value, offset = msg.key(), msg.value(), msg.offset()
    assert isinstance(key, bytes) and isinstance(value, bytes) and offset is not None
    headers = [(name, bytes(data)) for name, data in (msg.headers() or [])]
    return Produced(offset, key, value, headers, msg.timestamp()[1])


def local_segments(partition_dir: Path) -> list[int]:
    return sorted(int(p.stem) for p in partition_dir.glob("*.log"))


def metadata_events(bootstrap: str, partitions: int) -> list[Any]:
    """Every event of ``__remote_log_metadata``, decoded, in each partition's order."""
    return [decode_remote_log_metadata(v) for v in metadata_values(bootstrap, partitions)]


def metadata_values(bootstrap: str, partitions: int) -> list[bytes]:
    """Every record value of ``__remote_log_metadata``, in each partition's order."""
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"metadata-{time.monotonic_ns()}",
            "enable.auto.commit": False,
        }
    )
    values: list[bytes] = []
    try:
        for partition in range(partitions):
            low, high = consumer.get_watermark_offsets(
                ck.TopicPartition(METADATA_TOPIC, partition), timeout=10
            )
            consumer.assign([ck.TopicPartition(METADATA_TOPIC, partition, low)])
            offset = low
            deadline = time.monotonic() + 30
            while offset < high and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None or msg.error():
                    continue
                value, at = msg.value(), msg.offset()
                assert isinstance(value, bytes) and at is not None
                values.append(value)
                offset = at + 1
    finally:
        consumer.close()
    return values


def wait_for(probe: Callable[[], Any], timeout: float, what: str) -> Any:
    return wait_until(probe, timeout, what)
