"""The transactional ids of the ``__transaction_state`` partitions this broker leads.

Kafka's TransactionStateManager: which partitions this coordinator owns (and
at which coordinator epoch), the ids of those partitions in memory, rebuilt
from the log on ``load`` and dropped on ``unload``, and every change written
to the log before it is kept (``write``).  Apart from the coordinator because
this is where the state lives and how it survives a failover; the coordinator
decides what the next state is (the transaction APIs, timeouts, markers) and
keeps one lock per id around each decision and its write.
"""

from __future__ import annotations

import asyncio
import logging

from samsa.coordinator.partitioning import partition_for
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.internal_records.transaction_records import (
    decode_transaction_key,
    decode_transaction_value,
    encode_transaction_key,
    encode_transaction_value,
)
from samsa.transaction.metadata import TransactionMetadata, TxnState
from samsa.transaction.store import TransactionStore

log = logging.getLogger("samsa.transaction")

S = TxnState
_NOT_COORDINATOR = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR})


class TransactionStateManager:
    def __init__(self, store: TransactionStore, num_partitions: int) -> None:
        self.store = store
        self._num_partitions = num_partitions
        self._txns: dict[str, TransactionMetadata] = {}
        self._owned: dict[int, int] = {}  # partition -> coordinator epoch
        self._loading: set[int] = set()

    # ------------------------------------------------------------ ownership
    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self._num_partitions)

    def owns(self, partition: int) -> bool:
        return partition in self._owned

    def is_loading(self, partition: int) -> bool:
        return partition in self._loading

    def coordinator_error(self, transactional_id: str) -> ErrorCode | None:
        """NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS unless this coordinator serves the id."""
        partition = self.partition_for(transactional_id)
        if partition in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if partition not in self._owned:
            return ErrorCode.NOT_COORDINATOR
        return None

    def coordinator_epoch(self, meta: TransactionMetadata) -> int:
        """The epoch this coordinator owns the id's partition at (its markers carry it)."""
        return self._owned.get(self.partition_for(meta.transactional_id), 0)

    async def load(self, partition: int, coordinator_epoch: int) -> list[TransactionMetadata]:
        """Rebuild the partition's transactional ids from the log; the ids loaded
        in a prepare state, which the coordinator must finish (none when the
        partition is owned or loading already)."""
        if partition in self._owned or partition in self._loading:
            return []
        self._loading.add(partition)
        loaded: dict[str, TransactionMetadata] = {}
        try:
            for n, (key, value) in enumerate(self.store.read(partition), 1):
                try:
                    transactional_id = decode_transaction_key(key)
                    if value is None:
                        loaded.pop(transactional_id, None)
                    else:
                        loaded[transactional_id] = TransactionMetadata.from_record(
                            transactional_id, decode_transaction_value(value)
                        )
                except (DecodeError, ValueError) as exc:
                    log.warning("skipping undecodable __transaction_state record: %s", exc)
                if n % 1000 == 0:
                    await asyncio.sleep(0)
        finally:
            self._loading.discard(partition)
        self._txns.update(loaded)
        self._owned[partition] = max(coordinator_epoch, 0)
        log.info("loaded %d transactional ids of __transaction_state-%d", len(loaded), partition)
        return [meta for meta in loaded.values() if meta.state.is_prepare]

    def unload(self, partition: int) -> None:
        self._owned.pop(partition, None)
        for transactional_id in [t for t in self._txns if self.partition_for(t) == partition]:
            del self._txns[transactional_id]

    # ------------------------------------------------------------ queries
    def transactions(self) -> list[TransactionMetadata]:
        return list(self._txns.values())

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self._txns.get(transactional_id)

    def timed_out(self, now_ms: int) -> list[TransactionMetadata]:
        """Open transactions past their timeout, of the partitions owned."""
        return [
            m
            for m in self._txns.values()
            if m.state is S.ONGOING
            and m.start_ms + m.timeout_ms < now_ms
            and self.owns(self.partition_for(m.transactional_id))
        ]

    def idle(self, now_ms: int, expiration_ms: int) -> list[TransactionMetadata]:
        """Ids with no transaction in progress, unchanged for ``expiration_ms``."""
        return [
            m
            for m in self._txns.values()
            if m.state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)
            and m.last_update_ms + expiration_ms < now_ms
        ]

    # ------------------------------------------------------------ writes
    async def write(self, meta: TransactionMetadata) -> ErrorCode:
        """Append the id's new state to its partition, then keep it (if the
        partition is still owned): NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE
        if the log refused it, and then nothing changed."""
        partition = self.partition_for(meta.transactional_id)
        record = (
            encode_transaction_key(meta.transactional_id),
            encode_transaction_value(meta.to_record(), meta.record_version),
        )
        try:
            await self.store.append(partition, [record])
        except KafkaError as exc:
            log.warning("writing %r to __transaction_state failed: %s", meta.transactional_id, exc)
            if exc.code in _NOT_COORDINATOR:
                return ErrorCode.NOT_COORDINATOR
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if partition in self._owned:
            self._txns[meta.transactional_id] = meta
        return ErrorCode.NONE

    async def forget(self, meta: TransactionMetadata) -> bool:
        """Tombstone an id, so compaction drops it too, and then forget it; False
        if the log refused the tombstone (the id is kept)."""
        partition = self.partition_for(meta.transactional_id)
        try:
            await self.store.append(
                partition, [(encode_transaction_key(meta.transactional_id), None)]
            )
        except KafkaError as exc:
            log.warning("expiring %r failed: %s", meta.transactional_id, exc)
            return False
        del self._txns[meta.transactional_id]
        return True
