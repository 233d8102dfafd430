"""Per-record timestamps of one batch, for ListOffsets by time only.

Everything else in storage works on batch headers.  Looking up an offset by
timestamp must answer with the *record* (Kafka returns the first record whose
timestamp is >= the target, and for "max timestamp" the record holding it), so
this module walks the records of the one batch the index pointed at: it reads
only each record's length, timestamp delta and offset delta, after
decompressing the records blob when the batch is compressed: only as far as
the topic's ``max.decompressed.message.bytes`` lets its records go, and a
record over it is refused with INVALID_RECORD, as Kafka's lookup does.
"""

from __future__ import annotations

from collections.abc import Iterator

from samsa.protocol.batches.decompression_limit import decompress_records, record_too_large
from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE, BatchHeader, BufferLike
from samsa.protocol.primitives import read_varint


def iter_record_timestamps(
    batch: BufferLike, header: BatchHeader, max_record_body: int
) -> Iterator[tuple[int, int]]:
    """Yield (offset, timestamp) of each record of the batch whose bytes are ``batch``.

    For a LogAppendTime batch every record carries the batch's max timestamp,
    as Kafka's readers report it.  Raises KafkaError(CORRUPT_MESSAGE) if the
    records cannot be decompressed, KafkaError(INVALID_RECORD) for a compressed
    batch's record over ``max_record_body`` (``max.decompressed.message.bytes``),
    and DecodeError if they are malformed.
    """
    log_append_time = header.timestamp_type == 1
    records = memoryview(batch)[BATCH_HEADER_SIZE : header.size]
    count = header.records_count
    limit: int | None = None  # Kafka limits the records of compressed batches only
    if header.compression:
        limit = max_record_body
        records = memoryview(decompress_records(header.compression, records, count, limit))
    pos = 0
    for _ in range(count):
        length, body = read_varint(records, pos)
        if limit is not None and length > limit:
            raise record_too_large(length, limit)
        pos = body + length
        ts_delta, p = read_varint(records, body + 1)  # skip the attributes byte
        offset_delta, _ = read_varint(records, p)
        timestamp = header.max_timestamp if log_append_time else header.base_timestamp + ts_delta
        yield header.base_offset + offset_delta, timestamp


def first_record_at_or_after(
    batch: BufferLike, header: BatchHeader, timestamp: int, min_offset: int, max_record_body: int
) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record at offset >= ``min_offset`` whose
    timestamp is >= ``timestamp``, or None."""
    for offset, ts in iter_record_timestamps(batch, header, max_record_body):
        if offset >= min_offset and ts >= timestamp:
            return offset, ts
    return None


def record_with_max_timestamp(
    batch: BufferLike, header: BatchHeader, max_record_body: int
) -> tuple[int, int]:
    """(offset, timestamp) of the first record holding the batch's max timestamp."""
    for offset, ts in iter_record_timestamps(batch, header, max_record_body):
        if ts >= header.max_timestamp:
            return offset, ts
    return header.last_offset, header.max_timestamp
