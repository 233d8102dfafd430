"""The narrow interface through which the coordinator persists to ``__consumer_offsets``.

The coordinator never imports the storage layer: the broker adapts its log to
``OffsetsStore`` (two methods), and tests use ``MemoryOffsetsStore``.  Records
are raw key/value bytes in Kafka's layout (``samsa.protocol.internal_records.group_records``);
a ``None`` value is a tombstone.

The store's errors come back as ``KafkaError`` with the code the log would
answer a producer; ``commit_error`` / ``group_store_error`` translate them into
what group clients expect, as Kafka's GroupMetadataManager does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from samsa.errors import ErrorCode

Record = tuple[bytes, bytes | None]
"""A ``__consumer_offsets`` record: (key, value); value ``None`` is a tombstone."""


class OffsetsStore(Protocol):
    """Durable append and full read of one ``__consumer_offsets`` partition."""

    async def append(self, partition: int, records: list[Record]) -> None:
        """Append ``records`` durably, in order; raise ``KafkaError`` if they were not written."""
        ...

    def read(self, partition: int) -> Iterable[Record]:
        """Every record of ``partition`` in offset order (after compaction), for loading."""
        ...


_UNAVAILABLE = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
    }
)
_NOT_COORDINATOR = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR})
_TOO_LARGE = frozenset(
    {ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE}
)


def commit_error(code: ErrorCode) -> ErrorCode:
    """Map a failed offset-commit append to the error a committing client understands."""
    if code in _UNAVAILABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in _NOT_COORDINATOR:
        return ErrorCode.NOT_COORDINATOR
    if code in _TOO_LARGE:
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return code


def group_store_error(code: ErrorCode) -> ErrorCode:
    """Map a failed group-metadata append to the error a SyncGroup/JoinGroup client understands."""
    if code in _UNAVAILABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in _NOT_COORDINATOR:
        return ErrorCode.NOT_COORDINATOR
    if code in _TOO_LARGE:
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code
