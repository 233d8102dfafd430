"""One log segment: ``<base>.log`` plus its ``.index`` and ``.timeindex``.

File names are the segment's base offset (the offset of its first batch, or
where it was rolled) zero-padded to 20 digits, as in Kafka, so a directory
listing sorts segments in offset order.

The segment stores batches as bytes and reads only their 61-byte headers:
positions are found through the offset index and then a short forward scan of
headers (at most ``index.interval.bytes`` apart).  It never decodes records,
except in ``find_offset_by_timestamp``, which must name a record.

Crash behaviour of every write path:
- ``append`` writes the batches to the ``.log`` first and index entries after,
  without fsync.  A crash may tear the tail of the log or lose index entries;
  ``recover`` validates batches one by one, truncates at the first bad one and
  rebuilds both indexes from what remains.
- ``truncate_to`` cuts indexes first, then the log, so an index never points
  past the log even if the process dies in between.
- ``delete`` unlinks the ``.log`` before the indexes, so a crash leaves at
  worst orphan index files, which the loader removes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    iter_batches,
    read_batch_header,
    validate_batch,
)
from samsa.storage.file_records import FileRecords
from samsa.storage.file_region import FileRegion
from samsa.storage.index import CorruptIndexError, OffsetIndex, TimeIndex
from samsa.storage.record_timestamps import first_record_at_or_after, record_with_max_timestamp
from samsa.storage.transaction_index import TXN_INDEX_SUFFIX, TransactionIndex

logger = logging.getLogger("samsa.storage")

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"

_INT32_MAX = 2**31 - 1
_HEADER_CHUNK = 16 * 1024  # read-ahead when scanning headers of small batches
_RECOVERY_CHUNK = 1024 * 1024


def segment_file_name(base_offset: int, suffix: str) -> str:
    """Kafka's name: the base offset as 20 zero-padded digits plus the suffix."""
    return f"{base_offset:020d}{suffix}"


@dataclass(slots=True, frozen=True)
class SegmentRead:
    """Where a read landed: the batches to send and the first batch's offsets."""

    region: FileRegion
    position: int
    first_batch: BatchHeader


@dataclass(slots=True, frozen=True)
class RecoveryResult:
    valid_bytes: int
    truncated_bytes: int
    next_offset: int
    reason: str


