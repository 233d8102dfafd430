"""``__remote_log_metadata`` on this broker: created on first use, published to, replayed.

Kafka's TopicBasedRemoteLogMetadataManager runs a producer and a consumer of
the topic inside each broker.  Here the broker is both, without clients:

* ``ensure_topic`` creates the topic when the first tiered partition needs it
  (``cleanup.policy=delete``, ``retention.ms`` -1: the topic is the only
  record of which remote segments exist, so it is never cut), with
  ``rlmm.config.remote.log.metadata.topic.*`` partitions and replication.
* ``produce`` appends one record value (null key) to a metadata partition and
  waits until every in-sync replica has it (acks=all): on the partition's
  leader if that is this broker, else with a Produce request to the leader.
* One replay task per metadata partition this broker needs reads it in offset
  order, up to its high watermark (only committed events are ever applied),
  and feeds ``RemoteLogMetadataManager.apply_record``: from the local replica
  when this broker hosts one, else with Fetch requests to the leader
  (``metadata_reads``).
* ``load`` starts keeping a user partition's metadata: a replay already past
  the partition's older events replays them for that partition alone (under
  the replay's lock, so events stay in order), and the partition is marked
  initialized once the replay reached the end the topic had when loading
  began, as Kafka's consumer task does before a copy or a read may use it.
  A load that takes longer than
  ``rlmm.config.remote.log.metadata.initialization.retry.max.timeout.ms``
  raises ``MetadataNotReadyError`` saying where the replay stands (the
  caller reports it and tries again; Kafka's broker would exit instead).

Blocking reads of the local replica run in worker threads; everything else
is on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.net import ChannelError, ChannelPool
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.replication.tiering.metadata_reads import MetadataReader
from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.metadata.model import TopicIdPartition
from samsa.tiered.metadata.partitioner import METADATA_TOPIC
from samsa.tiered.metadata.records import decode_remote_log_metadata
from samsa.tiered.store.base import RetriableRemoteStorageError

__all__ = ["MetadataNotReadyError", "MetadataTopic", "MetadataTopicSettings"]

log = logging.getLogger(__name__)

PRODUCE_API_KEY, PRODUCE_VERSION = 0, 9
RETRY_BACKOFF_S = 0.05


@dataclass(frozen=True, slots=True)
class MetadataTopicSettings:
    """``rlmm.config.remote.log.metadata.*`` (Kafka's TopicBasedRemoteLogMetadataManager's)."""

    partitions: int = 50
    replication_factor: int = 3
    retention_ms: int = -1
    produce_timeout_ms: int = 30_000
    consume_wait_ms: int = 120_000
    """How long a publish waits to see its event replayed here."""
    initialization_timeout_ms: int = 120_000
    """How long loading a partition's metadata may take before it is reported stuck."""
    initialization_retry_ms: int = 100
    """The pause before a failed load is tried again."""


class MetadataNotReadyError(RetriableRemoteStorageError):
    """A partition's remote metadata could not be replayed in time; the
    message says how far the replay got, and what it waits for."""


