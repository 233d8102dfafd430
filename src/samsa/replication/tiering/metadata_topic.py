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
  when this broker hosts one (woken by the purgatory on appends and
  watermark moves), else with Fetch requests to the leader.
* ``load`` starts keeping a user partition's metadata: a replay already past
  the partition's older events replays them for that partition alone (under
  the replay's lock, so events stay in order), and the partition is marked
  initialized once the replay reached the end the topic had when loading
  began, as Kafka's consumer task does before a copy or a read may use it.

Blocking reads of the local replica run in worker threads; everything else
is on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.net import ChannelError, ChannelPool
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_records
from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.partition import Partition
from samsa.storage.log import Log
from samsa.tiered.metadata.manager import RemoteLogMetadataManager
from samsa.tiered.metadata.model import TopicIdPartition
from samsa.tiered.metadata.partitioner import METADATA_TOPIC
from samsa.tiered.metadata.records import decode_remote_log_metadata
from samsa.tiered.store.base import RetriableRemoteStorageError

__all__ = ["MetadataTopic", "MetadataTopicSettings"]

log = logging.getLogger(__name__)

PRODUCE_API_KEY, PRODUCE_VERSION = 0, 9
FETCH_API_KEY, FETCH_VERSION = 1, 12
READ_BYTES = 1024 * 1024
RETRY_BACKOFF_S = 0.05
LOCAL_WAKE_S = 0.2
"""A follower replica's watermark moves with fetch answers that may bring no
bytes (nothing wakes a waiter then): the replay looks again this often."""


@dataclass(frozen=True, slots=True)
class MetadataTopicSettings:
    """``rlmm.config.remote.log.metadata.topic.*``."""

    partitions: int = 50
    replication_factor: int = 3
    retention_ms: int = -1
    produce_timeout_ms: int = 30_000


class _AnyChange(FetchWaiter):
    """Wakes on an append or a watermark move of the partition it is parked on."""

    def on_append(self, size: int, *, standalone: bool) -> None:
        self.wake()

    def on_visible(self, size: int) -> None:
        self.wake()


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
        self.manager = RemoteLogMetadataManager(self.produce, settings.partitions)
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
        replayed to the end the topic had now (see the module doc)."""
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
            target = await self._high_watermark(metadata_partition)
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
            values, offset, _ = await self._read(metadata_partition, offset, wait=False)
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
                values, next_offset, _ = await self._read(metadata_partition, offset, wait=True)
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

    async def _high_watermark(self, metadata_partition: int) -> int:
        local = self._replicas.get(METADATA_TOPIC, metadata_partition)
        if local is not None:
            return int(local.high_watermark)
        _, _, high_watermark = await self._read(
            metadata_partition, self.manager.applied_offset(metadata_partition), wait=False
        )
        return high_watermark

    async def _read(
        self, metadata_partition: int, offset: int, *, wait: bool
    ) -> tuple[list[tuple[int, bytes | None]], int, int]:
        """(offset, value) of the records from ``offset`` below the high
        watermark, the offset after them, and the high watermark."""
        local = self._replicas.get(METADATA_TOPIC, metadata_partition)
        if local is not None:
            return await self._read_local(local, offset, wait=wait)
        leader = self._leader(metadata_partition)
        if leader < 0 or leader == self.node_id:
            await asyncio.sleep(RETRY_BACKOFF_S * 10)  # metadata catching up
            return [], offset, offset
        return await self._read_remote(leader, metadata_partition, offset, wait=wait)

    async def _read_local(
        self, partition: Partition, offset: int, *, wait: bool
    ) -> tuple[list[tuple[int, bytes | None]], int, int]:
        high_watermark = partition.high_watermark
        offset = max(offset, partition.log.log_start_offset)
        if offset < high_watermark:
            values, next_offset = await asyncio.to_thread(
                _read_values, partition.log, offset, high_watermark
            )
            return values, next_offset, high_watermark
        if wait:
            key = [(partition.topic, partition.index)]
            waiter = _AnyChange(1)
            self._replicas.park(key, waiter)
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(waiter.future), LOCAL_WAKE_S)
            finally:
                self._replicas.unpark(key, waiter)
        return [], offset, high_watermark

    async def _read_remote(
        self, leader: int, metadata_partition: int, offset: int, *, wait: bool
    ) -> tuple[list[tuple[int, bytes | None]], int, int]:
        body = {
            "cluster_id": None,
            "replica_id": -1,
            "max_wait_ms": 500 if wait else 0,
            "min_bytes": 1 if wait else 0,
            "max_bytes": READ_BYTES,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic": METADATA_TOPIC,
                    "partitions": [
                        {
                            "partition": metadata_partition,
                            "current_leader_epoch": -1,
                            "fetch_offset": offset,
                            "last_fetched_epoch": -1,
                            "log_start_offset": -1,
                            "partition_max_bytes": READ_BYTES,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        answer = await self._channel(leader).request(FETCH_API_KEY, FETCH_VERSION, body)
        entry = answer["responses"][0]["partitions"][0]
        code = ErrorCode(entry["error_code"])
        if code is ErrorCode.OFFSET_OUT_OF_RANGE and entry["log_start_offset"] > offset:
            return [], int(entry["log_start_offset"]), int(entry["high_watermark"])
        if code is not ErrorCode.NONE:
            raise KafkaError(code, f"fetching {METADATA_TOPIC}-{metadata_partition} at {leader}")
        values, next_offset = _decode_values(entry.get("records") or b"", offset)
        return values, next_offset, int(entry["high_watermark"])


def _read_values(
    log_: Log, offset: int, high_watermark: int
) -> tuple[list[tuple[int, bytes | None]], int]:
    """Records of ``log_`` from ``offset`` below ``high_watermark`` (worker thread)."""
    data = log_.read(offset, READ_BYTES, min_one=True, max_offset=high_watermark)
    raw = data.records
    chunk = raw if isinstance(raw, (bytes, bytearray)) else raw.read_bytes()
    return _decode_values(chunk, offset)


def _decode_values(
    chunk: bytes | bytearray | memoryview, offset: int
) -> tuple[list[tuple[int, bytes | None]], int]:
    values: list[tuple[int, bytes | None]] = []
    next_offset = offset
    for header, records in decode_records(bytes(chunk), skip_control=False):
        next_offset = max(next_offset, header.base_offset + header.last_offset_delta + 1)
        if header.is_control:
            continue
        values.extend((r.offset, r.value) for r in records if r.offset >= offset)
    return values, next_offset
