"""The narrow interfaces through which the transaction coordinator reaches the broker.

The coordinator imports no storage, replication or server code: the broker
adapts its ``__transaction_state`` logs to ``TransactionStore`` and its
partitions (local, or other brokers over the inter-broker channel) to
``MarkerWriter``.  Tests use in-memory versions of both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from samsa.errors import ErrorCode

__all__ = ["MarkerWriter", "ProducerIdSource", "Record", "TransactionStore"]

Record = tuple[bytes, bytes | None]
TopicPartition = tuple[str, int]
ProducerIdSource = Callable[[], Awaitable[int]]


class TransactionStore(Protocol):
    async def append(self, partition: int, records: list[Record]) -> None:
        """Append durably; raise ``KafkaError`` if the records were not written."""
        ...

    def read(self, partition: int) -> Iterable[Record]:
        """Every record of ``partition`` in offset order, for loading."""
        ...


class MarkerWriter(Protocol):
    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """Write a COMMIT/ABORT marker on each partition's leader; the error of each."""
        ...

    async def close(self) -> None:
        """Release connections to other brokers (the coordinator is shutting down)."""
        ...
