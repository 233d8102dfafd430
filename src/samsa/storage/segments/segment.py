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

The class is assembled from one mixin per path, each in its own module:
segment_state (files, facts, lazily checked indexes, the header scan),
segment_read (reads) and segment_recovery (validation and index rebuild);
this module opens, writes, truncates, flushes and deletes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from samsa.protocol.batches.record_batch import BatchHeader
from samsa.storage.segments.file_records import FileRecords
from samsa.storage.segments.index import OffsetIndex, TimeIndex
from samsa.storage.segments.read import SegmentRead, SegmentReads
from samsa.storage.segments.recovery import SegmentRecovery
from samsa.storage.segments.state import RecoveryResult
from samsa.storage.segments.transaction_index import TXN_INDEX_SUFFIX, TransactionIndex

__all__ = [
    "INDEX_SUFFIX",
    "LOG_SUFFIX",
    "TIME_INDEX_SUFFIX",
    "LogSegment",
    "RecoveryResult",
    "SegmentRead",
    "segment_file_name",
]

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"


def segment_file_name(base_offset: int, suffix: str) -> str:
    """Kafka's name: the base offset as 20 zero-padded digits plus the suffix."""
    return f"{base_offset:020d}{suffix}"


class LogSegment(SegmentReads, SegmentRecovery):
    """A contiguous run of batches of one partition; single-threaded."""

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
