"""Remote segments read without a broker: front to back in bounded windows, and their aborted transactions.

A reader outside the brokers -- a Spark executor reading tiered history
straight from the object store -- reads a remote segment, or the part of it
an offset range covers, in offset order.  Segments are up to a GiB, so it
never holds one whole: ``scan_segment`` range-reads windows of ``window``
bytes and hands out the whole record batches of each; a batch cut by a
window's end is carried over and completed by the next read, which grows to
hold a batch larger than a window.  The next window's read is in flight while
the caller works on the current one, so the store and the decoder overlap.
The bytes are the store's, never re-encoded: the caller decodes them exactly
as it decodes a Fetch answer.

Where a scan starts and stops comes from the segment's offset index object
(``read_bounds``): from the last indexed batch at or before the first offset
wanted, to the indexed batch after the first one at or past the end (Kafka
and Samsa index a batch's position under its last offset, one entry every
``index.interval.bytes``), so at most about one index interval is read on
either side of the range.

``aborted_transactions`` reads a segment's transaction index object: the
transactions whose ABORT marker the segment holds, which a read_committed
reader needs as a broker's Fetch answer carries them.
"""

from __future__ import annotations

import asyncio
import bisect
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass

from samsa.protocol.batches.record_batch import LENGTH_OFFSET, LOG_OVERHEAD, iter_batches
from samsa.storage.segments.transaction_index import AbortedTxn, parse_entries
from samsa.tiered.metadata.model import RemoteLogSegmentMetadata
from samsa.tiered.segment_objects import RemoteStorageManager, SegmentFile
from samsa.tiered.store.base import RemoteStore

__all__ = ["SegmentChunk", "aborted_transactions", "read_bounds", "scan_segment"]

_INDEX_ENTRY = struct.Struct(">ii")
_INT32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class SegmentChunk:
    """Whole record batches read from a segment: their bytes, the first batch's
    base offset and the last batch's last offset."""

    data: memoryview
    first_offset: int
    last_offset: int


def read_bounds(
    offset_index: bytes, base_offset: int, start_offset: int, end_offset: int, segment_size: int
) -> tuple[int, int]:
    """The byte range ``[first, last)`` of a segment that holds every batch with
    offsets in ``[start_offset, end_offset)``, from its offset index's bytes."""
    offsets: list[int] = []
    positions: list[int] = []
    for relative, position in _INDEX_ENTRY.iter_unpack(
        offset_index[: len(offset_index) - len(offset_index) % _INDEX_ENTRY.size]
    ):
        if offsets and base_offset + relative <= offsets[-1]:
            break  # zeroed preallocation past the last entry (a Kafka index before its roll)
        offsets.append(base_offset + relative)
        positions.append(position)
    at = bisect.bisect_right(offsets, start_offset) - 1
    first = positions[at] if at >= 0 else 0
    past = bisect.bisect_left(offsets, end_offset) + 1
    last = positions[past] if past < len(positions) else segment_size
    return first, max(first, min(last, segment_size))


def _whole_batches(buffer: memoryview) -> tuple[int, int, int]:
    """(bytes of whole batches at the start of ``buffer``, first base offset, last offset)."""
    whole, first, last = 0, -1, -1
    for pos, header in iter_batches(buffer):
        if first < 0:
            first = header.base_offset
        last = header.base_offset + header.last_offset_delta
        whole = pos + header.size
    return whole, first, last


def _still_needed(rest: memoryview) -> int:
    """Bytes still missing of the batch that ``rest`` begins (0: not yet known)."""
    if len(rest) < LENGTH_OFFSET + 4:
        return 0
    (length,) = _INT32.unpack_from(rest, LENGTH_OFFSET)
    return max(0, length + LOG_OVERHEAD - len(rest))


async def scan_segment(
    store: RemoteStore, key: str, first: int, last: int, window: int
) -> AsyncIterator[SegmentChunk]:
    """The whole batches of the object ``key`` between byte ``first`` and ``last``
    (see the module doc).  A torn batch at the object's end holds nothing
    readable and is left out, as a broker's remote read leaves it out."""
    if window < 1:
        raise ValueError(f"the read window must be at least one byte, not {window}")

    def read(position: int, length: int) -> asyncio.Future[bytes]:
        return asyncio.ensure_future(store.get_range(key, position, min(length, last - position)))

    position = first
    carried = memoryview(b"")
    pending = read(position, window) if position < last else None
    try:
        while pending is not None:
            data = await pending
            pending = None
            if not data:
                break  # the object is shorter than its metadata said
            position += len(data)
            buffer = memoryview(bytes(carried) + data if carried else data)
            whole, first_offset, last_offset = _whole_batches(buffer)
            carried = buffer[whole:]
            if position < last:
                pending = read(position, max(window, _still_needed(carried)))
                await asyncio.sleep(0)  # let the read start before the caller works
            if whole:
                yield SegmentChunk(buffer[:whole], first_offset, last_offset)
    finally:
        if pending is not None:
            pending.cancel()


async def aborted_transactions(
    manager: RemoteStorageManager, segment: RemoteLogSegmentMetadata
) -> list[AbortedTxn]:
    """The aborted transactions whose ABORT marker ``segment`` holds."""
    if segment.txn_index_empty:
        return []
    return parse_entries(await manager.fetch_index(segment, SegmentFile.TRANSACTION_INDEX))
