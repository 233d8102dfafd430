"""RecordBatch v2 headers: read, walk, validate and stamp without decoding records.

Layout of the 61-byte header (all big-endian)::

    0  base_offset int64         <- stamped by the broker, outside the CRC
    8  batch_length int32        bytes after this field (from offset 12 to the end)
    12 partition_leader_epoch    <- stamped by the broker, outside the CRC
    16 magic int8 (2)
    17 crc uint32                CRC-32C of bytes 21..end
    21 attributes int16          codec | ts type | transactional | control | delete horizon
    23 last_offset_delta int32
    27 base_timestamp int64
    35 max_timestamp int64
    43 producer_id int64
    51 producer_epoch int16
    53 base_sequence int32
    57 records_count int32
    61 records (compressed as one blob when the codec is not NONE)

The broker's hot path uses only this module: it walks a produce request's or a
segment file's bytes batch by batch, checks each batch's integrity, and writes
the fields it owns in place.  Legacy message sets (magic 0 and 1) share the
first 17 bytes' meaning (offset, size, crc, magic at byte 16), so the same walk
finds them and reports them with ``UNSUPPORTED_FOR_MESSAGE_FORMAT``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from crc32c import crc32c

from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.batches.compression import Compression

__all__ = [
    "ATTRIBUTES_OFFSET",
    "BATCH_HEADER_SIZE",
    "COMPRESSION_MASK",
    "CONTROL_MASK",
    "CRC_OFFSET",
    "CURRENT_MAGIC",
    "DELETE_HORIZON_MASK",
    "LOG_OVERHEAD",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "RECORD_BATCH_OVERHEAD",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_TYPE_MASK",
    "TRANSACTIONAL_MASK",
    "BatchHeader",
    "BufferLike",
    "batch_crc",
    "iter_batches",
    "read_batch_header",
    "set_log_append_time",
    "set_producer_state",
    "stamp_batch",
    "validate_batch",
    "validate_client_batch",
]

BufferLike = bytes | bytearray | memoryview
# Batches the broker stamps in place: its own bytearray, or a writable view of a request.
WritableBuffer = bytearray | memoryview

BATCH_HEADER_SIZE = 61
RECORD_BATCH_OVERHEAD = BATCH_HEADER_SIZE
LOG_OVERHEAD = 12  # base_offset + batch_length: the part not counted in batch_length
CURRENT_MAGIC = 2

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

# Field offsets, relative to the batch start.
BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

TIMESTAMP_CREATE_TIME = 0
TIMESTAMP_LOG_APPEND_TIME = 1

HEADER = struct.Struct(">qiibIhiqqqhii")
assert HEADER.size == BATCH_HEADER_SIZE

_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")
_PRODUCER_STATE = struct.Struct(">qhi")  # producer_id, producer_epoch, base_sequence


@dataclass(slots=True)
class BatchHeader:
    """The decoded 61-byte header of one v2 batch (a copy, not a view)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> int:
        """0 = CreateTime, 1 = LogAppendTime."""
        return (self.attributes & TIMESTAMP_TYPE_MASK) >> 3

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record; sequences wrap at 2**31 like Kafka's."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % 0x80000000


def read_batch_header(buf: BufferLike, pos: int = 0) -> BatchHeader:
    """Decode the header at *pos*; raises DecodeError if fewer than 61 bytes remain.

    The magic is not checked here: callers look at ``header.magic`` (or call
    :func:`validate_batch`) before trusting the other fields.
    """
    if pos < 0 or len(buf) - pos < BATCH_HEADER_SIZE:
        raise DecodeError(f"record batch header needs {BATCH_HEADER_SIZE} bytes at {pos}")
    return BatchHeader(*HEADER.unpack_from(buf, pos))


def iter_batches(buf: BufferLike) -> Iterator[tuple[int, BatchHeader]]:
    """Yield ``(position, header)`` for each complete batch in *buf*, in order.

    Stops silently at a truncated tail: fetch responses may end with a partial
    batch, and a torn segment tail is recovered by truncating where this stops.
    Raises ``KafkaError`` where the bytes cannot be a batch at all: a legacy
    message set (UNSUPPORTED_FOR_MESSAGE_FORMAT), an unknown magic or an
    impossible length (CORRUPT_MESSAGE).  Nothing beyond the header is checked;
    use :func:`validate_batch` for the CRC.
    """
    pos = 0
    end = len(buf)
    unpack_from = HEADER.unpack_from
    while end - pos > MAGIC_OFFSET:
        (batch_length,) = _INT32.unpack_from(buf, pos + LENGTH_OFFSET)
        magic = buf[pos + MAGIC_OFFSET]
        if magic != CURRENT_MAGIC:
            _raise_bad_magic(magic, pos)
        if batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"record batch at {pos} has length {batch_length}, "
                f"below the minimum {BATCH_HEADER_SIZE - LOG_OVERHEAD}",
            )
        size = batch_length + LOG_OVERHEAD
        if end - pos < size:
            return
        yield pos, BatchHeader(*unpack_from(buf, pos))
        pos += size


