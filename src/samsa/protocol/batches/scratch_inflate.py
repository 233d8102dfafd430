"""A compressed batch's records inflated into a buffer reused from call to call.

The schema id check on Produce inflates every compressed batch of a validated
topic, reads five bytes per record and drops the result.  Inflated into a new
object each time, a megabyte batch lands on fresh pages: a large allocation
is its own ``mmap`` in glibc, so each request faults in (and, when freed,
unmaps) a megabyte, which costs the broker ten times the inflating itself.
Here the records are inflated into a per-thread buffer that stays mapped,
with ``cramjam``'s ``decompress_into`` (lz4 and zstd frames, concatenated
frames included), which stops at the end of the buffer: the buffer is never
larger than the ``max.decompressed.message.bytes`` bound allows, so a small
batch that would inflate to gigabytes is cut off after at most that much.

The view handed back is valid only until the next call on the same thread;
callers read it and keep nothing that points into it.  Anything the fast
path does not take -- another codec, a batch larger than the buffer may
grow, input that fails to inflate -- goes to ``decompress_records``, which
gives the exact error.
"""

from __future__ import annotations

import threading

import cramjam

from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.decompression_limit import decompress_records, records_bound

__all__ = ["SCRATCH_MAX", "inflate_records_for_reading"]

SCRATCH_MAX = 16 << 20
"""The largest buffer a thread keeps: ample for batches of the default ``max.message.bytes``
(1 MiB) inflated many times over; larger ones take the allocating path."""

_SCRATCH_MIN = 1 << 20

_INTO = {
    Compression.LZ4: cramjam.lz4.decompress_into,
    Compression.ZSTD: cramjam.zstd.decompress_into,
}


class _Scratch(threading.local):
    buffer: bytearray | None = None


_scratch = _Scratch()


def inflate_records_for_reading(
    codec: Compression | int, data: memoryview, records_count: int, max_record_body: int
) -> memoryview | bytes:
    """The records of a compressed batch, as ``decompress_records`` gives them, but for
    lz4 and zstd in this thread's reused buffer: read it before the next call here."""
    into = _INTO.get(Compression(codec))
    bound = records_bound(records_count, max_record_body)
    if into is None:
        return decompress_records(codec, data, records_count, max_record_body)
    buffer = _scratch.buffer
    if buffer is None:
        buffer = _scratch.buffer = bytearray(_SCRATCH_MIN)
    # One byte past the bound: output that fills it is over the limit.
    room = memoryview(buffer)[: min(len(buffer), bound + 1)]
    try:
        size = into(data, room)
    except cramjam.DecompressionError:
        size = -1  # bad input, or more than the buffer holds: the exact path decides
    if 0 <= size <= bound and size < len(room):
        return room[:size]
    records = decompress_records(codec, data, records_count, max_record_body)
    if len(buffer) < len(records) < SCRATCH_MAX:
        # The next batch this large inflates in place.
        _scratch.buffer = bytearray(min(SCRATCH_MAX, 1 << (len(records) - 1).bit_length()))
    return records
