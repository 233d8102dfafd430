"""Reading a ``__remote_log_metadata`` partition, from this broker's replica or from its leader.

The replay of the remote log metadata (``metadata_topic``) reads each metadata
partition in offset order, up to its high watermark only (only committed
events are ever applied).  A broker that hosts a replica of the partition
reads its own log, in a worker thread, and waits for the next append or
watermark move in the replica manager's purgatory.  A broker that hosts
none (more brokers than the topic's replication factor) sends Fetch requests
to the partition's leader, as any consumer would, with ``replica_id`` -1.
Both return the same thing: ``(offset, value)`` of the records after an
offset, the offset after them, and the high watermark.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from samsa.errors import ErrorCode, KafkaError
from samsa.net import ChannelError, ChannelPool
from samsa.protocol.batches.record_reader import decode_records
from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.partition import Partition
from samsa.storage.log import Log
from samsa.tiered.metadata.partitioner import METADATA_TOPIC

__all__ = ["READ_BYTES", "MetadataReader", "Records"]

FETCH_API_KEY, FETCH_VERSION = 1, 12
READ_BYTES = 1024 * 1024
LOCAL_WAKE_S = 0.2
"""A follower replica's watermark moves with fetch answers that may bring no
bytes (nothing wakes a waiter then): the replay looks again this often."""
NO_LEADER_WAIT_S = 0.5

Records = tuple[list[tuple[int, bytes | None]], int, int]
"""(offset, value) of the records read, the offset after them, the high watermark."""


class _AnyChange(FetchWaiter):
    """Wakes on an append or a watermark move of the partition it is parked on."""

    def on_append(self, size: int, *, standalone: bool) -> None:
        self.wake()

    def on_visible(self, size: int) -> None:
        self.wake()


class MetadataReader:
    """Reads metadata partitions for the replay (see the module doc)."""

    def __init__(
        self, *, node_id: int, replicas: Any, leader: Callable[[int], int], channels: ChannelPool
    ) -> None:
        """``leader``: the metadata partition's leader as this broker's image has it (-1: none)."""
        self.node_id = node_id
        self._replicas = replicas
        self._leader = leader
        self._channels = channels

    def hosts(self, metadata_partition: int) -> bool:
        """Whether this broker has a replica of the metadata partition."""
        return self._replicas.get(METADATA_TOPIC, metadata_partition) is not None

    async def read(self, metadata_partition: int, offset: int, *, wait: bool) -> Records:
        """Records from ``offset`` below the high watermark; with ``wait``, a
        read at the end waits a little for more (the replay's poll)."""
        local = self._replicas.get(METADATA_TOPIC, metadata_partition)
        if local is not None:
            return await self._read_local(local, offset, wait=wait)
        leader = self._leader(metadata_partition)
        if leader < 0 or leader == self.node_id:
            await asyncio.sleep(NO_LEADER_WAIT_S)  # metadata catching up
            return [], offset, offset
        return await self._read_remote(leader, metadata_partition, offset, wait=wait)

    async def high_watermark(self, metadata_partition: int, offset: int) -> int:
        local = self._replicas.get(METADATA_TOPIC, metadata_partition)
        if local is not None:
            return int(local.high_watermark)
        _, _, high_watermark = await self.read(metadata_partition, offset, wait=False)
        return high_watermark

    async def _read_local(self, partition: Partition, offset: int, *, wait: bool) -> Records:
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
    ) -> Records:
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
        channel = self._channels.channel(leader)
        if channel is None:
            raise ChannelError(f"no address for broker {leader}")
        answer = await channel.request(FETCH_API_KEY, FETCH_VERSION, body)
        entry = answer["responses"][0]["partitions"][0]
        code = ErrorCode(entry["error_code"])
        if code is ErrorCode.OFFSET_OUT_OF_RANGE and entry["log_start_offset"] > offset:
            return [], int(entry["log_start_offset"]), int(entry["high_watermark"])
        if code is not ErrorCode.NONE:
            raise KafkaError(code, f"fetching {METADATA_TOPIC}-{metadata_partition} at {leader}")
        values, next_offset = decode_values(entry.get("records") or b"", offset)
        return values, next_offset, int(entry["high_watermark"])


def _read_values(
    log_: Log, offset: int, high_watermark: int
) -> tuple[list[tuple[int, bytes | None]], int]:
    """Records of ``log_`` from ``offset`` below ``high_watermark`` (worker thread)."""
    data = log_.read(offset, READ_BYTES, min_one=True, max_offset=high_watermark)
    raw = data.records
    chunk = raw if isinstance(raw, (bytes, bytearray)) else raw.read_bytes()
    return decode_values(chunk, offset)


def decode_values(
    chunk: bytes | bytearray | memoryview, offset: int
) -> tuple[list[tuple[int, bytes | None]], int]:
    """(offset, value) of the data records in ``chunk`` from ``offset`` on,
    and the offset after its last batch (control batches included)."""
    values: list[tuple[int, bytes | None]] = []
    next_offset = offset
    for header, records in decode_records(bytes(chunk), skip_control=False):
        next_offset = max(next_offset, header.base_offset + header.last_offset_delta + 1)
        if header.is_control:
            continue
        values.extend((r.offset, r.value) for r in records if r.offset >= offset)
    return values, next_offset