def _raise_bad_magic(magic: int, pos: int) -> None:
    if magic in (0, 1):
        raise KafkaError(
            ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
            f"legacy message set (magic {magic}) at {pos}: only record batch v2 is supported",
        )
    raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"unknown record batch magic {magic} at {pos}")


def batch_crc(buf: BufferLike, pos: int, size: int) -> int:
    """CRC-32C of a batch's bytes from ``attributes`` to its end."""
    return crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + size])


def validate_batch(buf: BufferLike, pos: int, header: BatchHeader) -> None:
    """Check one batch's integrity: magic, length, CRC and offset/count fields.

    This is what storage recovery needs: it accepts empty batches left by
    compaction (``records_count`` 0 with the original ``last_offset_delta``).
    Produce requests also need :func:`validate_client_batch`.
    """
    if header.magic != CURRENT_MAGIC:
        _raise_bad_magic(header.magic, pos)
    size = header.batch_length + LOG_OVERHEAD
    if header.batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"record batch at {pos} has length {header.batch_length}, below the minimum",
        )
    if pos + size > len(buf):
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"record batch at {pos} claims {size} bytes but only {len(buf) - pos} remain",
        )
    actual = batch_crc(buf, pos, size)
    if actual != header.crc:
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"record batch at {pos} is corrupt: CRC {actual:#010x} != stored {header.crc:#010x}",
        )
    if header.records_count < 0 or header.last_offset_delta < -1:
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"record batch at {pos} has records_count {header.records_count} and "
            f"last_offset_delta {header.last_offset_delta}",
        )
    if header.records_count > header.last_offset_delta + 1:
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"record batch at {pos} holds {header.records_count} records in "
            f"{header.last_offset_delta + 1} offsets",
        )
    if header.attributes & COMPRESSION_MASK > Compression.ZSTD:
        raise KafkaError(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
            f"record batch at {pos} uses compression codec {header.attributes & COMPRESSION_MASK}",
        )


def validate_client_batch(
    buf: BufferLike, pos: int, header: BatchHeader, *, max_batch_bytes: int | None = None
) -> None:
    """Integrity plus the rules Kafka applies to batches written by producers.

    Mirrors LogValidator: a size limit (``max.message.bytes``) answered with
    MESSAGE_TOO_LARGE, at least one record, a record count equal to the offset
    span, no control batches from clients, and a sequence when idempotent.
    """
    if max_batch_bytes is not None and header.size > max_batch_bytes:
        raise KafkaError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"record batch at {pos} is {header.size} bytes, over the limit of {max_batch_bytes}",
        )
    validate_batch(buf, pos, header)
    if header.records_count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"record batch at {pos} has no records")
    if header.records_count != header.last_offset_delta + 1:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"record batch at {pos}: records_count {header.records_count} does not match "
            f"last_offset_delta {header.last_offset_delta}",
        )
    if header.is_control:
        raise KafkaError(
            ErrorCode.INVALID_RECORD, "clients are not allowed to write control batches"
        )
    if header.producer_id > NO_PRODUCER_ID and header.base_sequence < 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"record batch at {pos} has producer id {header.producer_id} "
            f"but sequence {header.base_sequence}",
        )


def stamp_batch(
    buf: WritableBuffer, pos: int, base_offset: int, partition_leader_epoch: int
) -> None:
    """Write the broker-owned fields in place; both lie outside the CRC."""
    _INT64.pack_into(buf, pos + BASE_OFFSET_OFFSET, base_offset)
    _INT32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)


def set_log_append_time(buf: WritableBuffer, pos: int, timestamp_ms: int) -> None:
    """Mark a batch LogAppendTime with *timestamp_ms* and recompute its CRC.

    Records keep their deltas; readers report ``max_timestamp`` for every
    record of a LogAppendTime batch, as Kafka's do.
    """
    (attributes,) = _INT16.unpack_from(buf, pos + ATTRIBUTES_OFFSET)
    _INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_MASK)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, timestamp_ms)
    _rewrite_crc(buf, pos)


def set_producer_state(
    buf: bytearray,
    pos: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    *,
    is_transactional: bool | None = None,
) -> None:
    """Re-stamp the idempotence fields of a built batch and recompute its CRC.

    The producer assigns sequences when a batch is drained (and again when
    batches are re-sequenced after an epoch bump); the records stay as built.
    """
    _PRODUCER_STATE.pack_into(
        buf, pos + PRODUCER_ID_OFFSET, producer_id, producer_epoch, base_sequence
    )
    if is_transactional is not None:
        (attributes,) = _INT16.unpack_from(buf, pos + ATTRIBUTES_OFFSET)
        if is_transactional:
            attributes |= TRANSACTIONAL_MASK
        else:
            attributes &= ~TRANSACTIONAL_MASK
        _INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes)
    _rewrite_crc(buf, pos)


def _rewrite_crc(buf: WritableBuffer, pos: int) -> None:
    (batch_length,) = _INT32.unpack_from(buf, pos + LENGTH_OFFSET)
    size = batch_length + LOG_OVERHEAD
    if pos + size > len(buf):
        raise DecodeError(f"record batch at {pos} is truncated")
    _UINT32.pack_into(buf, pos + CRC_OFFSET, batch_crc(buf, pos, size))
