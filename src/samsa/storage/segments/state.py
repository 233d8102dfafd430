"""The state every part of a LogSegment shares (see segment.py).

The segment is split by path so each file holds one concern: this base holds
the files and fields, the facts derived from them (size, max timestamp, roll
age), the indexes opened lazily and checked on first use, and the header scan
every path uses to find a batch; segment_read adds the read path,
segment_recovery the validation that rebuilds the indexes, and segment.py
opens, writes, truncates and deletes.  Mixins of one class, not objects
behind references: the segment's append and read run on every produce and
fetch.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    read_batch_header,
)
from samsa.storage.segments.file_records import FileRecords
from samsa.storage.segments.index import CorruptIndexError, OffsetIndex, TimeIndex
from samsa.storage.segments.transaction_index import TransactionIndex

logger = logging.getLogger("samsa.storage")

_INT32_MAX = 2**31 - 1
_HEADER_CHUNK = 16 * 1024  # read-ahead when scanning headers of small batches


@dataclass(slots=True, frozen=True)
class RecoveryResult:
    valid_bytes: int
    truncated_bytes: int
    next_offset: int
    reason: str


class SegmentState:
    """Files, fields and facts of one segment (see segment.py for the whole LogSegment)."""

    def __init__(
        self,
        base_offset: int,
        log: FileRecords,
        offset_index: OffsetIndex,
        time_index: TimeIndex,
        *,
        index_interval_bytes: int,
        created_ms: int,
        txn_index: TransactionIndex | None = None,
    ) -> None:
        self.base_offset = base_offset
        self.log = log
        self._offset_index = offset_index
        self._time_index = time_index
        # A lazily opened index is checked at its first use (see _checked).
        self._offset_index_unchecked = not offset_index.loaded
        self._time_index_unchecked = not time_index.loaded
        # The cleaner's new segments keep theirs in memory only (see transaction_index).
        self.txn_index = TransactionIndex(None) if txn_index is None else txn_index
        self.index_interval_bytes = index_interval_bytes
        self.created_ms = created_ms
        self._bytes_since_last_index_entry = 0
        # Read from the time index's last entry when first needed (see _known_max_timestamp).
        self._max_timestamp = -1
        self._offset_of_max_timestamp = base_offset
        self._max_timestamp_known = False
        self._first_batch_timestamp: int | None = None

    # -- facts ------------------------------------------------------------

    @property
    def offset_index(self) -> OffsetIndex:
        if self._offset_index_unchecked:
            self._checked(self._offset_index)
        return self._offset_index

    @property
    def time_index(self) -> TimeIndex:
        if self._time_index_unchecked:
            self._checked(self._time_index)
        return self._time_index

    def _checked(self, index: OffsetIndex | TimeIndex) -> None:
        """First use of a lazily opened index: read and sanity-check it; one that
        fails is rebuilt from the log with the other (``recover``), as the
        loader would have done at start-up."""
        if index is self._offset_index:
            self._offset_index_unchecked = False
        else:
            self._time_index_unchecked = False
        try:
            index.sanity_check(self.size)
        except CorruptIndexError as e:
            logger.warning("rebuilding the indexes of %s: %s", self.log.path, e)
            result = self.recover()
            if result.truncated_bytes:
                logger.warning(
                    "%s: dropped %d bytes at position %d: %s",
                    self.log.path,
                    result.truncated_bytes,
                    result.valid_bytes,
                    result.reason,
                )

    @property
    def size(self) -> int:
        return self.log.size

    def _known_max_timestamp(self) -> int:
        """The max timestamp, read from the time index's last entry on first use."""
        if not self._max_timestamp_known:
            self._max_timestamp, self._offset_of_max_timestamp = self.time_index.last_entry()
            self._max_timestamp_known = True
        return self._max_timestamp

    @property
    def max_timestamp(self) -> int:
        """Largest batch max timestamp seen, or -1 if unknown."""
        return self._known_max_timestamp()

    @property
    def offset_of_max_timestamp(self) -> int:
        """Last offset of the batch that holds ``max_timestamp``."""
        self._known_max_timestamp()
        return self._offset_of_max_timestamp

    def largest_timestamp(self) -> int:
        """What time retention compares: the max timestamp, else the file's mtime."""
        if self._known_max_timestamp() >= 0:
            return self._max_timestamp
        return int(os.stat(self.log.path).st_mtime * 1000)

    def indexes_full(self) -> bool:
        return self.offset_index.is_full() or self.time_index.is_full()

    def can_hold_offset(self, offset: int) -> bool:
        """Whether ``offset`` fits the int32 relative offsets of the indexes."""
        return 0 <= offset - self.base_offset <= _INT32_MAX

    def time_waited_for_roll(self, now_ms: int, batch_max_timestamp: int) -> int:
        """Age used by ``segment.ms``: timestamp of the incoming batch minus the
        first batch's, or wall time since creation when timestamps are unknown
        (Kafka's rule, which keeps replicas rolling at the same offsets)."""
        if self._first_batch_timestamp is None and self.size >= BATCH_HEADER_SIZE:
            self._first_batch_timestamp = read_batch_header(
                self.log.read(0, BATCH_HEADER_SIZE)
            ).max_timestamp
        first = self._first_batch_timestamp
        if first is not None and first >= 0 and batch_max_timestamp >= 0:
            return batch_max_timestamp - first
        return now_ms - self.created_ms

    def sanity_check(self) -> None:
        """Raise CorruptIndexError if an index cannot be trusted as it is."""
        self._offset_index.sanity_check(self.size)
        self._time_index.sanity_check(self.size)
        # A time index entry without offset index entries is normal: a segment
        # smaller than index.interval.bytes gets its closing time entry on roll.

    def _add_index_entries(self, last_offset: int, position: int) -> None:
        if not self.offset_index.is_full():
            self.offset_index.append(last_offset, position)
        if not self.time_index.is_full():
            self.time_index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp)
        self._bytes_since_last_index_entry = 0

    # -- reading ----------------------------------------------------------

    def iter_headers(self, start_position: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """Yield (position, header) of each batch from ``start_position`` (a batch
        start) to the end of the file, reading headers only.  Stops at a partial
        batch; raises KafkaError(CORRUPT_MESSAGE) on bytes that are no batch."""
        pos = start_position
        end = self.size
        buf = b""
        buf_start = pos
        while end - pos >= BATCH_HEADER_SIZE:
            rel = pos - buf_start
            if rel < 0 or len(buf) - rel < BATCH_HEADER_SIZE:
                buf = self.log.read(pos, _HEADER_CHUNK)
                buf_start, rel = pos, 0
            header = read_batch_header(buf, rel)
            if header.magic != 2 or header.batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
                raise KafkaError(
                    ErrorCode.CORRUPT_MESSAGE,
                    f"{self.log.path}: no valid batch header at position {pos}",
                )
            if pos + header.size > end:
                return
            yield pos, header
            pos += header.size

    def translate_offset(
        self, offset: int, start_position: int = 0
    ) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= ``offset``."""
        _, position = self.offset_index.lookup(offset)
        for pos, header in self.iter_headers(max(position, start_position)):
            if header.last_offset >= offset:
                return pos, header
        return None

    def recover(self) -> RecoveryResult:
        """Hook: validate the log and rebuild the indexes (segment_recovery)."""
        raise NotImplementedError
