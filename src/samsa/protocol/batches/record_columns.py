"""Encode a whole batch's records from columns, the producer's bulk encoder.

The producer keeps a batch's records as columns -- ``timestamps[i]`` and
``values[i]`` for every record, ``extras[i] = (key, headers)`` only for the
records that have either -- and encodes them once, on its Sender thread, when
the batch is drained.  That thread shares the GIL with ``send()``, so every
nanosecond spent here is one the application's thread does not get.

Most batches are runs of keyless, header-less records sent within the same
millisecond.  Inside such a run every record is

    length | 0x00 attributes | ts delta | offset delta | 0x01 null key | value length | value | 0x00

where only the offset delta (``i``), the value and its length vary.  A run is
therefore encoded without a Python-level step per record: the offset deltas
are a slice of a varint table, the value lengths and record lengths come from
tables indexed through ``map``, and ``zip`` interleaves the pieces for one
``join`` -- about a quarter of the per-record loop's cost.  Everything else
(keys, headers, null values, timestamps out of the table's range, short runs)
takes the per-record loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import cast

from samsa.protocol.batches.record_builder import (
    _NULL,
    _TABLE_SIZE,
    _VARINT,
    _ZERO,
    RecordHeader,
    encode_record_body,
)
from samsa.protocol.primitives import varint_bytes

__all__ = ["encode_records"]

Extras = Mapping[int, tuple[bytes | None, Sequence[RecordHeader] | None]]

# attributes byte + timestamp delta, for deltas within the table.
_ATTR_TS: list[bytes] = [_ZERO + v for v in _VARINT[:_TABLE_SIZE]]
# null key + value length, by value length.
_NULLKEY_VLEN: list[bytes] = [_NULL + v for v in _VARINT[:_TABLE_SIZE]]
# _RECORD_LENGTHS[w][s]: the length varint of a keyless, header-less record
# whose attributes, timestamp delta and offset delta take w bytes and whose
# value takes s (w + null key + value length + s + header count).
_RECORD_LENGTHS: dict[int, list[bytes]] = {
    w: [_VARINT[w + 2 + len(v) + s] for s, v in enumerate(_VARINT[: _TABLE_SIZE - 16])]
    for w in range(3, 6)
}
# Values below this size keep every record length of a run inside the table:
# attributes 1, ts delta <= 2, offset delta <= 2, null key 1, value length <= 2,
# header count 1.
_RUN_MAX_VALUE = _TABLE_SIZE - 16
# Offset deltas 0..63 take one varint byte and 64..8191 two; a run is split at
# these points so that its records' lengths differ only by their values'.
_OFFSET_DELTA_WIDTHS = ((0, 64, 1), (64, 8192, 2))
# Shorter runs cost more in set-up than the per-record loop does.
_MIN_RUN = 8


def encode_records(
    timestamps: Sequence[int], values: Sequence[bytes | None], extras: Extras | None = None
) -> tuple[bytes, int]:
    """Encode the records section of a v2 batch; returns it and the max timestamp.

    The timestamp delta is against ``timestamps[0]`` and record ``i`` gets
    offset delta ``i``.
    """
    if len(timestamps) != len(values):
        raise ValueError(f"{len(timestamps)} timestamps for {len(values)} values")
    base = timestamps[0]
    out: list[bytes] = []
    sizes = None if extras else _value_sizes(values)
    if sizes is None:
        _encode_each(out, timestamps, values, extras, base, 0, len(values))
        return b"".join(out), max(timestamps)
    present = cast("Sequence[bytes]", values)  # sizes exist: no value is None
    pending = pos = 0  # records [pending, pos) still wait for the per-record loop
    max_ts = base
    for ts, group in groupby(timestamps):
        end = pos + len(list(group))
        if ts > max_ts:
            max_ts = ts
        delta = ts - base
        if end - pos >= _MIN_RUN and 0 <= delta < _TABLE_SIZE and pos < 8192:
            if pending < pos:
                _encode_each(out, timestamps, values, None, base, pending, pos)
            stop = min(end, 8192)
            _encode_run(out, _ATTR_TS[delta], present, sizes, pos, stop)
            pending = stop
        pos = end
    if pending < pos:
        _encode_each(out, timestamps, values, None, base, pending, pos)
    return b"".join(out), max_ts


def _value_sizes(values: Sequence[bytes | None]) -> list[int] | None:
    """Every value's length, or None when a run cannot take them (nulls, huge values)."""
    try:
        sizes = list(map(len, values))  # type: ignore[arg-type]
    except TypeError:  # a null value (tombstone)
        return None
    if sizes and max(sizes) >= _RUN_MAX_VALUE:
        return None
    return sizes


