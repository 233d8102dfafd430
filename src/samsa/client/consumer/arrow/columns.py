"""Arrow arrays built from numpy vectors and one buffer, without a Python object per row.

Keys and values sit in the fetched (or decompressed) bytes with each record's
header bytes between them, so they cannot be an Arrow ``binary`` array's data
as they are: a binary array's elements are contiguous.  The trick here is to
describe the buffer as an array of twice as many elements -- every field
followed by the gap up to the next field, whose offsets are just the field
starts and ends interleaved -- and let Arrow's ``take`` of the even elements
gather the fields into a fresh buffer in one C loop.  Nulls (length -1) are
empty spans there, and get a validity bitmap made with ``numpy.packbits``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from samsa.client.consumer.arrow.schema import require_pyarrow

__all__ = ["Rows", "binary_column", "constant_string_column", "headers_column", "row_count"]

_Ints = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]
Headers = tuple[tuple[str, bytes | None], ...]

_INT32_LIMIT = (1 << 31) - 1

# Which records become rows: a slice (the usual case, one run of offsets;
# indexing with it makes views, not copies) or an array of record indexes.
Rows = slice | _Ints


def row_count(rows: Rows) -> int:
    if isinstance(rows, slice):
        return int(rows.stop - rows.start)
    return len(rows)


def _indexes(rows: Rows) -> _Ints:
    if isinstance(rows, slice):
        return np.arange(rows.start, rows.stop, dtype=np.int64)
    return rows


def binary_column(
    source: Any, size: int, starts: _Ints, ends: _Ints, nulls: _Bools, rows: Rows
) -> Any:
    """``binary`` array of the fields ``source[starts[i]:ends[i]]`` for i in ``rows`` (null where ``nulls``).

    ``source`` is a pyarrow Buffer of ``size`` bytes; the starts and ends of
    all fields, in buffer order, must not overlap (they are positions of
    consecutive records).
    """
    pa = require_pyarrow()
    n = row_count(rows)
    selected_nulls = nulls[rows]
    null_count = int(np.count_nonzero(selected_nulls))
    if null_count == n:
        return pa.nulls(n, pa.binary())
    total = len(starts)
    wide = size > _INT32_LIMIT
    spans_offsets = np.empty(2 * total + 1, dtype=np.int64 if wide else np.int32)
    spans_offsets[0 : 2 * total : 2] = starts
    spans_offsets[1 : 2 * total : 2] = ends
    spans_offsets[-1] = ends[-1]
    spans = pa.Array.from_buffers(
        pa.large_binary() if wide else pa.binary(),
        2 * total,
        [None, pa.py_buffer(spans_offsets), source],
    )
    if isinstance(rows, slice):
        even = np.arange(2 * rows.start, 2 * rows.stop, 2, dtype=np.int64)
    else:
        even = rows * 2
    taken = spans.take(pa.array(even))
    if wide:
        taken = taken.cast(pa.binary())
    if not null_count:
        return taken
    validity = pa.py_buffer(np.packbits(~selected_nulls, bitorder="little"))
    _, offsets, data = taken.buffers()
    return pa.Array.from_buffers(pa.binary(), n, [validity, offsets, data], null_count=null_count)


def constant_string_column(text: str, n: int) -> Any:
    """``string`` array of ``n`` copies of ``text`` (the topic), built with two vector operations."""
    pa = require_pyarrow()
    raw = text.encode()
    offsets = np.arange(n + 1, dtype=np.int32) * len(raw)
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw * n)]
    )


def headers_column(headers: dict[int, Headers], rows: Rows, list_type: Any) -> Any:
    """``list<struct<key, value>>`` array of the records ``rows``: empty lists for records without headers.

    ``headers`` maps record index (as in ``rows``) to that record's headers.
    Only records that carry headers cost Python work.
    """
    pa = require_pyarrow()
    n = row_count(rows)
    counts = np.zeros(n, dtype=np.int32)
    keys: list[str] = []
    values: list[bytes | None] = []
    if headers:
        row_of = dict(zip(_indexes(rows).tolist(), range(n), strict=True))
        for row, record_headers in sorted(
            (row_of[i], h) for i, h in headers.items() if i in row_of
        ):
            counts[row] = len(record_headers)
            for key, value in record_headers:
                keys.append(key)
                values.append(value)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    struct_type = list_type.value_type
    entries = pa.StructArray.from_arrays(
        [pa.array(keys, pa.string()), pa.array(values, pa.binary())],
        fields=[struct_type.field(0), struct_type.field(1)],
    )
    return pa.ListArray.from_arrays(pa.array(offsets), entries, type=list_type)
