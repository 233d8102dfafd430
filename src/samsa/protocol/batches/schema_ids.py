"""The schema id at the front of each record's key and value, found without decoding the records.

Confluent's wire format puts five bytes in front of a serialized key or
value: the magic byte 0 and the big-endian 4-byte id of the schema it was
written with.  A broker that validates schema ids (``confluent.value.schema.validation``)
needs those five bytes of every record and nothing else, so this walks the
records' framing -- the length varints, then the few varints in front of
the key and the value -- and reads the prefixes, leaving the bodies (and the
headers) untouched.  The walk is vectorised (``record_walk``): the one
chain, record lengths, is a table lookup per record or a vector check of a
run of equal-sized records; every other position comes from numpy over all
records at once.  A batch of shapes the vector walk declines (a record over
8 KiB, varints of five bytes) is walked record by record, still without
copying a body.

A compressed batch is decompressed first (its records are inside the
compressed blob; lz4 and zstd into a buffer reused from call to call, see
``scratch_inflate``); nothing is recompressed or rewritten, the bytes the
producer sent are what the log keeps.  Nothing returned points into it.  It is inflated only as far as the
topic's ``max.decompressed.message.bytes`` lets its records go, and a record
whose body is over that is refused (``decompression_limit``), as Kafka does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from samsa.errors import DecodeError
from samsa.protocol.batches.compression import Compression, decompress
from samsa.protocol.batches.decompression_limit import record_too_large
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    LOG_OVERHEAD,
    BatchHeader,
    BufferLike,
)
from samsa.protocol.batches.record_walk import short_varints, walk_records
from samsa.protocol.batches.scratch_inflate import inflate_records_for_reading
from samsa.protocol.primitives import read_varint

__all__ = ["MAGIC_BYTE", "PREFIX_SIZE", "FieldIds", "batch_schema_ids"]

MAGIC_BYTE = 0
PREFIX_SIZE = 5
"""The magic byte and the 4-byte schema id."""

_Ints = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]


@dataclass(slots=True)
class FieldIds:
    """The key (or the value) of every record of one batch, in record order.

    ``null``: the field is null (a tombstone's value: it carries no schema and
    passes, as in Confluent Server).  ``framed``: it is at least five bytes
    and starts with the magic byte.  ``ids``: the schema id where framed, -1
    elsewhere.
    """

    null: _Bools
    framed: _Bools
    ids: _Ints

    def __len__(self) -> int:
        return len(self.ids)


def batch_schema_ids(
    buf: BufferLike,
    pos: int,
    header: BatchHeader,
    *,
    keys: bool = True,
    values: bool = True,
    max_record_body: int | None = None,
) -> tuple[FieldIds | None, FieldIds | None]:
    """(keys, values) of the batch at ``pos`` (None for a field not asked for); raises
    DecodeError for records that do not fit their batch (the caller answers
    CORRUPT_MESSAGE), and KafkaError(INVALID_RECORD) for a compressed batch whose
    records are over ``max_record_body`` (``max.decompressed.message.bytes``)."""
    start = pos + BATCH_HEADER_SIZE
    end = pos + header.batch_length + LOG_OVERHEAD
    if end > len(buf):
        raise DecodeError(f"record batch at {pos} is truncated")
    count = header.records_count
    codec = header.attributes & COMPRESSION_MASK
    # An uncompressed batch is read where it lies: the walk reads its byte pairs
    # through ``struct``, as fast from a view as from bytes, and a copy of a large
    # batch is fresh pages the broker faults in for every request.
    limit = None  # Kafka limits the records of compressed batches only
    data: bytes | memoryview
    if codec == Compression.NONE:
        data = memoryview(buf)[start:end]
    elif max_record_body is None:
        data = decompress(codec, memoryview(buf)[start:end])
    else:
        limit = max_record_body
        # Read here and dropped: inflated into a buffer reused from batch to batch.
        data = inflate_records_for_reading(codec, memoryview(buf)[start:end], count, limit)
    start, end = 0, len(data)
    # Checked on the records themselves: a compressed batch of small, alike records
    # is often fewer bytes than records.
    if count < 0 or count > end:
        raise DecodeError(f"record count {count} does not fit the batch at {pos}")
    if count == 0:
        none = _Fields(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        return none.ids(data) if keys else None, none.ids(data) if values else None
    u8 = np.frombuffer(data, dtype=np.uint8)
    found = _vector_fields(data, u8, start, end, count, limit)
    if found is None:
        found = _each_record(data, start, end, count, limit)
    key_fields, value_fields = found
    return (
        key_fields.ids(data) if keys else None,
        value_fields.ids(data) if values else None,
    )


@dataclass(slots=True)
class _Fields:
    """Where one field of every record starts, and its length (-1: null)."""

    starts: _Ints
    lengths: _Ints

    def ids(self, data: bytes | memoryview) -> FieldIds:
        null = self.lengths < 0
        long_enough = self.lengths >= PREFIX_SIZE
        if not long_enough.any():
            return FieldIds(null, long_enough, np.full(len(null), -1, dtype=np.int64))
        u8 = np.frombuffer(data, dtype=np.uint8)
        at = np.where(long_enough, self.starts, 0)  # a short field's bytes are not read
        framed = long_enough & (u8[at] == MAGIC_BYTE)
        # The four bytes after each magic byte, read big-endian through a view with a
        # word at every byte (one gather; half the cost of gathering 4-byte rows).
        # A field too short to be framed reads the word at 1, in bounds: some field
        # was long enough, so the buffer has at least five bytes.
        words = np.ndarray((len(u8) - 3,), ">u4", buffer=data, strides=(1,))
        ids = words[at + 1].astype(np.int64)
        return FieldIds(null, framed, np.where(framed, ids, -1))


def _skip_varints(u8: npt.NDArray[np.uint8], p: _Ints) -> _Ints | None:
    """The positions after the varints at ``p`` (None when one is longer than 3 bytes)."""
    more = u8[p] >= 0x80
    if not more.any():
        return p + 1
    more2 = more & (u8[p + more] >= 0x80)
    if not more2.any():
        return p + 1 + more
    if (more2 & (u8[p + 2 * more2] >= 0x80)).any():
        return None
    return p + 1 + more + more2


def _vector_fields(
    data: bytes | memoryview,
    u8: npt.NDArray[np.uint8],
    start: int,
    end: int,
    count: int,
    max_record_body: int | None,
) -> tuple[_Fields, _Fields] | None:
    """Keys and values by vector steps, or None for the record-by-record walk."""
    ends = walk_records(data, u8, start, end, count)
    if ends is None:
        return None
    starts = np.empty_like(ends)
    starts[0] = start
    starts[1:] = ends[:-1]
    if max_record_body is not None:
        # The walk took only one- and two-byte length varints.
        bodies = ends - starts - 1 - (u8[starts] >= 0x80)
        over = bodies > max_record_body
        if over.any():
            raise record_too_large(int(bodies[int(over.argmax())]), max_record_body)
    try:
        # Body: length varint (1-2 bytes, as the walk allowed), attributes byte, then
        # the timestamp and offset deltas, whose values are not needed.
        p: _Ints | None = starts + 2 + (u8[starts] >= 0x80)
        for _ in range(2):
            p = None if p is None else _skip_varints(u8, p)
        if p is None:
            return None
        key_length, key_start = short_varints(u8, p)
        if key_length is None:
            return None
        value_length, value_start = short_varints(u8, key_start + np.maximum(key_length, 0))
        if value_length is None:
            return None
    except IndexError:
        return None
    # Each field (and the header count after the value) inside its record.
    if (
        int(key_length.min()) < -1
        or int(value_length.min()) < -1
        or bool((value_start + np.maximum(value_length, 0) >= ends).any())
    ):
        return None
    return _Fields(key_start, key_length), _Fields(value_start, value_length)


def _each_record(
    data: bytes | memoryview, pos: int, end: int, count: int, max_record_body: int | None
) -> tuple[_Fields, _Fields]:
    """The record-by-record walk (long records, long varints), naming the fault of a bad one."""
    key_starts, key_lengths, value_starts, value_lengths = [], [], [], []
    try:
        for index in range(count):
            length, body = read_varint(data, pos)
            if max_record_body is not None and length > max_record_body:
                raise record_too_large(length, max_record_body)
            record_end = body + length
            if length < 0 or record_end > end:
                raise DecodeError(f"record {index} does not fit its batch")
            _, at = read_varint(data, body + 1)  # past attributes, timestamp delta
            _, at = read_varint(data, at)  # offset delta
            key_length, at = read_varint(data, at)
            key_starts.append(at)
            key_lengths.append(key_length)
            value_length, at = read_varint(data, at + max(key_length, 0))
            value_starts.append(at)
            value_lengths.append(value_length)
            if key_length < -1 or value_length < -1 or at + max(value_length, 0) >= record_end:
                raise DecodeError(f"record {index}'s key or value overruns the record")
            pos = record_end
    except IndexError:
        raise DecodeError("a record runs past the end of its batch") from None
    if pos != end:
        raise DecodeError(f"{count} records leave {end - pos} bytes of their batch unread")

    def ints(values: list[int]) -> _Ints:
        return np.array(values, dtype=np.int64)

    return (
        _Fields(ints(key_starts), ints(key_lengths)),
        _Fields(ints(value_starts), ints(value_lengths)),
    )