class MetadataTopic:
    """Publishes to and replays ``__remote_log_metadata`` (see the module doc)."""

    def __init__(
        self,
        *,
        node_id: int,
        replicas: Any,
        image: Callable[[], MetadataImage],
        create_topic: Callable[[str, int, int, dict[str, str]], Awaitable[None]],
        wait_for_image: Callable[[], Awaitable[None]],
        channels: ChannelPool,
        settings: MetadataTopicSettings,
    ) -> None:
        self.node_id = node_id
        self._replicas = replicas
        self._image = image
        self._create_topic = create_topic
        self._wait_for_image = wait_for_image
        self._channels = channels
        self.settings = settings
        self.manager = RemoteLogMetadataManager(
            self.produce, settings.partitions, consume_wait_ms=settings.consume_wait_ms
        )
        self.reader = MetadataReader(
            node_id=node_id, replicas=replicas, leader=self._leader, channels=channels
        )
        self._replays: dict[int, asyncio.Task[None]] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._ready: asyncio.Future[None] | None = None

    # ------------------------------------------------------------------ the topic
    async def ensure_topic(self) -> None:
        """Create the topic if it is missing (once; concurrent callers share it)."""
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._create())
        try:
            await asyncio.shield(self._ready)
        except Exception:
            self._ready = None  # the next caller tries again
            raise

    async def _create(self) -> None:
        if METADATA_TOPIC not in self._image().topics:
            settings = self.settings
            await self._create_topic(
                METADATA_TOPIC,
                settings.partitions,
                settings.replication_factor,
                {"cleanup.policy": "delete", "retention.ms": str(settings.retention_ms)},
            )
            while METADATA_TOPIC not in self._image().topics:
                await self._wait_for_image()
        self.manager.partitions = len(self._image().topics[METADATA_TOPIC].partitions)

    def _leader(self, partition: int) -> int:
        topic = self._image().topics.get(METADATA_TOPIC)
        registration = None if topic is None else topic.partitions.get(partition)
        return -1 if registration is None else registration.leader

    # ------------------------------------------------------------------ publishing
    async def produce(self, partition: int, value: bytes) -> int:
        """Append ``value`` to metadata partition ``partition`` with acks=all;
        its offset.  Leadership moves are retried until the produce timeout,
        then RetriableRemoteStorageError (the caller's task tries again later)."""
        deadline = time.monotonic() + self.settings.produce_timeout_ms / 1000
        builder = RecordBatchBuilder(batch_size=1 << 30)
        builder.append(time.time_ns() // 1_000_000, None, value)
        batch = builder.build()
        last: Exception | None = None
        while time.monotonic() < deadline:
            leader = self._leader(partition)
            try:
                if leader == self.node_id:
                    return await self._produce_here(partition, batch)
                if leader >= 0:
                    return await self._produce_at(leader, partition, batch)
            except (KafkaError, ChannelError) as exc:
                last = exc
                log.debug("publishing to %s-%d: %s", METADATA_TOPIC, partition, exc)
            await asyncio.sleep(RETRY_BACKOFF_S)
        raise RetriableRemoteStorageError(
            f"could not publish to {METADATA_TOPIC}-{partition}: {last or 'no leader'}"
        )

    async def _produce_here(self, partition: int, batch: bytes | bytearray) -> int:
        target = self._replicas.get(METADATA_TOPIC, partition)
        if target is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{METADATA_TOPIC}-{partition}")
        offset = target.append_internal(bytearray(batch))
        code = await target.wait_for_acks(offset + 1, self.settings.produce_timeout_ms)
        if code is not ErrorCode.NONE:
            raise KafkaError(
                code, f"{METADATA_TOPIC}-{partition} did not replicate offset {offset}"
            )
        return int(offset)

    async def _produce_at(self, leader: int, partition: int, batch: bytes | bytearray) -> int:
        channel = self._channel(leader)
        body = {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": self.settings.produce_timeout_ms,
            "topic_data": [
                {"name": METADATA_TOPIC, "partition_data": [{"index": partition, "records": batch}]}
            ],
        }
        answer = await channel.request(
            PRODUCE_API_KEY,
            PRODUCE_VERSION,
            body,
            timeout_ms=self.settings.produce_timeout_ms + 5000,
        )
        entry = answer["responses"][0]["partition_responses"][0]
        code = ErrorCode(entry["error_code"])
        if code is not ErrorCode.NONE:
            raise KafkaError(code, f"producing to {METADATA_TOPIC}-{partition} at {leader}")
        return int(entry["base_offset"])

    def _channel(self, broker_id: int) -> Any:
        channel = self._channels.channel(broker_id)
        if channel is None:
            raise ChannelError(f"no address for broker {broker_id}")
        return channel

    # ------------------------------------------------------------------ replay
    async def load(self, partition: TopicIdPartition) -> None:
        """Keep ``partition``'s metadata from now on; returns once it is
        replayed to the end the topic had now, or raises MetadataNotReadyError
        after ``initialization_timeout_ms`` (see the module doc)."""
        timeout_ms = self.settings.initialization_timeout_ms
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                await self._load(partition)
        except TimeoutError:
            raise MetadataNotReadyError(
                f"the remote log metadata of {partition} was not replayed within "
                f"{timeout_ms} ms: {self.progress(partition)}"
            ) from None

    def progress(self, partition: TopicIdPartition) -> str:
        """Where the replay of ``partition``'s metadata partition stands, for
        a person reading why it is stuck."""
        if METADATA_TOPIC not in self._image().topics:
            return f"{METADATA_TOPIC} does not exist yet (is a controller reachable?)"
        metadata_partition = self.manager.metadata_partition(partition)
        name = f"{METADATA_TOPIC}-{metadata_partition}"
        applied = self.manager.applied_offset(metadata_partition)
        leader = self._leader(metadata_partition)
        local = self._replicas.get(METADATA_TOPIC, metadata_partition)
        where = (
            f"replayed from the local replica (high watermark {local.high_watermark})"
            if local is not None
            else f"read from its leader, broker {leader}"
            if leader >= 0
            else "which has no leader"
        )
        return f"{name} applied up to offset {applied}, {where}"

    async def _load(self, partition: TopicIdPartition) -> None:
        await self.ensure_topic()
        manager = self.manager
        metadata_partition = manager.metadata_partition(partition)
        lock = self._locks.setdefault(metadata_partition, asyncio.Lock())
        async with lock:
            manager.load_partition(partition)
            self._ensure_replay(metadata_partition)
            upto = manager.applied_offset(metadata_partition)
            if upto > 0:
                await self._replay_one(metadata_partition, partition, upto)
            target = await self.reader.high_watermark(
                metadata_partition, manager.applied_offset(metadata_partition)
            )
        await manager.wait_applied(metadata_partition, target)
        manager.load_partition(partition)  # a partition delete event may have dropped it
        manager.mark_initialized(partition)
        log.info(
            "remote log metadata of %s replayed (%s-%d up to %d)",
            partition,
            METADATA_TOPIC,
            metadata_partition,
            target,
        )

    def unload(self, partition: TopicIdPartition) -> None:
        self.manager.stop_partition(partition)

    def _ensure_replay(self, metadata_partition: int) -> None:
        task = self._replays.get(metadata_partition)
        if task is None or task.done():
            self._replays[metadata_partition] = asyncio.ensure_future(
                self._replay(metadata_partition)
            )

    async def _replay_one(
        self, metadata_partition: int, partition: TopicIdPartition, upto: int
    ) -> None:
        """Events of ``partition`` below ``upto`` (the replay passed them before
        the partition was loaded), applied to it alone, in order."""
        offset = 0
        while offset < upto:
            values, offset, _ = await self.reader.read(metadata_partition, offset, wait=False)
            for record_offset, value in values:
                if record_offset >= upto or value is None:
                    continue
                try:
                    event = decode_remote_log_metadata(value)
                except DecodeError:
                    continue
                if event.topic_id_partition == partition:
                    self.manager.store.apply(event)
            if not values and offset < upto:
                await asyncio.sleep(RETRY_BACKOFF_S)

    async def _replay(self, metadata_partition: int) -> None:
        manager = self.manager
        lock = self._locks.setdefault(metadata_partition, asyncio.Lock())
        while True:
            try:
                offset = manager.applied_offset(metadata_partition)
                values, next_offset, _ = await self.reader.read(
                    metadata_partition, offset, wait=True
                )
                async with lock:
                    for record_offset, value in values:
                        await manager.apply_record(metadata_partition, record_offset, value)
                    if next_offset > manager.applied_offset(metadata_partition):
                        # batches without records (markers) still move the replay on
                        await manager.apply_record(metadata_partition, next_offset - 1, None)
            except asyncio.CancelledError:
                raise
            except (KafkaError, ChannelError, OSError) as exc:
                log.debug("replaying %s-%d: %s", METADATA_TOPIC, metadata_partition, exc)
                await asyncio.sleep(RETRY_BACKOFF_S * 10)
            except Exception:
                log.exception("replaying %s-%d failed", METADATA_TOPIC, metadata_partition)
                await asyncio.sleep(1.0)
