"""Logs, partitions, registrations and batches for the replication tests."""

from __future__ import annotations

from pathlib import Path

from samsa.controller.image.registrations import PartitionRegistration
from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.replication.partition import Partition
from samsa.storage.log import Log
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.topic_config.log_config import LogConfig

TOPIC = "orders"
TOPIC_ID = bytes(range(16))


class ManualClock:
    """Milliseconds that move only when the test says so."""

    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


def make_batch(
    count: int = 1,
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    tag: str = "v",
    timestamp: int = 1_000,
) -> bytearray:
    """One v2 batch of ``count`` records, as a producer sends it (base offset 0)."""
    builder = RecordBatchBuilder(
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence
    )
    for i in range(count):
        builder.append(timestamp + i, f"key-{i}".encode(), f"{tag}-{i}".encode())
    return bytearray(builder.build())


def registration(
    replicas: tuple[int, ...] = (1, 2, 3),
    isr: tuple[int, ...] | None = None,
    leader: int = 1,
    leader_epoch: int = 0,
    partition_epoch: int = 0,
) -> PartitionRegistration:
    return PartitionRegistration(
        replicas, replicas if isr is None else isr, leader, leader_epoch, partition_epoch
    )


def open_log(directory: Path, clock: ManualClock, **config: object) -> Log:
    return Log.open(directory, TOPIC, 0, LogConfig(**config), clock=clock)


def make_partition(
    tmp_path: Path,
    clock: ManualClock,
    *,
    node_id: int = 1,
    name: str = "p",
    lag_ms: int = 10_000,
    **config: object,
) -> Partition:
    directory = tmp_path / name / f"{TOPIC}-0"
    log = open_log(directory, clock, **config)
    partition = Partition(
        TOPIC,
        0,
        log,
        ProducerStateManager(directory),
        clock,
        local_broker_id=node_id,
        high_watermark=0,
        replica_lag_time_max_ms=lag_ms,
    )
    partition.topic_id = TOPIC_ID
    return partition


def log_bytes(log: Log) -> bytes:
    """Every batch of the log, as stored (for byte-for-byte comparison)."""
    data = log.read(log.log_start_offset, 1 << 30)
    records = data.records
    return records if isinstance(records, bytes) else records.read_bytes()


def batch_epochs(log: Log) -> list[tuple[int, int]]:
    """(base offset, partition leader epoch) of every batch."""
    return [(h.base_offset, h.partition_leader_epoch) for h in log.iter_batch_headers()]


def count_batches(buf: bytes) -> int:
    return sum(1 for _ in iter_batches(memoryview(buf)))
