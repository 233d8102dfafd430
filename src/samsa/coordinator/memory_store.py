"""An in-memory ``OffsetsStore`` for tests and for brokers run without a data dir.

It keeps every record (no compaction) so a test can both reload a coordinator
from it and inspect exactly what was written.  ``fail_next`` injects one append
failure, to check that a failed write leaves the group consistent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from samsa.coordinator.store import Record
from samsa.errors import ErrorCode, KafkaError


class MemoryOffsetsStore:
    """Records per ``__consumer_offsets`` partition, in append order."""

    def __init__(self) -> None:
        self.partitions: defaultdict[int, list[Record]] = defaultdict(list)
        self._fail_next: ErrorCode | Exception | None = None

    def fail_next(self, failure: ErrorCode | Exception) -> None:
        """Make the next ``append`` raise without writing anything: ``KafkaError(code)``
        for an error code, or the given exception (an unexpected failure)."""
        self._fail_next = failure

    async def append(self, partition: int, records: list[Record]) -> None:
        if self._fail_next is not None:
            failure, self._fail_next = self._fail_next, None
            if isinstance(failure, Exception):
                raise failure
            raise KafkaError(failure, "injected append failure")
        self.partitions[partition].extend(records)

    async def append_transactional(
        self, partition: int, records: list[Record], producer_id: int, producer_epoch: int
    ) -> None:
        """Kept like any append: only the coordinator's pending offsets know the producer."""
        await self.append(partition, records)

    def read(self, partition: int) -> Iterable[Record]:
        return list(self.partitions.get(partition, ()))

    def all_records(self) -> list[tuple[int, Record]]:
        """Every record with its partition, for assertions."""
        return [(p, r) for p, recs in sorted(self.partitions.items()) for r in recs]
