"""Cleaner: one compaction pass over one log (Kafka's ``Cleaner.clean``).

A log splits into a *clean* section (below the cleaner checkpoint, the first
dirty offset), a *dirty* section up to the first uncleanable offset (the
active segment's base, or an earlier segment still within
``min.compaction.lag.ms``), and the rest, which is never touched.  A pass:

1. builds an OffsetMap key -> latest offset over the dirty section (if the
   map fills up, the pass ends at the last batch it could map: ``end_offset``);
2. notes each producer's last batch in the segments it will rewrite;
3. rewrites every segment below ``end_offset``, from the log start, in groups
   whose total size fits ``segment.bytes``; a record survives if it is the
   latest for its key (or its key is not in the map: it was latest when its
   section was cleaned), tombstones survive until their batch's delete
   horizon (stamped ``now + delete.retention.ms`` by the pass that first keeps
   them) has passed, keyless records and those of aborted transactions go
   (``AbortedBatches``), control batches stay, and a producer's last batch
   stays even if empty;
4. swaps each group's cleaned segment in (cleaner_swap describes the
   crash-safe file protocol) under the log's lock, only if the group's
   segments are unchanged since they were read.

Runs in a worker thread; it reads non-active segments without the log's lock
(they are immutable until deleted, and a deleted segment's descriptor stays
readable) and holds the lock only for the swap.  Crash behaviour: until a
group's ``.log.swap`` exists, the old segments are the truth and leftovers are
``.cleaned`` files, which the loader deletes; after, the loader completes the
swap.  Retained records are written and fsynced before anything old goes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from samsa.protocol.batches.record_batch import (
    LOG_OVERHEAD,
    BatchHeader,
    iter_batches,
    read_batch_header,
    validate_batch,
)
from samsa.storage.cleaner.offset_map import OffsetMap
from samsa.storage.cleaner.records import (
    RawRecord,
    filter_batch,
    iter_raw_records,
    records_blob,
    stamp_delete_horizon,
)
from samsa.storage.cleaner.swap import (
    CrashHook,
    create_cleaned_segment,
    discard_cleaned,
    no_crash,
    swap_in,
)
from samsa.storage.cleaner.transactions import AbortedBatches, CleanedTransactions
from samsa.storage.log import Log
from samsa.storage.producers.transaction_replay import parse_marker
from samsa.storage.segments.segment import LogSegment

logger = logging.getLogger("samsa.storage")

_READ_CHUNK = 1024 * 1024
_WRITE_CHUNK = 1024 * 1024
_INT32_MAX = 2**31 - 1


class CleaningAborted(Exception):
    """The pass stopped early (shutdown, or the log changed under it)."""


@dataclass(slots=True, frozen=True)
class CleanResult:
    """What one pass did; ``end_offset`` is the new first dirty offset."""

    first_dirty_offset: int
    end_offset: int
    segments_before: int
    segments_after: int
    bytes_before: int
    bytes_after: int
    records_read: int
    records_retained: int
    retained_tombstones: int
    next_delete_horizon_ms: int | None


@dataclass(slots=True)
class _Stats:
    segments_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    records_read: int = 0
    records_retained: int = 0
    tombstones: int = 0
    next_horizon: int | None = None
    markers_removed: int = 0

    def horizon_pending(self, horizon_ms: int) -> None:
        if self.next_horizon is None or horizon_ms < self.next_horizon:
            self.next_horizon = horizon_ms


class Cleaner:
    """Cleans one log at a time; not thread-safe (one cleaner thread)."""

    def __init__(
        self,
        offset_map: OffsetMap,
        *,
        crash: CrashHook = no_crash,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.offset_map = offset_map
        self._crash = crash
        self._should_stop = should_stop

    def clean(self, log: Log, first_dirty: int, first_uncleanable: int, now_ms: int) -> CleanResult:
        """One pass over ``log`` (see module doc); raises CleaningAborted if
        stopped, KafkaError/DecodeError on a corrupt batch."""
        segments = log.segments[:-1]  # never the active segment
        aborted_txns = log.collect_aborted_txns(log.log_start_offset, first_uncleanable)
        aborted = AbortedBatches(aborted_txns)
        txns = CleanedTransactions(aborted_txns)
        # Kafka's maxRecordBodySize for filterTo: a compressed batch is inflated only
        # within it, and a record over it fails the pass (INVALID_RECORD); the
        # manager then leaves the partition uncleanable, its segments untouched.
        limit = log.config.max_decompressed_message_bytes
        end = self._build_offset_map(segments, first_dirty, first_uncleanable, aborted, limit)
        to_clean = [s for s in segments if s.base_offset < end]
        last_batches = _last_batch_of_producers(to_clean)
        stats = _Stats()
        horizon = now_ms + log.config.delete_retention_ms
        offsets = self.offset_map

        def retain(header: BatchHeader, record: RawRecord) -> bool:
            if record.key is None:
                return False  # Kafka refuses these on compacted topics
            if aborted.holds(header):
                return False  # an aborted transaction's records were never visible
            if record.offset < offsets.get(record.key):
                return False
            if record.has_value:
                return True
            return not header.has_delete_horizon or now_ms < header.base_timestamp

        groups = group_segments_by_size(
            to_clean, log.config.segment_bytes, log.config.segment_index_bytes, end
        )
        for group in groups:
            self._clean_group(
                log, group, end, retain, horizon, last_batches, stats, now_ms, txns, limit
            )
        return CleanResult(
            first_dirty_offset=first_dirty,
            end_offset=end,
            segments_before=len(to_clean),
            segments_after=stats.segments_after,
            bytes_before=stats.bytes_before,
            bytes_after=stats.bytes_after,
            records_read=stats.records_read,
            records_retained=stats.records_retained,
            retained_tombstones=stats.tombstones,
            next_delete_horizon_ms=stats.next_horizon,
        )

    # -- step 1: the offset map -------------------------------------------

    def _build_offset_map(
        self,
        segments: list[LogSegment],
        first_dirty: int,
        first_uncleanable: int,
        aborted: AbortedBatches,
        max_record_body: int,
    ) -> int:
        """Map the dirty section; return the offset the pass cleans up to."""
        offsets = self.offset_map
        offsets.clear()
        for i, segment in enumerate(segments):
            next_base = segments[i + 1].base_offset if i + 1 < len(segments) else None
            if segment.base_offset >= first_uncleanable:
                break
            if next_base is not None and next_base <= first_dirty:
                continue
            _, position = segment.offset_index.lookup(first_dirty)
            for header, batch in iter_segment_batches(segment, position):
                self._check_stop()
                if header.last_offset < first_dirty:
                    continue
                if header.base_offset >= first_uncleanable:
                    break
                if not header.is_control and header.records_count and not aborted.holds(header):
                    if len(offsets) and not offsets.has_room_for(header.records_count):
                        return header.base_offset
                    blob = records_blob(batch, header, max_record_body)
                    for record in iter_raw_records(blob, header, max_record_body):
                        if record.key is not None and record.offset >= first_dirty:
                            offsets.put(record.key, record.offset)
                offsets.latest_offset = header.last_offset
        return max(first_uncleanable, first_dirty)

    # -- step 3/4: rewrite one group and swap it in -------------------------

    def _clean_group(
        self,
        log: Log,
        group: list[LogSegment],
        end: int,
        retain: Callable[[BatchHeader, RawRecord], bool],
        horizon: int,
        last_batches: dict[int, int],
        stats: _Stats,
        now_ms: int,
        txns: CleanedTransactions,
        max_record_body: int,
    ) -> None:
        sizes = [s.size for s in group]
        cleaned = create_cleaned_segment(log.directory, group[0].base_offset, log.config, now_ms)
        try:
            buffer = bytearray()
            headers: list[BatchHeader] = []
            for segment in group:
                for header, batch in iter_segment_batches(segment):
                    self._check_stop()
                    stats.records_read += header.records_count
                    if header.is_control:
                        out = self._filter_marker(header, batch, end, txns, horizon, stats, now_ms)
                    else:
                        txns.on_data_batch(header)
                        out = self._filter(
                            header,
                            batch,
                            end,
                            retain,
                            horizon,
                            last_batches,
                            stats,
                            max_record_body,
                        )
                    if out is None:
                        continue
                    buffer += out
                    headers.append(header if out is batch else read_batch_header(out))
                    if len(buffer) >= _WRITE_CHUNK:
                        cleaned.append(buffer, headers)
                        buffer, headers = bytearray(), []
            cleaned.append(buffer, headers)
            cleaned.on_become_inactive()
            cleaned.flush()
            self._crash("after_cleaned")
            swapped = log.replace_segments(
                group, sizes, cleaned, lambda: swap_in(log.directory, group, cleaned, self._crash)
            )
        except Exception:
            discard_cleaned(cleaned)
            raise
        if not swapped:
            discard_cleaned(cleaned)
            raise CleaningAborted(f"[{log.name}] segments changed while cleaning")
        stats.segments_after += 1
        stats.bytes_before += sum(sizes)
        stats.bytes_after += cleaned.size

    def _filter(
        self,
        header: BatchHeader,
        batch: bytes,
        end: int,
        retain: Callable[[BatchHeader, RawRecord], bool],
        horizon: int,
        last_batches: dict[int, int],
        stats: _Stats,
        max_record_body: int,
    ) -> bytes | None:
        if header.base_offset >= end:  # beyond what the offset map covers
            stats.records_retained += header.records_count
            return batch
        validate_batch(batch, 0, header)
        is_last = (
            header.has_producer_id and last_batches.get(header.producer_id) == header.last_offset
        )
        outcome = filter_batch(
            batch,
            header,
            retain,
            new_horizon_ms=horizon,
            retain_empty=is_last,
            max_record_body=max_record_body,
        )
        stats.records_retained += outcome.retained_records
        stats.tombstones += outcome.retained_tombstones
        if outcome.retained_tombstones and outcome.delete_horizon_ms is not None:
            stats.horizon_pending(outcome.delete_horizon_ms)
        return outcome.data

    def _filter_marker(
        self,
        header: BatchHeader,
        batch: bytes,
        end: int,
        txns: CleanedTransactions,
        horizon: int,
        stats: _Stats,
        now_ms: int,
    ) -> bytes | None:
        """A transaction marker stays while its transaction has batches left;
        then it is stamped with a delete horizon, and dropped by a pass past it
        (cleaner_transactions describes why)."""
        control_type = parse_marker(batch, 0, header)[0] if header.records_count else None
        if header.base_offset >= end or not txns.marker_removable(header, control_type):
            stats.records_retained += header.records_count
            return batch
        if header.has_delete_horizon:
            if header.base_timestamp <= now_ms:
                stats.markers_removed += 1
                return None
            stats.horizon_pending(header.base_timestamp)
            stats.records_retained += header.records_count
            return batch
        stats.horizon_pending(horizon)
        stats.records_retained += header.records_count
        return stamp_delete_horizon(batch, header, horizon)

    def _check_stop(self) -> None:
        if self._should_stop():
            raise CleaningAborted("cleaner is stopping")


def iter_segment_batches(
    segment: LogSegment, position: int = 0
) -> Iterator[tuple[BatchHeader, bytes]]:
    """(header, bytes) of each complete batch of a segment from ``position``,
    read in large chunks (a batch bigger than a chunk is read on its own)."""
    size = segment.size
    while position < size:
        chunk = segment.log.read(position, _READ_CHUNK)
        consumed = 0
        for rel, header in iter_batches(chunk):
            yield header, chunk[rel : rel + header.size]
            consumed = rel + header.size
        if consumed == 0:
            if len(chunk) < LOG_OVERHEAD:
                return
            length = int.from_bytes(chunk[8:12], "big", signed=True) + LOG_OVERHEAD
            if length <= len(chunk) or position + length > size:
                return
            chunk = segment.log.read(position, length)
            yield read_batch_header(chunk), chunk
            consumed = length
        position += consumed


def _last_batch_of_producers(segments: list[LogSegment]) -> dict[int, int]:
    """producer id -> last offset of its last data batch in ``segments``."""
    last: dict[int, int] = {}
    for segment in segments:
        for _, header in segment.iter_headers():
            if header.has_producer_id and not header.is_control:
                last[header.producer_id] = header.last_offset
    return last


def group_segments_by_size(
    segments: list[LogSegment], max_bytes: int, max_index_bytes: int, end_offset: int
) -> list[list[LogSegment]]:
    """Consecutive runs of segments whose total log and index sizes fit one
    segment and whose offsets fit its 32-bit relative offsets (Kafka's
    groupSegmentsBySize); the last offset of a segment is bounded by the next
    segment's base, or ``end_offset`` for the last one."""
    groups: list[list[LogSegment]] = []
    i = 0
    while i < len(segments):
        group = [segments[i]]
        log_bytes = segments[i].size
        index_bytes = segments[i].offset_index.size_bytes()
        time_bytes = segments[i].time_index.size_bytes()
        i += 1
        while i < len(segments):
            candidate = segments[i]
            bound = segments[i + 1].base_offset - 1 if i + 1 < len(segments) else end_offset - 1
            if (
                log_bytes + candidate.size > max_bytes
                or index_bytes + candidate.offset_index.size_bytes() > max_index_bytes
                or time_bytes + candidate.time_index.size_bytes() > max_index_bytes
                or bound - group[0].base_offset > _INT32_MAX
            ):
                break
            group.append(candidate)
            log_bytes += candidate.size
            index_bytes += candidate.offset_index.size_bytes()
            time_bytes += candidate.time_index.size_bytes()
            i += 1
        groups.append(group)
    return groups
