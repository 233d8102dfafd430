"""TxnOffsetCommit: offsets committed inside a transaction, visible only once it commits.

A transactional producer commits its consumer's offsets with the records it
produced (``send_offsets_to_transaction``).  As in Kafka the offsets are
written at once to ``__consumer_offsets`` -- as a transactional batch of the
producer, so the log holds them durably -- but the group sees them only when
the transaction's COMMIT marker reaches that partition (:meth:`complete`); an
ABORT drops them.  Loading applies the same rule to the batches it reads
(``LogOffsetsStore.read``), and hands back those of transactions still open
(:meth:`restore`).
"""

from __future__ import annotations

from typing import Protocol

from samsa.coordinator.offsets import OffsetManager, OffsetToCommit
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import Record, commit_error
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.internal_records.group_records import (
    encode_offset_commit_key,
    encode_offset_commit_value,
)

__all__ = ["TransactionalOffsetsStore", "TxnOffsets"]

TopicPartition = tuple[str, int]


class TransactionalOffsetsStore(Protocol):
    async def append_transactional(
        self, partition: int, records: list[Record], producer_id: int, producer_epoch: int
    ) -> None:
        """Append ``records`` as one transactional batch of the producer."""
        ...


class TxnOffsets:
    def __init__(self, registry: GroupRegistry, offsets: OffsetManager) -> None:
        self.registry = registry
        self.offsets = offsets
        self._pending: dict[tuple[int, int], list[Record]] = {}

    async def commit(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: list[OffsetToCommit],
    ) -> dict[TopicPartition, ErrorCode]:
        results, valid = self.offsets.admit(
            group_id, generation_id, member_id, group_instance_id, offsets, transactional=True
        )
        if valid is None:
            return results
        group = self.registry.get_or_create(group_id)
        now = self.registry.time_ms()
        records: list[Record] = []
        limit = self.registry.config.offset_metadata_max_bytes
        for o in valid:
            metadata = o.metadata or ""
            if len(metadata.encode()) > limit:
                results[(o.topic, o.partition)] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                continue
            key = encode_offset_commit_key(group_id, o.topic, o.partition)
            records.append(
                (key, encode_offset_commit_value(o.offset, o.leader_epoch, metadata, now))
            )
            results[(o.topic, o.partition)] = ErrorCode.NONE
        if not records:
            return results
        store: TransactionalOffsetsStore = self.registry.store  # type: ignore[assignment]
        try:
            await store.append_transactional(group.partition, records, producer_id, producer_epoch)
        except KafkaError as exc:
            code = commit_error(exc.code)
            return {tp: (code if e is ErrorCode.NONE else e) for tp, e in results.items()}
        self._pending.setdefault((group.partition, producer_id), []).extend(records)
        return results

    def complete(self, partition: int, producer_id: int, commit: bool) -> int:
        """The transaction's marker is on ``partition``: apply or drop its offsets."""
        records = self._pending.pop((partition, producer_id), [])
        if commit:
            for key, value in records:
                self.registry.replay(key, value)
        return len(records)

    def restore(self, partition: int, producer_id: int, records: list[Record]) -> None:
        """Offsets of a transaction still open when ``partition`` was loaded."""
        self._pending.setdefault((partition, producer_id), []).extend(records)

    def forget_partition(self, partition: int) -> None:
        for key in [k for k in self._pending if k[0] == partition]:
            del self._pending[key]

    def has_pending(self, group_id: str) -> bool:
        partition = self.registry.partition_for(group_id)
        return any(k[0] == partition for k in self._pending)
