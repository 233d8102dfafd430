"""Wire the group coordinator to the ``__consumer_offsets`` partitions of this broker.

The coordinator persists through the two-method ``OffsetsStore`` interface; this
module implements it over the real partition logs: appends are record batches
built here and written like any other append (so fetch waiters and retention see
them), and loading reads a partition back batch by batch.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from samsa.coordinator.config import GroupConfig
from samsa.coordinator.store import Record
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_builder import ControlType, RecordBatchBuilder, parse_control_key
from samsa.protocol.batches.record_reader import decode_records

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "producer",
}
LOAD_READ_BYTES = 4 * 1024 * 1024
APPEND_ACKS_TIMEOUT_MS = 30_000


class LogOffsetsStore:
    """``OffsetsStore`` over the broker's ``__consumer_offsets`` partition logs
    (and, with ``topic``, the same over ``__transaction_state``).

    Transactional offset commits (TxnOffsetCommit) are batches of their
    producer; reading applies them only where their COMMIT marker follows and
    keeps those of transactions still open in ``open_transactions`` for the
    coordinator (see ``coordinator/txn_offsets.py``)."""

    def __init__(
        self, broker: BrokerApi, topic: str = OFFSETS_TOPIC, *, wait_for_replicas: bool = False
    ) -> None:
        self.broker = broker
        self.topic = topic
        self.wait_for_replicas = wait_for_replicas
        self.open_transactions: dict[int, dict[int, list[Record]]] = {}

    async def append(self, partition: int, records: list[Record]) -> None:
        await self._append(partition, records, RecordBatchBuilder(batch_size=1 << 30))

    async def append_transactional(
        self, partition: int, records: list[Record], producer_id: int, producer_epoch: int
    ) -> None:
        builder = RecordBatchBuilder(
            batch_size=1 << 30,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            is_transactional=True,
        )
        await self._append(partition, records, builder)

    async def _append(
        self, partition: int, records: list[Record], builder: RecordBatchBuilder
    ) -> None:
        target = self.broker.replicas.get(self.topic, partition)
        if target is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{self.topic}-{partition} is missing"
            )
        now = time.time_ns() // 1_000_000
        for key, value in records:
            builder.append(now, key, value)
        target.append_internal(builder.build())
        if self.wait_for_replicas:  # acks=all: a new leader must have what was answered
            code = await target.wait_for_acks(target.log_end_offset, APPEND_ACKS_TIMEOUT_MS)
            if code is not ErrorCode.NONE:
                raise KafkaError(code, f"{self.topic}-{partition} did not replicate the append")

    def read(self, partition: int) -> Iterator[Record]:
        source = self.broker.replicas.get(self.topic, partition)
        open_txns: dict[int, list[Record]] = {}
        self.open_transactions[partition] = open_txns
        if source is None:
            return
        log_ = source.log
        offset = log_.log_start_offset
        # The end is read each round: a COMMIT marker written while the coordinator
        # loads (it yields) must be seen, or its offsets would stay pending.
        while offset < log_.log_end_offset:
            data = log_.read(offset, LOAD_READ_BYTES, min_one=True)
            raw = data.records
            chunk = raw if isinstance(raw, (bytes, bytearray)) else raw.read_bytes()
            if not chunk:
                break
            next_offset = offset
            for header, batch in decode_records(chunk, skip_control=False):
                next_offset = header.base_offset + header.last_offset_delta + 1
                if header.is_control:
                    held = open_txns.pop(header.producer_id, [])
                    if batch and _is_commit(batch[0].key):
                        yield from held
                    continue
                for record in batch:
                    if record.offset < offset:
                        continue
                    entry = (record.key or b"", record.value)
                    if header.is_transactional:
                        open_txns.setdefault(header.producer_id, []).append(entry)
                    else:
                        yield entry
            if next_offset <= offset:
                break
            offset = next_offset


def _is_commit(key: bytes | None) -> bool:
    try:
        return parse_control_key(key)[1] is ControlType.COMMIT
    except ValueError:
        return False


async def load_offsets_partition(coordinator: Any, store: LogOffsetsStore, index: int) -> None:
    """Load a partition, then hand back the offsets of its still-open transactions."""
    await coordinator.load(index)
    for producer_id, records in store.open_transactions.pop(index, {}).items():
        coordinator.txn_offsets.restore(index, producer_id, records)


async def start_group_coordinator(broker: BrokerApi) -> None:
    """Create ``__consumer_offsets`` if needed, then build the coordinator and load
    the partitions this broker leads (the others are coordinated elsewhere)."""
    from samsa.coordinator import GroupCoordinator
    from samsa.coordinator.consumer import ConsumerGroupConfig
    from samsa.coordinator.share import ShareGroupConfig
    from samsa.coordinator.streams import StreamsGroupConfig

    config = broker.config
    partitions = int(config["offsets.topic.num.partitions"])
    if OFFSETS_TOPIC not in broker.image.topics:
        configs = {
            **OFFSETS_TOPIC_CONFIGS,
            "segment.bytes": str(config["offsets.topic.segment.bytes"]),
        }
        await broker.create_internal_topic(
            OFFSETS_TOPIC, partitions, int(config["offsets.topic.replication.factor"]), configs
        )
        while OFFSETS_TOPIC not in broker.image.topics:
            await broker.loader.wait_applied(broker.loader.applied_offset)
    partitions = len(broker.image.topics[OFFSETS_TOPIC].partitions)
    group_config = GroupConfig.from_properties(
        {**{k: v for k, v in config.items()}, "offsets.topic.num.partitions": partitions}
    )

    def partition_exists(topic: str, index: int) -> bool:
        image_topic = broker.image.topics.get(topic)
        return image_topic is not None and index in image_topic.partitions

    def topics() -> dict[str, tuple[bytes, int]]:
        return {name: (t.topic_id, len(t.partitions)) for name, t in broker.image.topics.items()}

    store = LogOffsetsStore(broker)
    coordinator = GroupCoordinator(
        store,
        group_config,
        partition_exists=partition_exists,
        consumer_config=ConsumerGroupConfig.from_properties(dict(config.items())),
        share_config=ShareGroupConfig.from_properties(dict(config.items())),
        streams_config=StreamsGroupConfig.from_properties(dict(config.items())),
        group_configs=lambda group_id: broker.image.group_configs(group_id),
        topics=topics,
    )
    started = time.monotonic()
    led = [index for index in range(partitions) if broker.leads(OFFSETS_TOPIC, index)]
    for index in led:
        await load_offsets_partition(coordinator, store, index)
    broker.groups = coordinator
    log.info(
        "group coordinator loaded %d of %d partitions of %s in %.0f ms",
        len(led),
        partitions,
        OFFSETS_TOPIC,
        (time.monotonic() - started) * 1000,
    )


def follow_leadership(broker: BrokerApi) -> None:
    """Load the ``__consumer_offsets`` partitions this broker now leads, unload
    those it no longer leads (the coordinator moves with the leadership)."""
    coordinator = broker.groups
    topic = broker.image.topics.get(OFFSETS_TOPIC)
    if coordinator is None or topic is None:
        return
    for index in topic.partitions:
        leads = broker.leads(OFFSETS_TOPIC, index)
        if leads and not coordinator.owns(index) and not coordinator.is_loading(index):
            log.info("becoming the group coordinator of %s-%d", OFFSETS_TOPIC, index)
            task = asyncio.ensure_future(
                load_offsets_partition(coordinator, coordinator.registry.store, index)
            )
            broker.track(task)
        elif not leads and coordinator.owns(index):
            log.info("no longer the group coordinator of %s-%d", OFFSETS_TOPIC, index)
            coordinator.unload(index)
