"""Decode the records inside v2 batches, for consumers (never the broker hot path).

A fetched blob is a run of batches that may end with a truncated one (the
broker cuts responses at ``max_bytes``); :func:`decode_records` walks the
complete batches and stops cleanly at such a tail.  Each record is decoded by
one inlined loop: varints below 128 (nearly all of them: lengths of small
values, offset deltas, timestamp deltas of a linger window) take a table
lookup instead of a function call, which keeps decoding near a microsecond per
record in CPython.

Control batches (transaction markers) are skipped by default; a
read_committed consumer passes ``skip_control=False`` and looks at
``header.is_control`` to see commit/abort markers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from samsa.errors import DecodeError
from samsa.protocol.batches.compression import Compression, decompress
from samsa.protocol.batches.decompression_limit import check_record_bodies, decompress_records
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_MASK,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    BufferLike,
    iter_batches,
    validate_batch,
)
from samsa.protocol.primitives import read_varint

__all__ = ["Record", "decode_batch", "decode_records"]

RecordHeaders = list[tuple[str, bytes | None]]


@dataclass(slots=True)
class Record:
    """One record with its absolute offset and timestamp.

    The batch's timestamp type and partition leader epoch are the same for all
    of its records and live on the :class:`BatchHeader` yielded alongside.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: RecordHeaders


# Zig-zag decoding of one- and two-byte varints, indexed by their 14 payload bits.
_ZIGZAG = [(u >> 1) ^ -(u & 1) for u in range(1 << 14)]


def decode_records(
    buf: BufferLike,
    *,
    skip_control: bool = True,
    check_crc: bool = True,
    max_inflated: int | None = None,
) -> Iterator[tuple[BatchHeader, list[Record]]]:
    """Yield ``(header, records)`` for every complete batch in *buf*.

    A truncated trailing batch ends the iteration without error.  A batch that
    is complete but damaged raises ``KafkaError(CORRUPT_MESSAGE)`` (CRC, when
    *check_crc*) or ``DecodeError`` (malformed records); one that would inflate
    past ``max_inflated`` bytes raises ``DecompressedTooLarge`` (see decode_batch).
    """
    data = buf if isinstance(buf, bytes) else bytes(buf)
    for pos, header in iter_batches(data):
        if check_crc:
            validate_batch(data, pos, header)
        if skip_control and header.attributes & CONTROL_MASK:
            continue
        yield header, decode_batch(data, pos, header, max_inflated=max_inflated)


def decode_batch(
    buf: BufferLike,
    pos: int,
    header: BatchHeader,
    *,
    max_record_body: int | None = None,
    max_inflated: int | None = None,
) -> list[Record]:
    """Decode (and decompress) the records of the batch at *pos* described by *header*.

    The broker passes its topic's ``max.decompressed.message.bytes`` as
    ``max_record_body``: a compressed batch is then inflated only as far as
    records within it can go, and a record over it raises KafkaError(INVALID_RECORD)
    (``decompression_limit``).  A reader inside the broker that only shows records
    (the console) passes ``max_inflated`` instead: no batch inflates past that many
    bytes, whatever its record count claims (``DecompressedTooLarge``)."""
    start = pos + BATCH_HEADER_SIZE
    end = pos + header.batch_length + 12
    if end > len(buf):
        raise DecodeError(f"record batch at {pos} is truncated")
    codec = header.attributes & COMPRESSION_MASK
    if codec == Compression.NONE:
        data = buf if isinstance(buf, bytes) else bytes(buf[start:end])
        if data is not buf:
            start, end = 0, len(data)
    elif max_record_body is None:
        data = decompress(codec, memoryview(buf)[start:end], limit=max_inflated)
        start, end = 0, len(data)
    else:
        count = header.records_count
        data = decompress_records(codec, memoryview(buf)[start:end], count, max_record_body)
        start, end = 0, len(data)
        check_record_bodies(data, start, end, count, max_record_body)
    fixed_timestamp = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None
    return _decode_records_blob(
        data,
        start,
        end,
        header.records_count,
        header.base_offset,
        header.base_timestamp,
        fixed_timestamp,
    )