def _encode_run(
    out: list[bytes],
    prefix: bytes,
    values: Sequence[bytes],
    sizes: list[int],
    start: int,
    stop: int,
) -> None:
    """Records ``start..stop-1``: keyless, header-less, one timestamp, small values.

    The pieces are laid out by extended-slice assignment, a C loop per column:
    zip and chain would cost three times as much.
    """
    table = _VARINT
    for lo, hi, width in _OFFSET_DELTA_WIDTHS:
        a, b = max(start, lo), min(stop, hi)
        if a >= b:
            continue
        n = b - a
        run_sizes = sizes[a:b]
        lengths = _RECORD_LENGTHS[len(prefix) + width]
        size = run_sizes[0]
        if min(run_sizes) == size == max(run_sizes):
            # One record length: the bytes between two values are a constant
            # piece and the offset delta.
            head = lengths[size] + prefix
            pieces: list[bytes] = [_ZERO + head] * (4 * n)
            pieces[0] = head
            pieces[1::4] = table[a:b]
            pieces[2::4] = [_NULLKEY_VLEN[size]] * n
            pieces[3::4] = values[a:b]
            pieces.append(_ZERO)
        else:
            pieces = [_ZERO] * (6 * n)
            pieces[0::6] = list(map(lengths.__getitem__, run_sizes))
            pieces[1::6] = [prefix] * n
            pieces[2::6] = table[a:b]
            pieces[3::6] = list(map(_NULLKEY_VLEN.__getitem__, run_sizes))
            pieces[4::6] = values[a:b]
        out += pieces


def _encode_each(
    out: list[bytes],
    timestamps: Sequence[int],
    values: Sequence[bytes | None],
    extras: Extras | None,
    base_timestamp: int,
    start: int,
    stop: int,
) -> None:
    """Records ``start..stop-1`` one by one: any key, value, headers and timestamp.

    Keyless, header-less records with small deltas still skip the general
    record encoder: their pieces come from the tables.
    """
    extend = out.extend
    table = _VARINT
    limit = _TABLE_SIZE
    attr_ts = _ATTR_TS
    nullkey_vlen = _NULLKEY_VLEN
    last_ts = None
    prefix = b""
    fixed = 0  # attributes + timestamp delta + the header count byte
    for i in range(start, stop):
        ts = timestamps[i]
        value = values[i]
        if ts != last_ts:
            last_ts = ts
            delta = ts - base_timestamp
            prefix = attr_ts[delta] if 0 <= delta < limit else _ZERO + varint_bytes(delta)
            fixed = len(prefix) + 1
        if extras and i in extras:
            key, headers = extras[i]
        elif value is not None and i < limit:
            size = len(value)
            if size < limit:
                od = table[i]
                vl = nullkey_vlen[size]
                size += fixed + len(od) + len(vl)
                extend(
                    (
                        table[size] if size < limit else varint_bytes(size),
                        prefix,
                        od,
                        vl,
                        value,
                        _ZERO,
                    )
                )
                continue
            key = headers = None
        else:
            key = headers = None
        body = encode_record_body(prefix, i, key, value, headers)
        size = len(body)
        extend((table[size] if size < limit else varint_bytes(size), body))
