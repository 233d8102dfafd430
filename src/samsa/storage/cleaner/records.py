"""Filtering the records of one batch for the log cleaner, keeping offsets intact.

Compaction is the one place where the broker looks inside batches: it needs
each record's key, whether it has a value, and its offset.  A batch that loses
records is rebuilt with the same base offset, ``last_offset_delta``, producer
id, epoch, base sequence and partition leader epoch, so offsets of retained
records never change and an idempotent producer's last sequence stays where it
was (Kafka's ``MemoryRecords.filterTo`` does the same).  Retained records are
copied byte for byte; only their timestamp delta is re-encoded when the batch's
base timestamp becomes a delete horizon (KIP-534: attribute bit 6 set, base
timestamp = the time after which tombstones and markers may be removed).
Compressed batches are decompressed, filtered and recompressed with the same
codec; only as far as the topic's ``max.decompressed.message.bytes`` lets
their records go, as Kafka's ``filterTo`` (a record over it raises
INVALID_RECORD, and the cleaner leaves the partition as it was).

Pure functions over bytes: no files, no clock.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from crc32c import crc32c

from samsa.errors import DecodeError
from samsa.protocol.batches.compression import Compression, compress, decompress
from samsa.protocol.batches.decompression_limit import decompress_records, record_too_large
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CRC_OFFSET,
    CURRENT_MAGIC,
    DELETE_HORIZON_MASK,
    HEADER,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
)
from samsa.protocol.primitives import read_varint, varint_bytes

__all__ = [
    "FilterOutcome",
    "RawRecord",
    "filter_batch",
    "iter_raw_records",
    "stamp_delete_horizon",
]

_CRC = struct.Struct(">I")


@dataclass(slots=True, frozen=True)
class RawRecord:
    """Where one record lies in a batch's (decompressed) records blob."""

    offset: int
    timestamp: int
    key: bytes | None
    has_value: bool
    attributes: int
    offset_delta: int
    start: int  # first byte of the length varint
    body: int  # first byte of the key length (after the offset delta)
    end: int


def records_blob(
    batch: bytes | memoryview, header: BatchHeader, max_record_body: int | None = None
) -> bytes:
    """The records of a batch, decompressed (within ``max_record_body`` per record)."""
    raw = batch[BATCH_HEADER_SIZE : header.size]
    codec = header.attributes & COMPRESSION_MASK
    if codec == Compression.NONE:
        return bytes(raw)
    if max_record_body is None:
        return decompress(codec, raw)
    return decompress_records(codec, raw, header.records_count, max_record_body)


def iter_raw_records(
    blob: bytes, header: BatchHeader, max_record_body: int | None = None
) -> list[RawRecord]:
    """Decode the framing of ``header.records_count`` records of ``blob``.

    Raises DecodeError on malformed records (the batch's CRC already passed, so
    this means a producer wrote garbage; the cleaner then keeps the batch), and
    KafkaError(INVALID_RECORD) for a record of a compressed batch whose body is
    over ``max_record_body`` (Kafka limits no other)."""
    records: list[RawRecord] = []
    pos = 0
    fixed_ts = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None
    limit = max_record_body if header.attributes & COMPRESSION_MASK else None
    try:
        for _ in range(header.records_count):
            start = pos
            length, pos = read_varint(blob, pos)
            if limit is not None and length > limit:
                raise record_too_large(length, limit)
            end = pos + length
            if length < 0 or end > len(blob):
                raise DecodeError(f"record length {length} at {start} overruns the batch")
            attributes = blob[pos]
            ts_delta, pos = read_varint(blob, pos + 1)
            offset_delta, pos = read_varint(blob, pos)
            body = pos
            key_len, pos = read_varint(blob, pos)
            key = None if key_len < 0 else blob[pos : pos + key_len]
            pos += max(key_len, 0)
            value_len, pos = read_varint(blob, pos)
            records.append(
                RawRecord(
                    offset=header.base_offset + offset_delta,
                    timestamp=header.base_timestamp + ts_delta if fixed_ts is None else fixed_ts,
                    key=key,
                    has_value=value_len >= 0,
                    attributes=attributes,
                    offset_delta=offset_delta,
                    start=start,
                    body=body,
                    end=end,
                )
            )
            pos = end
    except IndexError:
        raise DecodeError("truncated record") from None
    if pos != len(blob):
        raise DecodeError(f"{len(blob) - pos} bytes after the last record")
    return records


@dataclass(slots=True, frozen=True)
class FilterOutcome:
    """What became of one batch: ``data`` is None when the batch is dropped,
    the original bytes when unchanged, else a rebuilt batch."""

    data: bytes | None
    retained_records: int
    retained_tombstones: int
    delete_horizon_ms: int | None  # the batch's horizon after filtering, if any


