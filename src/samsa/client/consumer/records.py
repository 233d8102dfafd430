"""Values the consumer hands to applications.

``ConsumerRecord`` is built once per record by the fetcher's decode loop, so
it is a ``NamedTuple``: the loop creates it with ``tuple.__new__`` (about a
third of the cost of a slotted dataclass's ``__init__``), and attribute reads
go through C-level tuple getters, as cheap as a dataclass slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from samsa.client.metadata import TopicPartition

__all__ = ["ConsumerRecord", "OffsetAndMetadata", "OffsetAndTimestamp", "TopicPartition"]

CREATE_TIME = 0
LOG_APPEND_TIME = 1


class ConsumerRecord(NamedTuple):
    """One record as fetched; ``timestamp_type`` is 0 CreateTime or 1 LogAppendTime.

    ``headers`` is a tuple of ``(key, value)`` pairs, ``()`` when there are none.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: tuple[tuple[str, bytes | None], ...]
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


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """What a transactional producer sends with a consumer's offsets
    (``Producer.send_offsets_to_transaction``): the group, and the member's
    generation so the coordinator can refuse a zombie member's commit."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
