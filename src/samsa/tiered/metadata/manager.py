"""The remote log metadata manager: publish events to ``__remote_log_metadata``, apply what it holds.

Kafka's TopicBasedRemoteLogMetadataManager, without the Kafka clients: the
broker gives it a ``produce`` coroutine (append one record value to a
partition of ``__remote_log_metadata`` with acks=all, return its offset) and
feeds it every record of the metadata partitions it follows, in order
(``apply_record``, from the broker's own replica of the topic).  So there is
one way into the state, the replay, on the leader of a user partition as on
every other replica of it, and a restart rebuilds the state by replaying the
topic from its start.

``publish`` returns once the event is both durable in the topic and applied
here (Kafka's "wait till consumption catches up"): the copy task may then rely
on the cache (a segment it finished copying is readable) and local retention
may delete what the event says is copied.

Threading: everything runs on the broker's event loop; ``produce`` is the
broker's, and nothing here blocks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from samsa.errors import DecodeError
from samsa.tiered.metadata.cache import RemoteLogMetadataCache
from samsa.tiered.metadata.model import RemoteLogMetadata, TopicIdPartition
from samsa.tiered.metadata.partition_store import RemotePartitionMetadataStore
from samsa.tiered.metadata.partitioner import DEFAULT_METADATA_TOPIC_PARTITIONS, metadata_partition
from samsa.tiered.metadata.records import decode_remote_log_metadata, encode_remote_log_metadata
from samsa.tiered.store.base import RetriableRemoteStorageError

__all__ = ["Produce", "RemoteLogMetadataManager"]

logger = logging.getLogger(__name__)

Produce = Callable[[int, bytes], Awaitable[int]]
"""Append a record value (null key) to a ``__remote_log_metadata`` partition
with acks=all; the record's offset.  Raises when it cannot."""


class RemoteLogMetadataManager:
    """Publishes and applies remote log metadata for the partitions this broker holds."""

    def __init__(
        self,
        produce: Produce,
        partitions: int = DEFAULT_METADATA_TOPIC_PARTITIONS,
        *,
        consume_wait_ms: int = 120_000,
    ) -> None:
        """``consume_wait_ms``: Kafka's ``remote.log.metadata.consume.wait.ms``,
        the longest ``publish`` waits to see its event applied here."""
        self._produce = produce
        self.partitions = partitions
        self.consume_wait_ms = consume_wait_ms
        self.store = RemotePartitionMetadataStore()
        self._applied: dict[int, int] = {}  # metadata partition -> next offset to apply
        self._caught_up = asyncio.Condition()

    # -- partitions -------------------------------------------------------

    def metadata_partition(self, partition: TopicIdPartition) -> int:
        return metadata_partition(partition, self.partitions)

    def load_partition(self, partition: TopicIdPartition) -> RemoteLogMetadataCache:
        """Start keeping ``partition``'s metadata; the broker must then replay its
        metadata partition from the start before calling ``mark_initialized``."""
        return self.store.maybe_load_partition(partition)

    def mark_initialized(self, partition: TopicIdPartition) -> None:
        self.store.mark_initialized(partition)

    def is_ready(self, partition: TopicIdPartition) -> bool:
        """Kafka's ``isReady``: the partition's metadata is replayed; copy and
        expiration tasks skip a run until then."""
        return self.store.is_initialized(partition)

    def cache(self, partition: TopicIdPartition) -> RemoteLogMetadataCache | None:
        return self.store.cache(partition)

    def stop_partition(self, partition: TopicIdPartition) -> None:
        self.store.clear(partition)

    # -- the two directions -------------------------------------------------

    async def publish(self, event: RemoteLogMetadata) -> None:
        """Write ``event`` to the topic and wait until it is applied here; a
        replay that does not get there within ``consume_wait_ms`` raises
        RetriableRemoteStorageError (the task tries again on its next run)."""
        target = self.metadata_partition(event.topic_id_partition)
        offset = await self._produce(target, encode_remote_log_metadata(event))
        try:
            async with asyncio.timeout(self.consume_wait_ms / 1000), self._caught_up:
                await self._caught_up.wait_for(lambda: self._applied.get(target, 0) > offset)
        except TimeoutError:
            raise RetriableRemoteStorageError(
                f"{event.topic_id_partition}: the event published at offset {offset} of "
                f"__remote_log_metadata-{target} was not replayed here within "
                f"{self.consume_wait_ms} ms (applied up to {self._applied.get(target, 0)})"
            ) from None

    async def apply_record(self, partition: int, offset: int, value: bytes | None) -> None:
        """Apply the record at ``offset`` of metadata partition ``partition``.

        Records come in offset order; one already applied is skipped (a replay
        that overlaps).  A record that does not decode is logged and skipped,
        as Kafka's consumer task does: one bad record must not stop the tier."""
        if offset < self._applied.get(partition, 0):
            return
        if value is not None:
            try:
                self.store.apply(decode_remote_log_metadata(value))
            except DecodeError as exc:
                logger.error(
                    "skipping record %d of %s-%d: %s",
                    offset,
                    "__remote_log_metadata",
                    partition,
                    exc,
                )
        async with self._caught_up:
            self._applied[partition] = offset + 1
            self._caught_up.notify_all()

    async def wait_applied(self, partition: int, offset: int) -> None:
        """Until metadata partition ``partition`` is applied up to ``offset`` (exclusive)."""
        async with self._caught_up:
            await self._caught_up.wait_for(lambda: self._applied.get(partition, 0) >= offset)

    def applied_offset(self, partition: int) -> int:
        """The next offset of metadata partition ``partition`` to apply."""
        return self._applied.get(partition, 0)