# retain(header, record) -> keep it?
RecordPredicate = Callable[[BatchHeader, RawRecord], bool]


def filter_batch(
    batch: bytes,
    header: BatchHeader,
    retain: RecordPredicate,
    *,
    new_horizon_ms: int,
    retain_empty: bool,
    max_record_body: int | None = None,
) -> FilterOutcome:
    """Keep the records ``retain`` accepts; control batches pass unchanged.

    ``new_horizon_ms`` is stamped as delete horizon on a batch that keeps a
    tombstone and has none yet.  ``retain_empty`` keeps a batch whose records
    all go as an empty batch (records_count 0): an idempotent producer's last
    batch, whose sequence numbers the broker must still find.
    ``max_record_body``: the topic's ``max.decompressed.message.bytes``."""
    horizon = header.base_timestamp if header.has_delete_horizon else None
    if header.is_control:
        return FilterOutcome(batch, header.records_count, 0, horizon)
    blob = records_blob(batch, header, max_record_body)
    records = iter_raw_records(blob, header, max_record_body)
    kept = [r for r in records if retain(header, r)]
    tombstones = sum(1 for r in kept if not r.has_value)
    if not kept:
        if header.records_count == 0 or retain_empty:
            data = batch if header.records_count == 0 else _empty_batch(header)
            return FilterOutcome(data, 0, 0, None)
        return FilterOutcome(None, 0, 0, None)
    stamp = horizon is None and tombstones > 0
    if len(kept) == len(records) and not stamp:
        return FilterOutcome(batch, len(kept), tombstones, horizon)
    if stamp:
        return FilterOutcome(
            _stamped(header, blob, kept, new_horizon_ms), len(kept), tombstones, new_horizon_ms
        )
    parts = [blob[r.start : r.end] for r in kept]
    attributes = header.attributes | (DELETE_HORIZON_MASK if horizon is not None else 0)
    max_ts = header.max_timestamp if header.timestamp_type else max(r.timestamp for r in kept)
    data = _build(header, attributes, header.base_timestamp, max_ts, len(kept), b"".join(parts))
    return FilterOutcome(data, len(kept), tombstones, horizon)


def stamp_delete_horizon(batch: bytes, header: BatchHeader, horizon_ms: int) -> bytes:
    """``batch`` with every record kept and ``horizon_ms`` as its delete horizon
    (a transaction marker the next pass past that time may remove)."""
    blob = records_blob(batch, header)
    return _stamped(header, blob, iter_raw_records(blob, header), horizon_ms)


def _stamped(header: BatchHeader, blob: bytes, kept: list[RawRecord], horizon_ms: int) -> bytes:
    """The batch of the ``kept`` records with the delete horizon as its base
    timestamp (each record's delta re-encoded so its own timestamp stays)."""
    parts = [_with_timestamp_delta(blob, r, r.timestamp - horizon_ms) for r in kept]
    attributes = header.attributes | DELETE_HORIZON_MASK
    max_ts = header.max_timestamp if header.timestamp_type else max(r.timestamp for r in kept)
    return _build(header, attributes, horizon_ms, max_ts, len(kept), b"".join(parts))


def _with_timestamp_delta(blob: bytes, record: RawRecord, ts_delta: int) -> bytes:
    body = (
        bytes([record.attributes])
        + varint_bytes(ts_delta)
        + varint_bytes(record.offset_delta)
        + blob[record.body : record.end]
    )
    return varint_bytes(len(body)) + body


def _empty_batch(header: BatchHeader) -> bytes:
    """A batch with no records that keeps the offsets and sequences of
    ``header`` (Kafka's empty-header batch: no codec, both timestamps = max)."""
    attributes = header.attributes & ~(COMPRESSION_MASK | DELETE_HORIZON_MASK)
    return _build(header, attributes, header.max_timestamp, header.max_timestamp, 0, b"")


def _build(
    header: BatchHeader,
    attributes: int,
    base_timestamp: int,
    max_timestamp: int,
    count: int,
    records: bytes,
) -> bytes:
    codec = attributes & COMPRESSION_MASK
    payload = compress(codec, records) if codec != Compression.NONE and count else records
    out = bytearray(
        HEADER.pack(
            header.base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD + len(payload),
            header.partition_leader_epoch,
            CURRENT_MAGIC,
            0,
            attributes,
            header.last_offset_delta,
            base_timestamp,
            max_timestamp,
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            count,
        )
    )
    out += payload
    _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[CRC_OFFSET + 4 :]))
    return bytes(out)
