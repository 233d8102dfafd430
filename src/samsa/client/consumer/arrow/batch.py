"""One partition's fetched bytes as a ``pyarrow.RecordBatch``, built straight from the bytes.

The columnar read path.  Where the record decoder makes a ``ConsumerRecord``
per record, this makes vectors: batch headers are read (as the decoder does),
batches to hand out are picked (control batches, aborted transactions under
read_committed and batches wholly outside the wanted offsets are skipped),
compressed batches are decompressed into one buffer, every record's field
positions come from one numpy index over the whole fetch (``arrow.index``),
and the columns are made from those vectors (``arrow.columns``): offsets and
timestamps are numpy arrays, keys and values are gathered by Arrow from the
buffer.  No Python object is made per record, except for records with
headers when headers are asked for, and for the rare batch the index declines
(a record over 8 KiB, unusual varints, damage): that batch is decoded by the
record-at-a-time reader, which also names the fault of a damaged one.

Offsets below ``start_offset`` (a batch that begins before the fetch offset)
and from ``end_offset`` on are left out; gaps left by compaction need nothing,
as offsets come from the records themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from samsa.client.consumer.arrow.columns import (
    Rows,
    binary_column,
    constant_string_column,
    headers_column,
    row_count,
)
from samsa.client.consumer.arrow.index import FieldIndex, index_fields, walk_records
from samsa.client.consumer.arrow.schema import arrow_schema, require_pyarrow
from samsa.client.consumer.fetch.aborted import AbortedTransactions
from samsa.errors import DecodeError
from samsa.protocol.batches.compression import Compression, decompress
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    iter_batches,
    validate_batch,
)
from samsa.protocol.batches.record_reader import decode_batch

__all__ = ["FetchedColumns", "fetched_to_arrow", "next_fetch_offset"]

_Ints = npt.NDArray[np.int64]
# Fetched bytes: the response's own buffer (a memoryview, no copy) or bytes.
Buffer = bytes | memoryview
Headers = tuple[tuple[str, bytes | None], ...]


def next_fetch_offset(batches: Sequence[tuple[int, BatchHeader]], fetch_offset: int) -> int:
    """Where the next fetch starts: past the last complete batch (control batches included)."""
    next_offset = fetch_offset
    for _pos, header in batches:
        last = header.base_offset + header.last_offset_delta + 1
        if last > next_offset:
            next_offset = last
    return next_offset


class FetchedColumns:
    """Every handed-out record of one fetch as vectors, before they become Arrow arrays.

    Rows are in offset order.  ``key_start``/``key_end``/... index into
    ``source`` (a pyarrow Buffer); ``rows`` selects the records within the
    wanted offsets.
    """

    __slots__ = (
        "fields",
        "offsets",
        "rows",
        "source",
        "source_size",
        "timestamp_types",
        "timestamps",
    )

    def __init__(
        self,
        source: Any,
        source_size: int,
        fields: FieldIndex,
        offsets: _Ints,
        timestamps: _Ints,
        timestamp_types: npt.NDArray[np.int32],
        rows: Rows,
    ) -> None:
        self.source = source
        self.source_size = source_size
        self.fields = fields
        self.offsets = offsets
        self.timestamps = timestamps
        self.timestamp_types = timestamp_types
        self.rows = rows

    def to_arrow(self, topic: str, partition: int, include_headers: bool, spark: bool) -> Any:
        pa = require_pyarrow()
        f, rows = self.fields, self.rows
        n = row_count(rows)
        schema = arrow_schema(include_headers, spark)
        timestamps = self.timestamps[rows]
        if spark:
            timestamps = timestamps * 1000
        arrays = [
            binary_column(self.source, self.source_size, f.key_start, f.key_end, f.key_null, rows),
            binary_column(
                self.source, self.source_size, f.value_start, f.value_end, f.value_null, rows
            ),
            constant_string_column(topic, n),
            pa.array(np.full(n, partition, dtype=np.int32)),
            pa.array(self.offsets[rows]),
            pa.Array.from_buffers(
                schema.field("timestamp").type, n, [None, pa.py_buffer(timestamps)]
            ),
            pa.array(self.timestamp_types[rows]),
        ]
        if include_headers:
            arrays.append(headers_column(f.headers, rows, schema.field("headers").type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


def fetched_to_arrow(
    data: Buffer,
    *,
    topic: str,
    partition: int,
    start_offset: int,
    end_offset: int | None = None,
    aborted: Sequence[tuple[int, int]] = (),
    check_crcs: bool = True,
    include_headers: bool = False,
    spark: bool = False,
) -> tuple[Any, int]:
    """The records of ``data`` with ``start_offset <= offset < end_offset``, and the next fetch offset.

    ``data`` is one partition's ``records`` from a Fetch response (a partial
    trailing batch is ignored); ``aborted`` its ``(first offset, producer
    id)`` pairs under read_committed, empty otherwise.
    """
    batches = list(iter_batches(data))
    columns = fetched_columns(data, batches, start_offset, end_offset, aborted, check_crcs)
    batch = columns.to_arrow(topic, partition, include_headers, spark)
    return batch, next_fetch_offset(batches, start_offset)


def fetched_columns(
    data: Buffer,
    batches: Sequence[tuple[int, BatchHeader]],
    start_offset: int,
    end_offset: int | None,
    aborted: Sequence[tuple[int, int]],
    check_crcs: bool,
) -> FetchedColumns:
    """Pick the batches to hand out and index all their records at once."""
    pa = require_pyarrow()
    transactions = AbortedTransactions(aborted)
    kept: list[tuple[int, BatchHeader]] = []
    for pos, header in batches:
        if check_crcs:
            validate_batch(data, pos, header)
        if transactions.drops(data, pos, header):
            continue
        if header.attributes & CONTROL_MASK or header.records_count == 0:
            continue
        if header.records_count < 0:
            raise DecodeError(f"negative record count {header.records_count}")
        if header.base_offset + header.last_offset_delta < start_offset:
            continue
        if end_offset is not None and header.base_offset >= end_offset:
            continue
        kept.append((pos, header))
    source, regions = _record_regions(data, kept)
    walked: list[int] = []  # indexes into kept
    ends: list[_Ints] = []
    declined: list[int] = []
    u8 = np.frombuffer(source, dtype=np.uint8)
    for i, (start, end) in enumerate(regions):
        found = walk_records(source, u8, start, end, kept[i][1].records_count)
        if found is None:
            declined.append(i)
        else:
            walked.append(i)
            ends.append(found)
    fields = _index_walked(source, regions, kept, walked, ends)
    if fields is None:  # malformed somewhere: decode every batch one by one to name it
        walked, declined, fields = [], list(range(len(kept))), _empty_fields()
    offsets, timestamps, types = _batch_columns(kept, walked, fields)
    if declined:
        source, fields, offsets, timestamps, types = _add_decoded(
            data, source, kept, declined, fields, offsets, timestamps, types
        )
    rows: Rows
    if declined:  # decoded records were added after the walked ones: restore offset order
        wanted = offsets >= start_offset
        if end_offset is not None:
            wanted &= offsets < end_offset
        picked = np.flatnonzero(wanted)
        rows = picked[np.argsort(offsets[picked], kind="stable")]
    else:  # offsets ascend: the wanted ones are one run, and slices are views
        first = int(np.searchsorted(offsets, start_offset))
        last = len(offsets) if end_offset is None else int(np.searchsorted(offsets, end_offset))
        rows = slice(first, max(first, last))
    return FetchedColumns(
        pa.py_buffer(source), len(source), fields, offsets, timestamps, types, rows
    )


def _record_regions(
    data: Buffer, kept: list[tuple[int, BatchHeader]]
) -> tuple[Buffer, list[tuple[int, int]]]:
    """One buffer holding every kept batch's records, and where each batch's records are in it.

    Without compression that is the fetched bytes themselves (no copy);
    otherwise the batches' records, decompressed, joined into one buffer.
    """
    spans = [(pos + BATCH_HEADER_SIZE, pos + h.batch_length + LOG_OVERHEAD) for pos, h in kept]
    if not any(h.attributes & COMPRESSION_MASK for _pos, h in kept):
        return data, spans
    view = memoryview(data)
    pieces: list[bytes | memoryview] = []
    regions = []
    at = 0
    for (start, end), (_pos, header) in zip(spans, kept, strict=True):
        codec = header.attributes & COMPRESSION_MASK
        piece = view[start:end] if codec == Compression.NONE else decompress(codec, view[start:end])
        pieces.append(piece)
        regions.append((at, at + len(piece)))
        at += len(piece)
    return b"".join(pieces), regions


def _index_walked(
    source: Buffer,
    regions: list[tuple[int, int]],
    kept: list[tuple[int, BatchHeader]],
    walked: list[int],
    ends: list[_Ints],
) -> FieldIndex | None:
    record_ends = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
    record_starts = np.empty_like(record_ends)
    if len(record_ends):
        record_starts[1:] = record_ends[:-1]
        counts = np.array([kept[i][1].records_count for i in walked], dtype=np.int64)
        firsts = np.zeros(len(walked), dtype=np.int64)
        np.cumsum(counts[:-1], out=firsts[1:])
        record_starts[firsts] = [regions[i][0] for i in walked]
    return index_fields(source, record_starts, record_ends)


def _batch_columns(
    kept: list[tuple[int, BatchHeader]], walked: list[int], fields: FieldIndex
) -> tuple[_Ints, _Ints, npt.NDArray[np.int32]]:
    """Offsets, timestamps and timestamp types of the walked records, from their batches' headers."""
    headers = [kept[i][1] for i in walked]
    counts = np.array([h.records_count for h in headers], dtype=np.int64)
    base_offsets = np.repeat(np.array([h.base_offset for h in headers], dtype=np.int64), counts)
    log_append = [bool(h.attributes & TIMESTAMP_TYPE_MASK) for h in headers]
    base_ts = np.array(
        [
            h.max_timestamp if fixed else h.base_timestamp
            for h, fixed in zip(headers, log_append, strict=True)
        ],
        dtype=np.int64,
    )
    # Log-append time: every record has the batch's max timestamp, whatever its delta says.
    delta_factor = np.repeat(np.array([not fixed for fixed in log_append], dtype=np.int64), counts)
    offsets = base_offsets + fields.offset_delta
    timestamps = np.repeat(base_ts, counts) + fields.timestamp_delta * delta_factor
    types = np.repeat(np.array(log_append, dtype=np.int32), counts)
    return offsets, timestamps, types


