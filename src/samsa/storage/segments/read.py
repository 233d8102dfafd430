"""A segment's read path: whole batches from an offset, and records by timestamp.

Kept apart from writes because it is the fetch hot path and never changes the
segment: it finds a batch through the offset index and a short header scan,
and answers with a file region to send, not bytes read into memory.  Only the
timestamp lookups (ListOffsets) decode records, because they must name one.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.protocol.batches.record_batch import BatchHeader
from samsa.storage.segments.file_region import FileRegion
from samsa.storage.segments.record_timestamps import (
    first_record_at_or_after,
    record_with_max_timestamp,
)
from samsa.storage.segments.state import SegmentState


@dataclass(slots=True, frozen=True)
class SegmentRead:
    """Where a read landed: the batches to send and the first batch's offsets."""

    region: FileRegion
    position: int
    first_batch: BatchHeader


class SegmentReads(SegmentState):
    """Reads of one segment."""

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        *,
        max_position: int | None = None,
        min_one: bool = True,
    ) -> SegmentRead | None:
        """Whole batches from the one holding ``start_offset``, at most ``max_bytes``
        (but the first batch even if larger when ``min_one``) and ending at or
        before ``max_position``.  None if no batch here holds the offset.  The
        region may be empty (nothing fits, or the first batch is past
        ``max_position``)."""
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        position, first = found
        limit = self.size if max_position is None else min(max_position, self.size)
        end = position + first.size
        if end > limit or (first.size > max_bytes and not min_one):
            return SegmentRead(self.log.region(position, 0), position, first)
        budget_end = min(position + max(max_bytes, 0), limit)
        if end < budget_end:
            # Batches before the last index entry inside the budget are whole;
            # jump there and scan only the rest.
            _, jump = self.offset_index.lookup_by_position(budget_end)
            end = max(end, jump)
            for pos, header in self.iter_headers(end):
                if pos + header.size > budget_end:
                    break
                end = pos + header.size
        return SegmentRead(self.log.region(position, end - position), position, first)

    def read_next_offset(self) -> int:
        """The offset after the last batch (base offset when empty)."""
        _, position = self.offset_index.last_entry()
        next_offset = self.base_offset
        for _, header in self.iter_headers(position):
            next_offset = header.next_offset
        return next_offset

    def find_offset_by_timestamp(
        self, timestamp: int, start_offset: int, max_record_body: int
    ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after ``start_offset``
        whose timestamp is >= ``timestamp``, or None if this segment has none.
        ``max_record_body``: the topic's ``max.decompressed.message.bytes``
        (``record_timestamps``)."""
        if 0 <= self._known_max_timestamp() < timestamp:
            return None
        _, from_offset = self.time_index.lookup(timestamp)
        _, position = self.offset_index.lookup(max(from_offset, start_offset))
        for pos, header in self.iter_headers(position):
            if header.last_offset < start_offset or header.max_timestamp < timestamp:
                continue
            batch = self.log.read(pos, header.size)
            found = first_record_at_or_after(
                batch, header, timestamp, start_offset, max_record_body
            )
            if found is not None:
                return found
        return None

    def record_with_max_timestamp(self, max_record_body: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp."""
        if self._known_max_timestamp() < 0:
            return None
        found = self.translate_offset(self._offset_of_max_timestamp)
        if found is None:
            return None
        pos, header = found
        return record_with_max_timestamp(self.log.read(pos, header.size), header, max_record_body)
