"""Where the record batches of a log read start and end, from their headers only.

ShareFetch must know each returned batch's offsets to acquire them, but sends
the batches as stored: from a segment file (a ``FileRegion``) only the 61-byte
header of each batch is read (``os.pread``), and the response carries a slice
of the region, still sent with ``sendfile``.  Spans stop at ``horizon`` (the
batches starting at or past it are not needed for this acquisition) and at a
truncated tail.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE, iter_batches, read_batch_header
from samsa.storage.segments.file_region import FileRegion

Records = FileRegion | bytes


class BatchSpan(NamedTuple):
    position: int
    size: int
    base_offset: int
    last_offset: int


def batch_spans(records: Records, horizon: int) -> list[BatchSpan]:
    if isinstance(records, (bytes, bytearray, memoryview)):
        spans = []
        for pos, header in iter_batches(records):
            if header.base_offset >= horizon:
                break
            spans.append(BatchSpan(pos, header.size, header.base_offset, header.last_offset))
        return spans
    return _region_spans(records, horizon)


def _region_spans(region: FileRegion, horizon: int) -> list[BatchSpan]:
    spans: list[BatchSpan] = []
    fd, pos = region.fileno(), 0
    while region.size - pos >= BATCH_HEADER_SIZE:
        header = read_batch_header(os.pread(fd, BATCH_HEADER_SIZE, region.position + pos))
        if header.base_offset >= horizon or pos + header.size > region.size:
            break
        spans.append(BatchSpan(pos, header.size, header.base_offset, header.last_offset))
        pos += header.size
    return spans


def cut(records: Records, begin: int, end: int) -> Records:
    """Bytes ``[begin, end)`` of the read, without copying a file region."""
    if isinstance(records, FileRegion):
        return records.slice(begin, end - begin)
    return records if (begin, end) == (0, len(records)) else records[begin:end]
