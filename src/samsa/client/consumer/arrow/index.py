"""Field positions of every record of a whole fetch, as numpy vectors.

The columnar twin of ``fetch.record_index``: that module indexes one batch and
hands Python lists to the record builder; this one indexes all the batches
of one fetch response at once and keeps numpy arrays, which the Arrow
builder uses as they are.  One index per fetch instead of per batch matters:
the vector set-up costs about 40 µs, and a fetch of producer-sized batches
(16 KiB, some 150 records of 100 B) holds hundreds of them.

The one sequential step -- each record's start depends on the previous
record's length -- is the same table-driven walk as ``record_index`` uses,
done per batch (:func:`walk_records`) so that a batch the walk declines (a
record over 8 KiB, a long varint, damage) can be decoded on its own by the
record-at-a-time reader while the others stay vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from samsa.client.consumer.fetch.record_index import _ADVANCE, _headers, _varints

__all__ = ["FieldIndex", "index_fields", "walk_records"]

_Ints = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]
Headers = tuple[tuple[str, bytes | None], ...]


# A run of equal-sized records shorter than this is not worth another vector
# step: the rest of the batch is walked record by record instead.
_MIN_RUN = 32
# Guesses checked in one step: a window that grows while guesses hold, so a
# wrong guess wastes little and a long run still takes few steps.
_FIRST_WINDOW = 512


def walk_records(
    data: bytes | memoryview, u8: npt.NDArray[np.uint8], start: int, end: int, count: int
) -> _Ints | None:
    """End positions of the ``count`` records in ``data[start:end]``, or None to decode them one by one.

    Records of one batch are often the same size for long runs (fixed-size
    values; the size changes only where an offset delta or a key needs one
    more byte), so the walk guesses that the next records all have the size
    of the current one, checks every guessed start at once, and keeps the
    run up to the first wrong guess.  Where runs are short it falls back to
    the plain walk, one table lookup per record.
    """
    pos, left = start, count
    window = _FIRST_WINDOW
    runs: list[_Ints] = []
    try:
        while left:
            b, c = data[pos], data[pos + 1]
            stride = _ADVANCE[b | c << 8]
            room = (end - pos) // stride if stride <= end - pos else 0
            fits = min(left, room, window)
            if fits == 0:
                return None
            guessed = pos + stride * np.arange(fits, dtype=np.int64)
            # Same length varint bytes, same size (a sufficient test: cheaper than the table).
            wrong = u8[guessed] != b
            if b >= 0x80:
                wrong |= u8[guessed + 1] != c
            run = int(wrong.argmax()) if wrong.any() else fits
            window = window * 4 if run == fits else _FIRST_WINDOW
            runs.append(guessed[:run] + stride)
            pos += run * stride
            left -= run
            if left and run < _MIN_RUN:
                advance = _ADVANCE
                rest = [pos := pos + advance[data[pos] | data[pos + 1] << 8] for _ in range(left)]
                runs.append(np.array(rest, dtype=np.int64))
                break
    except IndexError:
        return None
    if pos != end:
        return None
    return runs[0] if len(runs) == 1 else np.concatenate(runs)


def _short_varints(u8: npt.NDArray[np.uint8], p: _Ints) -> tuple[_Ints | None, _Ints]:
    """Zig-zag varints at ``p`` and the positions after them; None when one is too long.

    Up to three bytes (every field of ordinary records, offset deltas of
    big batches included) in a few vector steps; longer varints go to ``record_index``'s general version.
    """
    b0 = u8[p]
    more = b0 >= 0x80
    if not more.any():
        u = b0.astype(np.int64)
        return (u >> 1) ^ -(u & 1), p + 1
    # A varint's next byte lies inside its record; one off the buffer means a
    # malformed record, and the IndexError sends the fetch to the record decoder.
    b1 = u8[p + 1]
    more2 = more & (b1 >= 0x80)
    u = b0.astype(np.int64)
    u = np.where(more, (u & 0x7F) | (b1.astype(np.int64) & 0x7F) << 7, u)
    if not more2.any():
        return (u >> 1) ^ -(u & 1), p + 1 + more
    b2 = u8[p + 2]
    if (more2 & (b2 >= 0x80)).any():
        return _varints(u8, p)
    u = np.where(more2, u | b2.astype(np.int64) << 14, u)
    return (u >> 1) ^ -(u & 1), p + 1 + more + more2


@dataclass(slots=True)
class FieldIndex:
    """Where each record's fields are: positions into one buffer, deltas from its batch."""

    key_start: _Ints
    key_end: _Ints
    key_null: _Bools
    value_start: _Ints
    value_end: _Ints
    value_null: _Bools
    offset_delta: _Ints
    timestamp_delta: _Ints
    headers: dict[int, Headers]  # record index -> headers, for records that have any


def index_fields(data: bytes | memoryview, starts: _Ints, ends: _Ints) -> FieldIndex | None:
    """Index the records at ``starts``/``ends`` (from :func:`walk_records`); None if one is malformed."""
    if not len(starts):
        empty = np.zeros(0, dtype=np.int64)
        nulls = np.zeros(0, dtype=np.bool_)
        return FieldIndex(empty, empty, nulls, empty, empty, nulls, empty, empty, {})
    u8 = np.frombuffer(data, dtype=np.uint8)
    try:
        return _index(data, u8, starts, ends)
    except IndexError:
        return None


def _index(
    data: bytes | memoryview, u8: npt.NDArray[np.uint8], starts: _Ints, ends: _Ints
) -> FieldIndex | None:
    # Body: length varint (1-2 bytes, as the walk allowed), attributes byte.
    p = starts + 1 + (u8[starts] >= 0x80) + 1
    ts_delta, p = _short_varints(u8, p)
    offset_delta, p = _short_varints(u8, p)
    key_length, p = _short_varints(u8, p)
    if ts_delta is None or offset_delta is None or key_length is None:
        return None
    if int(key_length.min()) < -1:
        return None
    key_start = p
    key_end = p + np.maximum(key_length, 0)
    value_length, p = _short_varints(u8, key_end)
    if value_length is None or int(value_length.min()) < -1:
        return None
    value_end = p + np.maximum(value_length, 0)
    # Records without headers end in a zero count byte right after the value.
    no_headers = u8[np.minimum(value_end, len(u8) - 1)] == 0
    headers: dict[int, Headers] = {}
    if not no_headers.all():
        # Header keys and values are read one by one, as bytes (memoryview slices would not be).
        whole = data if isinstance(data, bytes) else bytes(data)
        found = _headers(whole, value_end.tolist(), ends.tolist(), no_headers)
        if found is None:
            return None
        headers = found
    if not ((value_end + 1 == ends) | ~no_headers).all():
        return None
    return FieldIndex(
        key_start,
        key_end,
        key_length < 0,
        p,
        value_end,
        value_length < 0,
        offset_delta,
        ts_delta,
        headers,
    )
