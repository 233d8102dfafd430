"""Writes one v2 record batch straight into a pooled buffer (Kafka's MemoryRecordsBuilder).

This sits on the producer's hot path -- every ``send()`` lands in ``append`` --
so it is tuned for CPython: varints of small values come from a precomputed
table, a record is assembled with one ``bytes.join`` and copied into the
preallocated buffer with one slice assignment, and the 61-byte batch header
(whose producer id, epoch and base sequence are only known at drain time) is
written once by ``build``.  The general-purpose codec in ``samsa.protocol``
decodes and re-encodes batches; this builder only ever appends.

Layout reference: kafka-protocol-facts.md section 2 (RecordBatch v2).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import crc32c

from samsa.protocol.compression import compress

__all__ = ["BATCH_OVERHEAD", "RecordsBuilder", "estimate_record_size", "uvarint"]

BATCH_OVERHEAD = 61
_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC_START = 21
_TABLE_SIZE = 1 << 15


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_UVAR: list[bytes] = [uvarint(i) for i in range(_TABLE_SIZE)]


def zigzag(value: int) -> bytes:
    """Signed varint (zig-zag), table-driven for small magnitudes."""
    z = (value << 1) ^ (value >> 63)
    if z < _TABLE_SIZE:
        return _UVAR[z]
    return uvarint(z)


_NULL = zigzag(-1)
_ZERO = b"\x00"
# _ZZ[n]: zig-zag varint of a non-negative n < _HALF, the common case on the hot path.
_HALF = _TABLE_SIZE // 2
_ZZ: list[bytes] = [_UVAR[i << 1] for i in range(_HALF)]

Header = tuple[str, bytes | None]


def _encode_headers(headers: Sequence[Header]) -> bytes:
    parts = [zigzag(len(headers))]
    for name, val in headers:
        raw = name.encode("utf-8")
        parts.append(zigzag(len(raw)))
        parts.append(raw)
        if val is None:
            parts.append(_NULL)
        else:
            parts.append(zigzag(len(val)))
            parts.append(val)
    return b"".join(parts)


def estimate_record_size(
    key: bytes | None, value: bytes | None, headers: Sequence[Header] | None
) -> int:
    """Upper bound of one record's encoded size (Kafka's estimateSizeInBytesUpperBound)."""
    size = 21 + (len(key) if key else 0) + (len(value) if value else 0)
    if headers:
        for name, val in headers:
            size += 10 + len(name) * 4 + (len(val) if val else 0)
    return size


class RecordsBuilder:
    """Appends records to a preallocated buffer; ``build`` seals the batch."""

    __slots__ = (
        "_compressed",
        "base_timestamp",
        "buf",
        "capacity",
        "compression",
        "max_timestamp",
        "pos",
        "record_count",
    )

    def __init__(self, buf: bytearray, compression: int = 0) -> None:
        self.buf = buf
        self.capacity = len(buf)
        self.compression = compression
        self.pos = BATCH_OVERHEAD
        self.record_count = 0
        self.base_timestamp = -1
        self.max_timestamp = -1
        self._compressed: bytearray | None = None

    def try_append(
        self,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header] | None,
    ) -> bool:
        """Append one record; False if it does not fit (the batch is full).

        The first record always fits: the buffer was sized for it.
        """
        count = self.record_count
        if count:
            delta = timestamp_ms - self.base_timestamp
            ts = _ZZ[delta] if 0 <= delta < _HALF else zigzag(delta)
            if timestamp_ms > self.max_timestamp:
                self.max_timestamp = timestamp_ms
        else:
            self.base_timestamp = self.max_timestamp = timestamp_ms
            ts = _ZERO
        od = _ZZ[count] if count < _HALF else zigzag(count)
        if value is None:
            vl = _NULL
            value = b""
        else:
            vlen = len(value)
            vl = _ZZ[vlen] if vlen < _HALF else zigzag(vlen)
        if key is None and not headers:
            # attributes, null key and zero headers are one byte each
            body_len = 3 + len(ts) + len(od) + len(vl) + len(value)
            ln = _ZZ[body_len] if body_len < _HALF else zigzag(body_len)
            record = b"".join((ln, _ZERO, ts, od, _NULL, vl, value, _ZERO))
        else:
            if key is None:
                kp = _NULL
            else:
                klen = len(key)
                kp = (_ZZ[klen] if klen < _HALF else zigzag(klen)) + key
            hp = _encode_headers(headers) if headers else _ZERO
            body_len = 1 + len(ts) + len(od) + len(kp) + len(vl) + len(value) + len(hp)
            ln = _ZZ[body_len] if body_len < _HALF else zigzag(body_len)
            record = b"".join((ln, _ZERO, ts, od, kp, vl, value, hp))
        pos = self.pos
        end = pos + len(record)
        if end > self.capacity:
            if count:
                return False
            self.buf.extend(bytes(end - self.capacity))
            self.capacity = end
        self.buf[pos:end] = record
        self.pos = end
        self.record_count = count + 1
        return True

    @property
    def size_bytes(self) -> int:
        return self.pos

    def has_room_for(self, size: int) -> bool:
        return self.pos + size <= self.capacity

    def build(
        self,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        is_transactional: bool = False,
    ) -> memoryview:
        """Seal the batch: returns its bytes (valid until the buffer is reused)."""
        attributes = self.compression | (0x10 if is_transactional else 0)
        if self.compression:
            # Compressed once; a retry only rewrites the header (new sequence/epoch).
            out = self._compressed
            if out is None:
                payload = compress(
                    self.compression, memoryview(self.buf)[BATCH_OVERHEAD : self.pos]
                )
                out = bytearray(BATCH_OVERHEAD + len(payload))
                out[BATCH_OVERHEAD:] = payload
                self._compressed = out
            end = len(out)
        else:
            out = self.buf
            end = self.pos
        count = self.record_count
        _HEADER.pack_into(
            out,
            0,
            0,  # base offset, assigned by the broker
            end - 12,  # batch length: everything after this field
            -1,  # partition leader epoch, set by the broker
            2,  # magic
            0,  # crc placeholder
            attributes,
            count - 1,
            self.base_timestamp,
            self.max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
        view = memoryview(out)[:end]
        struct.pack_into(">I", out, 17, crc32c.crc32c(view[_CRC_START:]))
        return view