class LogSegment:
    """A contiguous run of batches of one partition; single-threaded."""

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

    @classmethod
    def open(
        cls,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int,
        now_ms: int,
        lazy_indexes: bool = False,
        file_names: frozenset[str] | set[str] | None = None,
    ) -> LogSegment:
        """Open the segment's three files, creating any that are missing.

        ``lazy_indexes``: the indexes are read (and sanity-checked, and rebuilt
        from the log if they fail) only when first used, as Kafka's LazyIndex;
        for segments loaded at start-up, most of which nothing reads soon.
        ``file_names``: the directory's listing, if the caller just took it: a
        transaction index it does not name is not looked for (one ``stat``
        less per partition at start-up; most segments have none)."""
        prefix = segment_file_name(base_offset, "")
        log = FileRecords.open((directory, prefix + LOG_SUFFIX))
        offset_index = OffsetIndex(
            (directory, prefix + INDEX_SUFFIX), base_offset, max_index_bytes, lazy=lazy_indexes
        )
        time_index = TimeIndex(
            (directory, prefix + TIME_INDEX_SUFFIX),
            base_offset,
            max_index_bytes,
            lazy=lazy_indexes,
        )
        return cls(
            base_offset,
            log,
            offset_index,
            time_index,
            index_interval_bytes=index_interval_bytes,
            created_ms=now_ms,
            txn_index=TransactionIndex(
                (directory, prefix + TXN_INDEX_SUFFIX),
                exists=None if file_names is None else prefix + TXN_INDEX_SUFFIX in file_names,
            ),
        )

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

    # -- writing ----------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview, headers: Sequence[BatchHeader]) -> int:
        """Append batches (already stamped with offsets) and index them.

        ``headers`` describe ``data`` batch by batch in order.  One write for
        the bytes, then at most a few index entries: an offset index entry (and
        a time index entry) for the first batch that starts more than
        ``index.interval.bytes`` after the last entry.  Crash behaviour: see
        the module docstring; the bytes are in the page cache, not on disk."""
        if not headers:
            return self.size
        if not self.can_hold_offset(headers[-1].last_offset):
            raise ValueError(
                f"offset {headers[-1].last_offset} does not fit segment {self.base_offset}"
            )
        self._known_max_timestamp()
        start = self.log.append(data)
        if self._first_batch_timestamp is None and start == 0:
            self._first_batch_timestamp = headers[0].max_timestamp
        position = start
        for header in headers:
            if header.max_timestamp > self._max_timestamp:
                self._max_timestamp = header.max_timestamp
                self._offset_of_max_timestamp = header.last_offset
            if self._bytes_since_last_index_entry > self.index_interval_bytes:
                self._add_index_entries(header.last_offset, position)
            size = header.size
            position += size
            self._bytes_since_last_index_entry += size
        return start

    def _add_index_entries(self, last_offset: int, position: int) -> None:
        if not self.offset_index.is_full():
            self.offset_index.append(last_offset, position)
        if not self.time_index.is_full():
            self.time_index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp)
        self._bytes_since_last_index_entry = 0

    def on_become_inactive(self) -> None:
        """Record the final max timestamp in the time index when the segment
        stops being active (roll or close), so it survives a restart; then close
        the indexes' descriptors, which only a later write (truncation) reopens.
        A segment whose max timestamp was never looked at since it was loaded
        got no batch since: its time index already ends with it."""
        if self._max_timestamp_known:
            self.time_index.maybe_append(
                self._max_timestamp, self._offset_of_max_timestamp, skip_full_check=True
            )
        self._offset_index.release()
        self._time_index.release()

    def truncate_to(self, offset: int) -> int:
        """Remove the batch holding ``offset`` and everything after it; return
        the bytes removed.  Indexes are cut before the log (see module doc)."""
        found = self.translate_offset(offset)
        if found is None:
            return 0
        position, header = found
        self.offset_index.truncate_to_position(position)
        self.time_index.truncate_to_offset(header.base_offset)
        self.txn_index.truncate_to(header.base_offset)
        removed = self.log.truncate_to(position)
        self._bytes_since_last_index_entry = position - self.offset_index.last_entry()[1]
        if self.size == 0:
            self._max_timestamp, self._offset_of_max_timestamp = -1, self.base_offset
            self._first_batch_timestamp = None
        else:
            self._max_timestamp, self._offset_of_max_timestamp = self.time_index.last_entry()
        self._max_timestamp_known = True
        return removed

    def flush(self) -> None:
        """fsync the log, then the indexes."""
        self.log.flush()
        self._offset_index.flush()
        self._time_index.flush()
        self.txn_index.flush()

    def moved_to(self, directory: Path) -> None:
        """The partition directory was renamed: the files are now in ``directory``
        (an index not read yet stays unread)."""
        self.log.path = directory / self.log.path.name
        self._offset_index.path = directory / self._offset_index.path.name
        self._time_index.path = directory / self._time_index.path.name
        if self.txn_index.path is not None:
            self.txn_index.path = directory / self.txn_index.path.name

    def close_indexes(self) -> None:
        self._offset_index.close()
        self._time_index.close()

    def close(self) -> None:
        self.on_become_inactive()
        self.log.close()
        self._offset_index.close()
        self._time_index.close()

    def delete(self) -> None:
        """Remove the files, log first (see module doc).  The log's descriptor
        stays open until in-flight FileRegions are dropped."""
        self.log.delete()
        self._offset_index.delete()
        self._time_index.delete()
        self.txn_index.delete()

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

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after ``start_offset``
        whose timestamp is >= ``timestamp``, or None if this segment has none."""
        if 0 <= self._known_max_timestamp() < timestamp:
            return None
        _, from_offset = self.time_index.lookup(timestamp)
        _, position = self.offset_index.lookup(max(from_offset, start_offset))
        for pos, header in self.iter_headers(position):
            if header.last_offset < start_offset or header.max_timestamp < timestamp:
                continue
            batch = self.log.read(pos, header.size)
            found = first_record_at_or_after(batch, header, timestamp, start_offset)
            if found is not None:
                return found
        return None

    def record_with_max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp."""
        if self._known_max_timestamp() < 0:
            return None
        found = self.translate_offset(self._offset_of_max_timestamp)
        if found is None:
            return None
        pos, header = found
        return record_with_max_timestamp(self.log.read(pos, header.size), header)

    # -- recovery ---------------------------------------------------------

    def recover(self) -> RecoveryResult:
        """Validate every batch (size, magic, CRC, offsets) and rebuild both
        indexes; truncate the log at the first invalid batch.

        This is how a torn tail after SIGKILL or power loss is repaired: bytes
        after the last batch that checks out are dropped, so the log is again
        a clean sequence of batches.  An index the rebuild leaves as it was is
        not written (see ``_Index.begin_rebuild``)."""
        self._offset_index_unchecked = self._time_index_unchecked = False
        self._offset_index.begin_rebuild()
        self._time_index.begin_rebuild()
        self._max_timestamp, self._offset_of_max_timestamp = -1, self.base_offset
        self._max_timestamp_known = True
        self._bytes_since_last_index_entry = 0
        self._first_batch_timestamp = None
        valid = 0
        next_offset = self.base_offset
        reason = ""
        for position, header, problem in self._scan_valid():
            if problem:
                reason = problem
                break
            if header.base_offset < next_offset or not self.can_hold_offset(header.last_offset):
                reason = (
                    f"batch at position {position} has offsets {header.base_offset}.."
                    f"{header.last_offset}, expected >= {next_offset}"
                )
                break
            if header.max_timestamp > self._max_timestamp:
                self._max_timestamp = header.max_timestamp
                self._offset_of_max_timestamp = header.last_offset
            if self._bytes_since_last_index_entry > self.index_interval_bytes:
                self._add_index_entries(header.last_offset, position)
            self._bytes_since_last_index_entry += header.size
            valid = position + header.size
            next_offset = header.next_offset
        # The entry a roll or clean close writes (on_become_inactive), so the
        # rebuilt index of a segment that was closed cleanly matches its file.
        self._time_index.maybe_append(
            self._max_timestamp, self._offset_of_max_timestamp, skip_full_check=True
        )
        self._offset_index.finish_rebuild()
        self._time_index.finish_rebuild()
        truncated = self.log.truncate_to(valid)
        if truncated and not reason:
            reason = f"incomplete batch at position {valid}"
        return RecoveryResult(valid, truncated, next_offset, reason)

    def _scan_valid(self) -> Iterator[tuple[int, BatchHeader, str]]:
        """Yield (position, header, "") for each batch whose bytes check out, in
        large reads; on the first bad batch yield (position, header-or-last,
        reason) and stop.  Stops quietly at an incomplete tail."""
        pos = 0
        size = self.size
        need = _RECOVERY_CHUNK
        while pos < size:
            chunk = self.log.read(pos, need)
            consumed = 0
            try:
                for rel, header in iter_batches(chunk):
                    validate_batch(chunk, rel, header)
                    consumed = rel + header.size
                    yield pos + rel, header, ""
            except (KafkaError, DecodeError) as e:
                bad = pos + consumed
                yield bad, _EMPTY_HEADER, f"invalid batch at position {bad}: {e}"
                return
            if consumed == 0:
                # The batch at ``pos`` is bigger than the chunk: read it whole,
                # unless it claims more bytes than the file has (a torn tail).
                if len(chunk) < LOG_OVERHEAD:
                    return
                batch_size = int.from_bytes(chunk[8:12], "big", signed=True) + LOG_OVERHEAD
                if batch_size <= len(chunk) or batch_size > size - pos:
                    return
                need = batch_size
                continue
            pos += consumed
            need = _RECOVERY_CHUNK


_EMPTY_HEADER = BatchHeader(0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1, 0)