def _empty_fields() -> FieldIndex:
    empty = np.zeros(0, dtype=np.int64)
    nulls = np.zeros(0, dtype=np.bool_)
    return FieldIndex(empty, empty, nulls, empty, empty, nulls, empty, empty, {})


def _add_decoded(
    data: Buffer,
    source: Buffer,
    kept: list[tuple[int, BatchHeader]],
    declined: list[int],
    fields: FieldIndex,
    offsets: _Ints,
    timestamps: _Ints,
    types: npt.NDArray[np.int32],
) -> tuple[Buffer, FieldIndex, _Ints, _Ints, npt.NDArray[np.int32]]:
    """Append the declined batches' records, decoded one by one, after the indexed ones.

    Their keys and values are copied to the end of the buffer so that every
    field still lies in one buffer, in buffer order.
    """
    pieces: list[Buffer] = [source]
    at = len(source)
    key_start: list[int] = []
    key_end: list[int] = []
    key_null: list[bool] = []
    value_start: list[int] = []
    value_end: list[int] = []
    value_null: list[bool] = []
    new_offsets: list[int] = []
    new_timestamps: list[int] = []
    new_types: list[int] = []
    headers = dict(fields.headers)
    row = len(offsets)
    for i in declined:
        pos, header = kept[i]
        timestamp_type = (header.attributes >> 3) & 1
        for record in decode_batch(data, pos, header):
            for value, starts, ends, nulls in (
                (record.key, key_start, key_end, key_null),
                (record.value, value_start, value_end, value_null),
            ):
                starts.append(at)
                if value is not None:
                    pieces.append(value)
                    at += len(value)
                ends.append(at)
                nulls.append(value is None)
            new_offsets.append(record.offset)
            new_timestamps.append(record.timestamp)
            new_types.append(timestamp_type)
            if record.headers:
                headers[row] = tuple(record.headers)
            row += 1

    def ints(old: _Ints, new: list[int]) -> _Ints:
        return np.concatenate([old, np.array(new, dtype=np.int64)])

    def bools(old: npt.NDArray[np.bool_], new: list[bool]) -> npt.NDArray[np.bool_]:
        return np.concatenate([old, np.array(new, dtype=np.bool_)])

    merged = FieldIndex(
        ints(fields.key_start, key_start),
        ints(fields.key_end, key_end),
        bools(fields.key_null, key_null),
        ints(fields.value_start, value_start),
        ints(fields.value_end, value_end),
        bools(fields.value_null, value_null),
        fields.offset_delta,  # deltas are not needed past this point
        fields.timestamp_delta,
        headers,
    )
    return (
        b"".join(pieces),
        merged,
        ints(offsets, new_offsets),
        ints(timestamps, new_timestamps),
        np.concatenate([types, np.array(new_types, dtype=np.int32)]),
    )
