"""Sans-I/O reads of a remote segment: which bytes to fetch, what a fetch returns, where a timestamp is.

A remote fetch cannot stream a segment file from a position the way a local
read does; it asks the object store for byte ranges.  These functions decide,
from the bytes a range read returned, either the answer or the next range to
read (``ReadMore``), so the I/O loop around them stays a few lines and every
rule here is tested without a store:

* ``records_from`` (Kafka's ``RemoteLogManager.read`` after the offset index
  lookup): skip the batches that end before the fetch offset, then return up
  to ``max_bytes`` from the first batch that holds it, as Kafka does: a
  first batch larger than ``max_bytes`` is returned whole only when the
  request allows one oversized message (``min_one_message``), else nothing;
  the end may cut a later batch, which clients drop.
* ``timestamp_from`` (Kafka's ``lookupTimestamp`` after the time index lookup):
  the first record at or after a timestamp and a starting offset.

Positions are within the segment's log object; ``data_position`` says where
the fetched ``data`` starts.  The records are never re-encoded: the answer is
a slice of what the store returned.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from samsa.protocol.batches.record_batch import (
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    iter_batches,
)
from samsa.protocol.batches.record_reader import decode_batch

__all__ = [
    "DEFAULT_READ_SLACK_BYTES",
    "ReadMore",
    "RemoteRecords",
    "TimestampAndOffset",
    "records_from",
    "timestamp_from",
]

DEFAULT_READ_SLACK_BYTES = 64 * 1024
"""Bytes read beyond ``max_bytes``: the batch holding an offset starts past its
offset-index entry by up to an index interval (``index.interval.bytes``, 4 KiB
by default) plus a batch, so one range read usually finds the batch."""

_INT32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class ReadMore:
    """The fetched bytes did not decide it: read ``length`` bytes from ``position``."""

    position: int
    length: int


@dataclass(frozen=True, slots=True)
class RemoteRecords:
    """Record batches to answer a fetch with (empty when the first batch is too big).

    ``position`` is where ``records`` start in the segment, ``base_offset`` the
    first batch's base offset (the fetch's LogOffsetMetadata)."""

    records: memoryview
    position: int
    base_offset: int


@dataclass(frozen=True, slots=True)
class TimestampAndOffset:
    timestamp: int
    offset: int
    leader_epoch: int | None


def _tail(data: bytes | memoryview, consumed: int, default: int) -> int:
    """Bytes to read for the batch that starts at ``consumed`` (its full size
    when its length field arrived, else ``default``)."""
    if len(data) - consumed >= LENGTH_OFFSET + 4:
        (length,) = _INT32.unpack_from(data, consumed + LENGTH_OFFSET)
        return max(default, length + LOG_OVERHEAD)
    return default


def records_from(
    data: bytes | memoryview,
    data_position: int,
    offset: int,
    max_bytes: int,
    *,
    min_one_message: bool,
    segment_size: int,
) -> RemoteRecords | ReadMore | None:
    """The answer to a fetch at ``offset`` from bytes read at ``data_position``.

    None means the segment holds no batch ending at or after ``offset`` (the
    caller moves on to the next remote segment, as Kafka does after compaction).
    """
    at_end = data_position + len(data) >= segment_size
    view = memoryview(data)
    consumed = 0
    for pos, header in iter_batches(view):
        consumed = pos + header.size
        if header.last_offset < offset:
            continue
        size = header.size
        if size > max_bytes and not min_one_message:
            return RemoteRecords(view[0:0], data_position + pos, header.base_offset)
        wanted = max(size, max_bytes) if min_one_message else max_bytes
        end = min(pos + wanted, len(view))
        return RemoteRecords(view[pos:end], data_position + pos, header.base_offset)
    if at_end:
        return None  # read to the object's end (a torn batch there holds nothing readable)
    return ReadMore(data_position + consumed, _tail(view, consumed, max_bytes))


def timestamp_from(
    data: bytes | memoryview,
    data_position: int,
    timestamp: int,
    starting_offset: int,
    *,
    segment_size: int,
    chunk_bytes: int = 1024 * 1024,
    max_record_body: int | None = None,
) -> TimestampAndOffset | ReadMore | None:
    """The first record whose timestamp is >= ``timestamp`` and offset >=
    ``starting_offset``, in bytes read at ``data_position`` (the position the
    time and offset indexes gave).  None when the segment has no such record.
    ``max_record_body``: the topic's ``max.decompressed.message.bytes``, over
    which a compressed batch's records raise KafkaError(INVALID_RECORD)."""
    view = memoryview(data)
    consumed = 0
    for pos, header in iter_batches(view):
        consumed = pos + header.size
        if header.max_timestamp < timestamp or header.last_offset < starting_offset:
            continue
        for record in decode_batch(view, pos, header, max_record_body=max_record_body):
            if record.timestamp >= timestamp and record.offset >= starting_offset:
                epoch = header.partition_leader_epoch
                return TimestampAndOffset(
                    record.timestamp,
                    record.offset,
                    None if epoch == NO_PARTITION_LEADER_EPOCH else epoch,
                )
    if data_position + len(view) >= segment_size:
        return None
    return ReadMore(data_position + consumed, _tail(view, consumed, chunk_bytes))
