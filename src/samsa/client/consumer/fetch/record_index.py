"""Where every record's fields sit in a batch, found for all records at once.

Why this exists: read one record at a time in Python, a 100-byte record costs
about 0.9 µs, nearly all of it in the five or six varints in front of its key
and value.  So :func:`index_records` walks just the length varints in a tight
Python loop (one table lookup per record), and numpy finds every other field
of every record with a few vector operations over the record starts (the
walk's table and the vector varints are ``protocol.batches.record_walk``'s).  The consumer then cuts keys and values out
of the batch and builds its records with C-level ``map``/``zip`` (see
:func:`records_between`), with no Python step per record.

The index covers the shape records have in practice: varints of at most a few
bytes and record lengths under 2 MiB.  For anything else -- a longer varint, a
malformed record, a count that does not match the bytes -- it returns None and
the caller decodes the batch with the record-at-a-time loop, which also names
the exact fault.  Small batches are not worth the vector set-up; the caller
decides (:data:`MIN_RECORDS`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from samsa.errors import DecodeError
from samsa.protocol.batches.record_reader import _read_headers
from samsa.protocol.batches.record_walk import ADVANCE as _ADVANCE
from samsa.protocol.batches.record_walk import varints as _varints

__all__ = ["MIN_RECORDS", "RecordIndex", "index_records", "records_between"]

# Below this many records the fixed cost of the vector operations (about
# 40 µs a batch) is more than the per-record loop would spend.
MIN_RECORDS = 64

_Ints = npt.NDArray[np.int64]

_SAFE = 1 << 62


class RecordIndex:
    """Field positions of one batch's records, as Python lists ready for slicing.

    ``key_nulls``/``value_nulls`` are the sorted indexes of records whose key
    or value is null (their start and end are both 0); ``headers`` maps the
    index of every record that has headers to them.
    """

    __slots__ = (
        "count",
        "headers",
        "key_ends",
        "key_nulls",
        "key_starts",
        "offsets",
        "timestamps",
        "value_ends",
        "value_nulls",
        "value_starts",
    )

    def __init__(
        self,
        count: int,
        offsets: Sequence[int],
        timestamps: list[int],
        keys: tuple[list[int], list[int], list[int]],
        values: tuple[list[int], list[int], list[int]],
        headers: dict[int, tuple[tuple[str, bytes | None], ...]],
    ) -> None:
        self.count = count
        self.offsets = offsets
        self.timestamps = timestamps
        self.key_starts, self.key_ends, self.key_nulls = keys
        self.value_starts, self.value_ends, self.value_nulls = values
        self.headers = headers


def index_records(
    data: bytes, pos: int, end: int, count: int, base_offset: int, base_timestamp: int
) -> RecordIndex | None:
    """Index the ``count`` records in ``data[pos:end]``, or None to decode them one by one."""
    if not (abs(base_offset) < _SAFE and abs(base_timestamp) < _SAFE):
        return None  # int64 arithmetic below could wrap; Python's ints do not
    try:
        return _index(data, pos, end, count, base_offset, base_timestamp)
    except (IndexError, DecodeError):
        return None


def _index(
    data: bytes, pos: int, end: int, count: int, base_offset: int, base_timestamp: int
) -> RecordIndex | None:
    # The one chain: record ends, from the length varints.  A varint that is
    # too long, a negative length or a count larger than the bytes sends the
    # position far past ``end`` (or off the buffer: IndexError).
    advance = _ADVANCE
    start = pos
    ends = [pos := pos + advance[data[pos] | data[pos + 1] << 8] for _ in range(count)]
    if pos != end:
        return None
    u8 = np.frombuffer(data, dtype=np.uint8)
    e = np.array(ends, dtype=np.int64)
    record_starts = np.empty_like(e)
    record_starts[0] = start
    record_starts[1:] = e[:-1]
    # Body: length varint (1-2 bytes, as the walk allowed), attributes byte.
    p = record_starts + 1 + (u8[record_starts] >= 0x80) + 1
    ts_delta, p = _varints(u8, p)
    offset_delta, p = _varints(u8, p)
    key_length, p = _varints(u8, p)
    if ts_delta is None or offset_delta is None or key_length is None:
        return None
    key_start = p
    key_end = p + np.maximum(key_length, 0)
    value_length, p = _varints(u8, key_end)
    if value_length is None:
        return None
    value_start = p
    value_end = p + np.maximum(value_length, 0)
    if int(key_length.min()) < -1 or int(value_length.min()) < -1:
        return None
    # Records without headers end in a zero count byte right after the value.
    no_headers = u8[np.minimum(value_end, len(u8) - 1)] == 0
    if not no_headers.all():
        headers = _headers(data, value_end.tolist(), ends, no_headers)
        if headers is None:
            return None
    else:
        headers = {}
    ends_ok = (value_end + 1 == e) | ~no_headers
    if not ends_ok.all():
        return None
    if np.array_equal(offset_delta, np.arange(count)):
        offsets: Sequence[int] = range(base_offset, base_offset + count)
    else:
        offsets = (offset_delta + base_offset).tolist()
    return RecordIndex(
        count,
        offsets,
        (ts_delta + base_timestamp).tolist(),
        _slices(key_start, key_end, key_length),
        _slices(value_start, value_end, value_length),
        headers,
    )


def _slices(starts: _Ints, ends: _Ints, lengths: _Ints) -> tuple[list[int], list[int], list[int]]:
    """Start and end lists for slicing, with null fields (length -1) as 0:0, and their indexes."""
    nulls = np.flatnonzero(lengths < 0)
    if len(nulls):
        starts = np.where(lengths < 0, 0, starts)
        ends = np.where(lengths < 0, 0, ends)
    return starts.tolist(), ends.tolist(), nulls.tolist()


def _headers(
    data: bytes, value_ends: list[int], ends: list[int], no_headers: npt.NDArray[np.bool_]
) -> dict[int, tuple[tuple[str, bytes | None], ...]] | None:
    """Headers of the records that have them, read one by one; None if one overruns."""
    found = {}
    for i in np.flatnonzero(~no_headers).tolist():
        headers, after = _read_headers(data, value_ends[i])
        if after != ends[i]:
            return None
        found[i] = tuple(headers)
    return found


def records_between(
    index: RecordIndex,
    data: bytes,
    first: int,
    last: int,
    fields: tuple[Any, str, int, int, int | None, int | None],
) -> list[Any]:
    """Records ``first``..``last - 1`` of the batch, built without a Python step per record.

    ``fields`` is (record class, topic, partition, timestamp type, fixed
    timestamp or None, leader epoch); the class is a tuple subclass built with
    ``tuple.__new__`` from (topic, partition, offset, timestamp, timestamp
    type, key, value, headers, leader epoch).
    """
    cls, topic, partition, timestamp_type, fixed_timestamp, leader_epoch = fields
    n = last - first
    keys = _fields(
        data, index.key_starts, index.key_ends, index.key_nulls, first, last, index.count
    )
    values = _fields(
        data, index.value_starts, index.value_ends, index.value_nulls, first, last, index.count
    )
    headers: Any = repeat((), n)
    if index.headers:
        found = index.headers
        headers = [found.get(i, ()) for i in range(first, last)]
    timestamps: Any = (
        repeat(fixed_timestamp, n) if fixed_timestamp is not None else index.timestamps[first:last]
    )
    return list(
        map(
            tuple.__new__,
            repeat(cls, n),
            zip(
                repeat(topic, n),
                repeat(partition, n),
                index.offsets[first:last],
                timestamps,
                repeat(timestamp_type, n),
                keys,
                values,
                headers,
                repeat(leader_epoch, n),
                strict=True,
            ),
        )
    )


def _fields(
    data: bytes,
    starts: list[int],
    ends: list[int],
    nulls: list[int],
    first: int,
    last: int,
    count: int,
) -> Any:
    """Keys or values ``first``..``last - 1``: byte slices, None where null."""
    if len(nulls) == count:
        return repeat(None, last - first)
    if last - first == 1:
        out: Any = [data[starts[first] : ends[first]]]
    else:
        # itemgetter cuts every slice in one C loop, without map's per-item step.
        out = itemgetter(*map(slice, starts[first:last], ends[first:last]))(data)
    if nulls:
        within = nulls[bisect_left(nulls, first) : bisect_left(nulls, last)]
        if within:
            out = list(out)
            for i in within:
                out[i - first] = None
    return out
