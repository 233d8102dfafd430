"""Where records sit inside a v2 batch's records section, found with numpy instead of a loop.

Read one record at a time in Python, a 100-byte record costs about 0.9 µs,
nearly all of it in the varints in front of its key and value.  Only one
thing in a batch is a true chain: each record's start depends on the length
of the one before it.  So the record ends are found by walking just the
length varints (:func:`walk_records`: one table lookup per record, or a
vector check of a guessed run of equal-sized records), and every other
field of every record comes from a few vector operations over those
positions (:func:`varints`).

Shared by the consumer's record index, its columnar reader and the broker's
schema id check (which must find each value's first bytes without decoding
the records).  Everything here covers the shapes records have in practice
(varints of a few bytes, records under 2 MiB); for anything else it answers
None and the caller walks the batch record by record, which also names the
fault of a damaged one.
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt

__all__ = ["ADVANCE", "short_varints", "varints", "walk_records"]

_Ints = npt.NDArray[np.int64]

# How far the position moves past a record whose length varint starts with the
# bytes (b, c), indexed by ``b | c << 8``: the varint's width plus the length
# it encodes.  Varints of three or more bytes, and negative lengths, map to
# an advance far past any buffer, so the walk fails and the caller falls back.
_PAST_ANY_BUFFER = 1 << 62


def _advance_table() -> list[int]:
    table = [_PAST_ANY_BUFFER] * (1 << 16)
    for b in range(256):
        for c in range(256):
            if b < 0x80:
                u, width = b, 1
            elif c < 0x80:
                u, width = (b & 0x7F) | c << 7, 2
            else:
                continue
            length = (u >> 1) ^ -(u & 1)
            if length >= 0:
                table[b | c << 8] = width + length
    return table


ADVANCE = _advance_table()
_PAIR = struct.Struct("<H").unpack_from
"""The two bytes at a position as ``b | c << 8`` in one call: a third faster than two
indexings, in the one loop that runs per record."""

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
            stride = ADVANCE[b | c << 8]
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
                advance, pair = ADVANCE, _PAIR
                rest = [pos := pos + advance[pair(data, pos)[0]] for _ in range(left)]
                runs.append(np.fromiter(rest, dtype=np.int64, count=left))
                break
    except (IndexError, struct.error):
        return None
    if pos != end:
        return None
    if not runs:
        return np.zeros(0, dtype=np.int64)
    return runs[0] if len(runs) == 1 else np.concatenate(runs)


def varints(u8: npt.NDArray[np.uint8], p: _Ints) -> tuple[_Ints | None, _Ints]:
    """The zig-zag varints starting at positions ``p`` and the positions after them.

    At most four bytes each (values within +-2**27); None when one is longer.
    """
    b = u8[p].astype(np.int64)
    more = b >= 0x80
    if not more.any():
        return (b >> 1) ^ -(b & 1), p + 1
    value = b & 0x7F
    width = np.ones_like(p)
    for shift in (7, 14, 21):
        b = u8[np.where(more, p + width, p)].astype(np.int64)
        value |= np.where(more, (b & 0x7F) << shift, 0)
        width += more
        more &= b >= 0x80
        if not more.any():
            return (value >> 1) ^ -(value & 1), p + width
    return None, p


def short_varints(u8: npt.NDArray[np.uint8], p: _Ints) -> tuple[_Ints | None, _Ints]:
    """Zig-zag varints at ``p`` and the positions after them; None when one is too long.

    Up to three bytes (every field of ordinary records, offset deltas of
    big batches included) in a few vector steps; longer varints go to :func:`varints`.
    """
    b0 = u8[p]
    more = b0 >= 0x80
    if not more.any():
        u = b0.astype(np.int64)
        return (u >> 1) ^ -(u & 1), p + 1
    # A varint's next byte lies inside its record; one off the buffer means a
    # malformed record, and the IndexError sends the caller to the record decoder.
    b1 = u8[p + 1]
    more2 = more & (b1 >= 0x80)
    u = b0.astype(np.int64)
    u = np.where(more, (u & 0x7F) | (b1.astype(np.int64) & 0x7F) << 7, u)
    if not more2.any():
        return (u >> 1) ^ -(u & 1), p + 1 + more
    b2 = u8[p + 2]
    if (more2 & (b2 >= 0x80)).any():
        return varints(u8, p)
    u = np.where(more2, u | b2.astype(np.int64) << 14, u)
    return (u >> 1) ^ -(u & 1), p + 1 + more + more2