def _decode_records_blob(
    data: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    fixed_timestamp: int | None,
) -> list[Record]:
    """Decode *count* records from ``data[pos:end]``; the hot loop of the consumer."""
    if count < 0:
        raise DecodeError(f"negative record count {count}")
    if count > end - pos:  # every record takes at least 7 bytes; cheap sanity bound
        raise DecodeError(f"record count {count} does not fit in {end - pos} bytes")
    zigzag = _ZIGZAG
    records: list[Record] = []
    append = records.append
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                length = zigzag[b]
                pos += 1
            elif data[pos + 1] < 0x80:
                length = zigzag[(b & 0x7F) | (data[pos + 1] << 7)]
                pos += 2
            else:
                length, pos = read_varint(data, pos)
            record_end = pos + length
            pos += 1  # attributes: unused
            b = data[pos]
            if b < 0x80:
                timestamp_delta = zigzag[b]
                pos += 1
            elif data[pos + 1] < 0x80:
                timestamp_delta = zigzag[(b & 0x7F) | (data[pos + 1] << 7)]
                pos += 2
            else:
                timestamp_delta, pos = read_varint(data, pos)
            b = data[pos]
            if b < 0x80:
                offset_delta = zigzag[b]
                pos += 1
            elif data[pos + 1] < 0x80:
                offset_delta = zigzag[(b & 0x7F) | (data[pos + 1] << 7)]
                pos += 2
            else:
                offset_delta, pos = read_varint(data, pos)
            b = data[pos]
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            elif data[pos + 1] < 0x80:
                size = zigzag[(b & 0x7F) | (data[pos + 1] << 7)]
                pos += 2
            else:
                size, pos = read_varint(data, pos)
            if size >= 0:
                key: bytes | None = data[pos : pos + size]
                pos += size
            elif size == -1:
                key = None
            else:
                raise DecodeError(f"invalid key length {size}")
            b = data[pos]
            if b < 0x80:
                size = zigzag[b]
                pos += 1
            elif data[pos + 1] < 0x80:
                size = zigzag[(b & 0x7F) | (data[pos + 1] << 7)]
                pos += 2
            else:
                size, pos = read_varint(data, pos)
            if size >= 0:
                value: bytes | None = data[pos : pos + size]
                pos += size
            elif size == -1:
                value = None
            else:
                raise DecodeError(f"invalid value length {size}")
            if data[pos] == 0:
                headers: RecordHeaders = []
                pos += 1
            else:
                headers, pos = _read_headers(data, pos)
            if pos != record_end:
                raise DecodeError(f"record length {length} does not match its contents")
            append(
                Record(
                    base_offset + offset_delta,
                    base_timestamp + timestamp_delta
                    if fixed_timestamp is None
                    else fixed_timestamp,
                    key,
                    value,
                    headers,
                )
            )
    except IndexError:
        raise DecodeError("truncated record") from None
    if pos != end:
        raise DecodeError(f"{end - pos} bytes after the last of {count} records")
    return records


def _read_headers(data: bytes, pos: int) -> tuple[RecordHeaders, int]:
    count, pos = read_varint(data, pos)
    if count < 0:
        raise DecodeError(f"invalid header count {count}")
    headers: RecordHeaders = []
    for _ in range(count):
        size, pos = read_varint(data, pos)
        if size < 0 or pos + size > len(data):
            raise DecodeError(f"invalid header key length {size}")
        try:
            name = data[pos : pos + size].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"header key is not UTF-8: {exc}") from None
        pos += size
        size, pos = read_varint(data, pos)
        if size >= 0:
            if pos + size > len(data):
                raise DecodeError("truncated header value")
            headers.append((name, data[pos : pos + size]))
            pos += size
        elif size == -1:
            headers.append((name, None))
        else:
            raise DecodeError(f"invalid header value length {size}")
    return headers, pos
