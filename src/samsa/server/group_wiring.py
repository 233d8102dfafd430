"""Wire the group coordinator to the ``__consumer_offsets`` partitions of this broker.

The coordinator persists through the two-method ``OffsetsStore`` interface; this
module implements it over the real partition logs: appends are record batches
built here and written like any other append (so fetch waiters and retention see
them), and loading reads a partition back batch by batch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from samsa.coordinator.config import GroupConfig
from samsa.coordinator.store import Record
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.record_builder import RecordBatchBuilder
from samsa.protocol.record_reader import decode_records

if TYPE_CHECKING:
    from samsa.server.broker import Broker

log = logging.getLogger("samsa.server")

OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "producer",
}
LOAD_READ_BYTES = 4 * 1024 * 1024


class LogOffsetsStore:
    """``OffsetsStore`` over the broker's ``__consumer_offsets`` partition logs."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    async def append(self, partition: int, records: list[Record]) -> None:
        target = self.broker.replicas.get(OFFSETS_TOPIC, partition)
        if target is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{OFFSETS_TOPIC}-{partition} is missing"
            )
        now = time.time_ns() // 1_000_000
        builder = RecordBatchBuilder(batch_size=1 << 30)
        for key, value in records:
            builder.append(now, key, value)
        target.append_internal(builder.build())

    def read(self, partition: int) -> Iterator[Record]:
        source = self.broker.replicas.get(OFFSETS_TOPIC, partition)
        if source is None:
            return
        log_ = source.log
        offset = log_.log_start_offset
        end = log_.log_end_offset
        while offset < end:
            data = log_.read(offset, LOAD_READ_BYTES, min_one=True)
            raw = data.records
            chunk = raw if isinstance(raw, (bytes, bytearray)) else raw.read_bytes()
            if not chunk:
                break
            next_offset = offset
            for header, batch in decode_records(chunk, skip_control=True):
                for record in batch:
                    if record.offset >= offset:
                        yield record.key or b"", record.value
                next_offset = header.base_offset + header.last_offset_delta + 1
            if next_offset <= offset:
                break
            offset = next_offset


async def start_group_coordinator(broker: Broker) -> None:
    """Create ``__consumer_offsets`` if needed, then build and load the coordinator."""
    from samsa.coordinator import GroupCoordinator

    config = broker.config
    partitions = int(config["offsets.topic.num.partitions"])
    if OFFSETS_TOPIC not in broker.image.topics:
        configs = {
            **OFFSETS_TOPIC_CONFIGS,
            "segment.bytes": str(config["offsets.topic.segment.bytes"]),
        }
        broker.topics.create_topic(OFFSETS_TOPIC, partitions, -1, configs)
    else:
        partitions = broker.image.topics[OFFSETS_TOPIC].partitions
    group_config = GroupConfig.from_properties(
        {**{k: v for k, v in config.items()}, "offsets.topic.num.partitions": partitions}
    )

    def partition_exists(topic: str, index: int) -> bool:
        return broker.replicas.get(topic, index) is not None

    coordinator = GroupCoordinator(
        LogOffsetsStore(broker), group_config, partition_exists=partition_exists
    )
    started = time.monotonic()
    for index in range(partitions):
        await coordinator.load(index)
    broker.groups = coordinator
    log.info(
        "group coordinator loaded %d partitions of %s in %.0f ms",
        partitions,
        OFFSETS_TOPIC,
        (time.monotonic() - started) * 1000,
    )
