"""Values the consumer hands to applications.

``ConsumerRecord`` is built once per record by the fetcher, straight from the
decoded batch, so it is a plain slotted dataclass: attribute reads in the
application's loop cost no more than on a tuple.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from samsa.client.metadata import TopicPartition

__all__ = ["ConsumerRecord", "OffsetAndMetadata", "OffsetAndTimestamp", "TopicPartition"]

CREATE_TIME = 0
LOG_APPEND_TIME = 1


@dataclass(slots=True)
class ConsumerRecord:
    """One record as fetched; ``timestamp_type`` is 0 CreateTime or 1 LogAppendTime."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: list[tuple[str, bytes | None]]
    leader_epoch: int | None


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed position: the offset of the *next* record to read, as in Kafka."""

    offset: int
    metadata: str = ""
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    """Answer of ``offsets_for_times``: the first offset at or after the timestamp."""

    offset: int
    timestamp: int
    leader_epoch: int | None = None
