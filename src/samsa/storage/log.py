"""The log of one partition: an ordered list of segments in ``<topic>-<partition>/``.

Offsets grow without gaps on the leader: ``append`` stamps each incoming batch
with the next offset (rewriting only the base offset and leader epoch fields,
which lie outside the CRC) and never decodes records.  The last segment is
the active one; it is rolled when full (``segment.bytes``), old
(``segment.ms``), when an index is full, or when offsets no longer fit the
indexes' 32-bit relative offsets.

Invariants: segments are sorted and contiguous in offsets; only the last
(active) one is written to; ``log_start_offset <= log_end_offset`` and
``recovery_point <= log_end_offset``.

Leader epochs: the log keeps a LeaderEpochFileCache (``leader-epoch-checkpoint``
in its directory) of the first offset each leader epoch wrote, for
OffsetForLeaderEpoch and Raft's divergence check.  It is read when first
used (an append, a role change, a fetch asking for an epoch), not at open: a
broker of 10,000 idle partitions starts without reading 10,000 files, and the
load (with its rebuild of a missing or corrupt file, see
``load_leader_epoch_cache``) is the same whenever it happens, since every
change to the log's offsets reads the cache first.  A new leader's epoch
assigned before then waits with it (``maybe_assign_epoch_start_offset``), so
a broker taking over thousands of idle partitions reads none of their files.
An append whose last batch carries a newer epoch assigns it before the bytes
are written (one int comparison per append otherwise); truncations and log
start moves cut it.

Durability: appends stay in the page cache (Kafka's default); ``flush.messages``
forces an fsync every N messages, ``flush.ms`` is applied by
``LogManager.flush_dirty``; a rolled segment is fsynced by the next
``flush_dirty`` (so a roll never blocks the appender on a 1 GB fsync); a clean
``close`` fsyncs everything.  The recovery point is the offset below which all
data is known to be on disk; recovery after a crash starts there.

Thread-safety: every public method takes the log's lock, so the broker may run
fsyncs and retention in a worker thread while the event loop appends.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.record_batch import (
    BatchHeader,
    WritableBuffer,
    iter_batches,
    read_batch_header,
    set_log_append_time,
    stamp_batch,
)
from samsa.storage.atomic_file import fsync_dir
from samsa.storage.flush_timing import FLUSH_TIMINGS
from samsa.storage.leader_epoch_cache import (
    EpochEndOffset,
    EpochEntry,
    LeaderEpochFileCache,
    load_leader_epoch_cache,
)
from samsa.storage.log_config import LogConfig
from samsa.storage.log_dir_failure import (
    IoErrorReport,
    io_errors_fail_dir,
    report_if_io_error,
    storage_error,
)
from samsa.storage.log_info import AppendInfo, FetchDataInfo
from samsa.storage.log_loader import load_log, open_segment
from samsa.storage.log_policy import (
    count_below_log_start,
    count_retention_bytes_breached,
    count_retention_ms_breached,
    roll_reason,
)
from samsa.storage.segment import LogSegment
from samsa.storage.transaction_index import AbortedTxn

logger = logging.getLogger("samsa.storage")

Clock = Callable[[], int]


def _max_timestamp(header: BatchHeader) -> int:
    return header.max_timestamp


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Log:
    """One partition's log.  Open with ``Log.open``."""

    def __init__(
        self,
        directory: Path,
        topic: str,
        partition: int,
        config: LogConfig,
        segments: list[LogSegment],
        *,
        log_start_offset: int,
        next_offset: int,
        recovery_point: int,
        leader_epoch_cache: LeaderEpochFileCache | None,
        clock: Clock,
        file_names_at_open: frozenset[str] | None = None,
    ) -> None:
        self.directory = directory
        self.topic = topic
        self.partition = partition
        self.config = config
        self.name = f"{topic}-{partition}"
        self._segments = segments
        self._bases = [s.base_offset for s in segments]
        self._log_start_offset = log_start_offset
        self._next_offset = next_offset
        self._recovery_point = recovery_point
        self._epochs = leader_epoch_cache  # None until first used (see module doc)
        self._epochs_to_assign: list[EpochEntry] = []  # assigned before it was read
        self._clock = clock
        self._file_names_at_open = file_names_at_open
        self._lock = threading.RLock()
        self._last_flush_ms = clock()
        self._closed = False
        self._offline: str | None = None
        self.io_error_report: IoErrorReport | None = None
        """Told of an I/O error here; the log manager takes the dir offline."""
        self.entry_unsynced = False
        """This log's directory entry in the data dir is not fsync'd yet: a new
        log's is synced with its first data (Kafka syncs directories with the
        segments they hold), not at creation, which cost a data-dir fsync per
        partition when thousands were created.  A crash before then loses an
        empty directory, which the metadata recreates."""

    @classmethod
    def open(
        cls,
        directory: Path,
        topic: str,
        partition: int,
        config: LogConfig,
        *,
        recovery_point: int = 0,
        log_start_offset: int = 0,
        had_clean_shutdown: bool = False,
        clock: Clock = wall_clock_ms,
        directory_exists: bool = False,
    ) -> Log:
        """Open (creating the directory unless the caller just found it) and
        recover; see log_loader.  The leader epoch cache is read on first use."""
        if not directory_exists:
            directory.mkdir(parents=True, exist_ok=True)
        loaded = load_log(
            directory,
            f"{topic}-{partition}",
            config,
            recovery_point=recovery_point,
            log_start_offset=log_start_offset,
            had_clean_shutdown=had_clean_shutdown,
            now_ms=clock(),
        )
        return cls(
            directory,
            topic,
            partition,
            config,
            loaded.segments,
            log_start_offset=loaded.log_start_offset,
            next_offset=loaded.next_offset,
            recovery_point=loaded.recovery_point,
            leader_epoch_cache=None,
            clock=clock,
            file_names_at_open=loaded.file_names,
        )

    # -- facts ------------------------------------------------------------

    def take_file_names_at_open(self) -> frozenset[str] | None:
        """The directory's file names as the load left them, once (then None):
        the producer state's load reads its snapshots from them instead of
        listing the directory again, 10,000 listings for 10,000 partitions."""
        names, self._file_names_at_open = self._file_names_at_open, None
        return names

    @property
    def _leader_epochs(self) -> LeaderEpochFileCache:
        cache = self._epochs
        return self._load_leader_epochs() if cache is None else cache

    def _load_leader_epochs(self) -> LeaderEpochFileCache:
        """Read the cache (see module doc), under the lock: Raft's driver and
        fetch handlers may ask from outside it."""
        with self._lock:
            if self._epochs is None:
                try:
                    self._epochs = load_leader_epoch_cache(
                        self.directory,
                        self.name,
                        log_start_offset=self._log_start_offset,
                        log_end_offset=self._next_offset,
                        batch_headers=lambda: (
                            h for s in list(self._segments) for _, h in s.iter_headers()
                        ),
                    )
                except OSError as e:
                    raise storage_error(self.io_error_report, f"[{self.name}] epochs", e) from e
                if self._epochs_to_assign:
                    self._epochs.assign_all(self._epochs_to_assign, defer=True)
                    self._epochs_to_assign = []
            return self._epochs

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._next_offset

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    @property
    def segments(self) -> list[LogSegment]:
        """A snapshot of the segments, oldest first."""
        return list(self._segments)

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def unflushed_messages(self) -> int:
        return self._next_offset - self._recovery_point

    # -- append -----------------------------------------------------------

    def append(
        self,
        records: WritableBuffer,
        *,
        assign_offsets: bool = True,
        leader_epoch: int = 0,
        log_append_time_ms: int | None = None,
        now_ms: int | None = None,
    ) -> AppendInfo:
        """Append validated batches as bytes; return what was written.

        As leader (``assign_offsets``) each batch is stamped in place with the
        next offsets and ``leader_epoch``, and with ``log_append_time_ms`` (or
        now, when the topic uses LogAppendTime) as its max timestamp.  As
        follower the batches keep their offsets, which must not go backwards.
        Crash behaviour: one write of all the bytes, then index entries, no
        fsync (unless ``flush.messages`` is reached); a torn write is cut off
        by recovery.  A batch of a newer leader epoch than the log has seen
        is recorded in the leader epoch cache (written before the bytes)."""
        with self._lock:
            self._check_open()
            now = self._clock() if now_ms is None else now_ms
            if (
                log_append_time_ms is None
                and assign_offsets
                and self.config.message_timestamp_type == "LogAppendTime"
            ):
                log_append_time_ms = now
            headers: list[BatchHeader] = []
            next_offset = self._next_offset
            end = 0
            for pos, header in iter_batches(records):
                if assign_offsets:
                    stamp_batch(records, pos, next_offset, leader_epoch)
                    if log_append_time_ms is not None:
                        set_log_append_time(records, pos, log_append_time_ms)
                    header = read_batch_header(records, pos)
                elif header.base_offset < next_offset:
                    raise KafkaError(
                        ErrorCode.CORRUPT_MESSAGE,
                        f"[{self.name}] append of offset {header.base_offset} "
                        f"below the log end offset {next_offset}",
                    )
                headers.append(header)
                next_offset = header.next_offset
                end = pos + header.size
            if end != len(records):
                raise KafkaError(
                    ErrorCode.CORRUPT_MESSAGE,
                    f"[{self.name}] {len(records) - end} trailing bytes do not form a batch",
                )
            if not headers:
                return AppendInfo(self._next_offset, self._next_offset - 1, -1, -1, -1, 0, 0)
            max_batch = headers[0] if len(headers) == 1 else max(headers, key=_max_timestamp)
            # Inline, not io_errors_fail_dir: this is the hot path (see there).
            try:
                segment = self._maybe_roll(len(records), headers, max_batch.max_timestamp, now)
                if headers[-1].partition_leader_epoch > self._leader_epochs.latest_epoch:
                    self._leader_epochs.assign_newer(headers)
                elif self._leader_epochs.file_ahead:
                    self._leader_epochs.write()  # the file must know every epoch on disk
                try:
                    segment.append(records, headers)
                except Exception:
                    # No epoch may start beyond the data (see leader_epoch_cache).
                    self._leader_epochs.truncate_from_end(self._next_offset)
                    raise
                self._next_offset = next_offset
                if self.unflushed_messages >= self.config.flush_messages:
                    self._flush(self._next_offset, now)
            except OSError as e:
                raise storage_error(self.io_error_report, f"[{self.name}] append", e) from e
            except KafkaError as e:
                report_if_io_error(self.io_error_report, e)
                raise
            return AppendInfo(
                first_offset=headers[0].base_offset,
                last_offset=headers[-1].last_offset,
                max_timestamp=max_batch.max_timestamp,
                offset_of_max_timestamp=max_batch.last_offset,
                log_append_time=-1 if log_append_time_ms is None else log_append_time_ms,
                num_batches=len(headers),
                valid_bytes=len(records),
            )

    def _maybe_roll(
        self, size: int, headers: list[BatchHeader], max_timestamp: int, now_ms: int
    ) -> LogSegment:
        segment = self._segments[-1]
        reason = roll_reason(
            segment,
            self.config,
            append_bytes=size,
            last_offset=headers[-1].last_offset,
            max_timestamp=max_timestamp,
            now_ms=now_ms,
        )
        if not reason:
            return segment
        logger.info("[%s] rolling segment %d: %s", self.name, segment.base_offset, reason)
        return self._roll(headers[0].base_offset, now_ms)

    def roll(self, now_ms: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset (an empty active
        segment is kept as is)."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] roll"):
            self._check_open()
            return self._roll(self._next_offset, self._clock() if now_ms is None else now_ms)

    def _roll(self, expected_next_offset: int, now_ms: int) -> LogSegment:
        active = self._segments[-1]
        new_base = max(expected_next_offset, self._next_offset)
        if active.size == 0 and active.base_offset == new_base:
            return active
        active.on_become_inactive()
        segment = open_segment(self.directory, new_base, self.config, now_ms)
        self._segments.append(segment)
        self._bases.append(new_base)
        return segment

    # -- read -------------------------------------------------------------

    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        min_one: bool = True,
        max_offset: int | None = None,
    ) -> FetchDataInfo:
        """Whole batches from the one holding ``offset``: at most ``max_bytes``,
        but at least the first batch when ``min_one``, and only batches that end
        before ``max_offset`` (exclusive; the high watermark for consumers).
        Raises KafkaError(OFFSET_OUT_OF_RANGE) outside [log start, log end]."""
        with self._lock:
            self._check_open()
            if offset < self._log_start_offset or offset > self._next_offset:
                raise KafkaError(
                    ErrorCode.OFFSET_OUT_OF_RANGE,
                    f"[{self.name}] offset {offset} is outside "
                    f"[{self._log_start_offset}, {self._next_offset}]",
                )
            limit = self._next_offset if max_offset is None else min(max_offset, self._next_offset)
            i = max(0, bisect.bisect_right(self._bases, offset) - 1)
            while offset < limit and i < len(self._segments):
                segment = self._segments[i]
                next_base = self._bases[i + 1] if i + 1 < len(self._bases) else None
                max_position = None
                if limit <= segment.base_offset:
                    break
                if next_base is None or limit < next_base:
                    found = segment.translate_offset(limit)
                    max_position = found[0] if found else None
                result = segment.read(offset, max_bytes, max_position=max_position, min_one=min_one)
                if result is not None:
                    return FetchDataInfo(
                        offset, result.region, segment.base_offset, result.position
                    )
                i += 1
            return FetchDataInfo(
                offset, b"", self._segments[-1].base_offset, self._segments[-1].size
            )

    def iter_batch_headers(self, from_offset: int | None = None) -> Iterator[BatchHeader]:
        """Headers of every batch holding offsets >= ``from_offset`` (default:
        the log start), in order; used to rebuild producer state.  Iterates a
        snapshot of the segments: do not interleave with truncation."""
        start = self._log_start_offset if from_offset is None else from_offset
        segments = self.segments
        for i, segment in enumerate(segments):
            if i + 1 < len(segments) and segments[i + 1].base_offset <= start:
                continue
            _, position = segment.offset_index.lookup(start)
            for _, header in segment.iter_headers(position):
                if header.last_offset >= start:
                    yield header

    def control_batch_bytes(self, header: BatchHeader) -> bytes:
        """The bytes of one (small) control batch, to learn its marker's type."""
        with self._lock:
            i = max(0, bisect.bisect_right(self._bases, header.base_offset) - 1)
            found = self._segments[i].translate_offset(header.base_offset)
            if found is None:
                raise KafkaError(
                    ErrorCode.CORRUPT_MESSAGE, f"[{self.name}] no batch at {header.base_offset}"
                )
            return self._segments[i].log.read(found[0], header.size)

    # -- aborted transactions ---------------------------------------------------

    def append_aborted_txn(self, txn: AbortedTxn) -> None:
        """Index an ABORT marker in the segment that holds it (the active one)."""
        with self._lock:
            i = max(0, bisect.bisect_right(self._bases, txn.last_offset) - 1)
            self._segments[i].txn_index.append(txn)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound), for a
        read_committed Fetch: from the segment holding ``fetch_offset`` on."""
        with self._lock:
            first = max(0, bisect.bisect_right(self._bases, fetch_offset) - 1)
            found: list[AbortedTxn] = []
            # A marker may sit past the bound while its transaction starts before it.
            for segment in self._segments[first:]:
                found += segment.txn_index.collect(fetch_offset, upper_bound)
            return found

    def truncate_aborted_txns_from(self, offset: int) -> None:
        """Drop index entries of markers at or past ``offset``: recovery replays them."""
        with self._lock:
            first = max(0, bisect.bisect_right(self._bases, offset) - 1)
            for segment in self._segments[first:]:
                segment.txn_index.truncate_to(offset)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the earliest record whose timestamp is >=
        ``timestamp`` (ListOffsets by time), or None if there is none."""
        with self._lock:
            for segment in self._segments:
                if 0 <= segment.max_timestamp < timestamp:
                    continue
                found = segment.find_offset_by_timestamp(timestamp, self._log_start_offset)
                if found is not None:
                    return found
            return None

    def max_timestamp_and_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp
        (ListOffsets -3), the earliest such record on ties; None if empty."""
        with self._lock:
            best: LogSegment | None = None
            for segment in self._segments:
                if best is None or segment.max_timestamp > best.max_timestamp:
                    best = segment
            if best is None or best.max_timestamp < 0:
                return None
            return best.record_with_max_timestamp()

    # -- leader epochs ------------------------------------------------------

    @property
    def leader_epoch_cache(self) -> LeaderEpochFileCache:
        """The cache itself, for inspection; change it only through the Log."""
        return self._leader_epochs

    def latest_epoch(self) -> int:
        """The newest leader epoch that wrote to this log; -1 (UNDEFINED_EPOCH) if none."""
        with self._lock:
            return self._leader_epochs.latest_epoch

    def end_offset_for_epoch(self, epoch: int) -> EpochEndOffset:
        """Where ``epoch`` ended on this log (OffsetForLeaderEpoch, Raft's
        divergence check): see LeaderEpochFileCache.end_offset_for."""
        with self._lock:
            return self._leader_epochs.end_offset_for(epoch, self._next_offset)

    def maybe_assign_epoch_start_offset(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (a leader does this at
        the log end when elected, before appending); see
        LeaderEpochFileCache.assign_at_end: the file follows before an append."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] epoch"):
            self._check_open()
            if self._epochs is None:
                # Not read yet: assigned when it is, as here (see module doc).
                self._epochs_to_assign.append(EpochEntry(epoch, start_offset))
                return
            self._epochs.assign_at_end(epoch, start_offset)

    # -- flush ------------------------------------------------------------

    def flush(self, up_to_offset: int | None = None) -> None:
        """fsync every segment holding offsets below ``up_to_offset`` (default:
        the log end) and advance the recovery point to it."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] flush"):
            self._check_open()
            self._flush(self._next_offset if up_to_offset is None else up_to_offset, self._clock())

    def _flush(self, up_to_offset: int, now_ms: int) -> None:
        up_to_offset = min(up_to_offset, self._next_offset)
        if up_to_offset <= self._recovery_point:
            return
        started = time.perf_counter()
        self._leader_epochs.sync()  # no durable batch without its epoch's entry
        first = max(0, bisect.bisect_right(self._bases, self._recovery_point) - 1)
        for i in range(first, len(self._segments)):
            if self._bases[i] >= up_to_offset:
                break
            self._segments[i].flush()
        if self.entry_unsynced:
            fsync_dir(self.directory.parent)
            self.entry_unsynced = False
        FLUSH_TIMINGS.observe(time.perf_counter() - started)
        self._recovery_point = up_to_offset
        self._last_flush_ms = now_ms

    def flush_if_due(self, now_ms: int) -> None:
        """Apply ``flush.ms`` and fsync segments that were rolled since the last
        flush; the broker calls this periodically, off the event loop."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] flush"):
            if self._closed or self._offline is not None:
                return
            if now_ms - self._last_flush_ms >= self.config.flush_ms:
                self._flush(self._next_offset, now_ms)
            elif self._bases[-1] > self._recovery_point:
                self._flush(self._bases[-1], now_ms)

    # -- truncation, retention ----------------------------------------------

    def truncate_to(self, offset: int) -> bool:
        """Remove every batch holding offsets >= ``offset`` (the whole batch
        holding ``offset``); True if anything was removed.  Used by replicas
        to drop a diverging suffix.  Crash behaviour: later segments are
        deleted last-first, then the segment holding the offset is cut, so a
        crash leaves a prefix of the old log, which recovery accepts."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] truncate"):
            self._check_open()
            if offset >= self._next_offset:
                return False
            if offset < self._bases[0]:
                self._truncate_fully_and_start_at(offset)
                return True
            while len(self._segments) > 1 and self._bases[-1] > offset:
                self._bases.pop()
                self._segments.pop().delete()
            segment = self._segments[-1]
            segment.truncate_to(offset)
            self._next_offset = segment.read_next_offset()
            self._recovery_point = min(self._recovery_point, self._next_offset)
            self._log_start_offset = min(self._log_start_offset, self._next_offset)
            self._leader_epochs.truncate_from_end(self._next_offset)
            logger.info("[%s] truncated to offset %d", self.name, self._next_offset)
            return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete everything and continue as an empty log starting at ``offset``."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] truncate"):
            self._check_open()
            self._truncate_fully_and_start_at(offset)

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        for segment in reversed(self._segments):
            segment.delete()
        self._segments = [open_segment(self.directory, offset, self.config, self._clock())]
        self._bases = [offset]
        self._next_offset = self._log_start_offset = self._recovery_point = offset
        self._leader_epochs.clear()
        logger.info("[%s] truncated fully; log now starts at %d", self.name, offset)

    def delete_records(self, offset: int) -> int:
        """Advance the log start offset to ``offset`` (DeleteRecords; the caller
        checks it against the high watermark) and delete segments wholly below
        it.  Returns the new log start offset."""
        with self._lock:
            self._check_open()
            if offset > self._next_offset or offset < 0:
                raise KafkaError(
                    ErrorCode.OFFSET_OUT_OF_RANGE,
                    f"[{self.name}] cannot delete records below {offset}: log end is "
                    f"{self._next_offset}",
                )
            if offset > self._log_start_offset:
                self._log_start_offset = offset
                self._leader_epochs.truncate_from_start(offset)
                count = count_below_log_start(self._bases, offset)
                self._delete_oldest(count, f"log start offset moved to {offset}")
            return self._log_start_offset

    def run_retention(self, now_ms: int, high_watermark: int | None = None) -> int:
        """Delete old segments by ``retention.ms`` (segment's max timestamp
        older than now - retention.ms) and ``retention.bytes``; never the
        active segment, never for a compact-only topic, and (given the
        partition's ``high_watermark``) never a segment holding an offset at or
        above it, as Kafka's ``deletableSegments``: the log start must not pass
        what is replicated, so no follower or read_committed consumer loses data
        it has not seen committed.  Returns the number of segments deleted."""
        with self._lock:
            if self._closed or not self.config.delete:
                return 0
            limit = (
                len(self._segments)
                if high_watermark is None
                else count_below_log_start(self._bases, high_watermark)
            )
            retention_ms = self.config.retention_ms
            count = count_retention_ms_breached(self._segments, now_ms, retention_ms)
            deleted = self._delete_oldest(
                min(count, limit), f"retention.ms {retention_ms} breached"
            )
            limit -= deleted
            retention_bytes = self.config.retention_bytes
            count = count_retention_bytes_breached(self._segments, retention_bytes)
            deleted += self._delete_oldest(
                min(count, limit), f"retention.bytes {retention_bytes} breached"
            )
            return deleted

    def _delete_oldest(self, count: int, reason: str) -> int:
        """Delete the ``count`` oldest segments, oldest first, and move the log
        start offset up to the new first segment.  Crash behaviour: each
        segment's files go before the next one's, so what remains is a suffix;
        the loader raises the start offset to the first segment's base."""
        count = min(count, len(self._segments) - 1)
        for _ in range(count):
            segment = self._segments.pop(0)
            self._bases.pop(0)
            logger.info(
                "[%s] deleting segment %d (%d bytes): %s",
                self.name,
                segment.base_offset,
                segment.size,
                reason,
            )
            segment.delete()
        if count:
            self._log_start_offset = max(self._log_start_offset, self._bases[0])
            self._leader_epochs.truncate_from_start(self._log_start_offset)
        return count

    def replace_segments(
        self,
        old: list[LogSegment],
        sizes: list[int],
        new: LogSegment,
        swap: Callable[[], None],
    ) -> bool:
        """Put the cleaner's ``new`` segment in place of ``old``.

        Only if ``old`` are still consecutive, non-active segments of this log
        with the ``sizes`` the cleaner read (retention, truncation or deletion
        may have got there first); else nothing happens and False is returned.
        ``swap`` does the file work (cleaner_swap's crash-safe protocol) under
        the lock, so no reader sees a half-replaced log."""
        with self._lock:
            if self._closed or not old:
                return False
            first = next((i for i, s in enumerate(self._segments) if s is old[0]), None)
            if first is None:
                return False
            end = first + len(old)
            current = self._segments[first:end]
            if end >= len(self._segments) or any(
                a is not b or a.size != size for a, b, size in zip(current, old, sizes, strict=True)
            ):
                return False
            swap()
            self._segments[first:end] = [new]
            self._bases[first:end] = [new.base_offset]
            return True

    # -- lifecycle ----------------------------------------------------------

    def update_config(self, config: LogConfig) -> None:
        """Use ``config`` from now on (rolls and retention read it each time)."""
        with self._lock:
            self.config = config

    def close(self) -> None:
        """fsync what is not yet and close the files (a clean shutdown).

        Segments wholly below the recovery point were fsynced when it moved
        past them, so, as Kafka's shutdown flush, only the rest is: an idle
        partition closes without a single fsync.  An offline log's files are
        only closed: its dir can no longer be trusted with a flush, and the
        next start-up recovers it."""
        with self._lock:
            if self._closed:
                return
            if self._offline is not None:
                self._close_files()
                return
            self._segments[-1].on_become_inactive()
            self._flush(self._next_offset, self._clock())
            self._close_files()

    def _close_files(self) -> None:
        for segment in self._segments:
            with contextlib.suppress(OSError):
                segment.close()
        self._closed = True

    def mark_offline(self, reason: str) -> None:
        """Refuse every read and write from now on: the log's dir failed (see
        log_dir_failure).  Without the lock: the failure is reported from
        whichever thread hit it, which may hold another log's lock."""
        self._offline = reason

    @property
    def offline(self) -> bool:
        return self._offline is not None

    def require_online(self) -> None:
        """Raise KAFKA_STORAGE_ERROR if the log's dir failed (or it is closed): a
        writer hears of the failed disk before any check of what it sent, as in Kafka."""
        self._check_open()

    def rename_dir(self, directory: Path) -> None:
        """Move the partition directory (used to mark it for deletion)."""
        with self._lock:
            self.directory.rename(directory)
            self.directory = directory
            # A cache not read yet is read from the new directory when first used.
            if self._epochs is not None and self._epochs.path is not None:
                self._epochs.path = directory / self._epochs.path.name
            for segment in self._segments:
                segment.moved_to(directory)

    def delete(self) -> None:
        """Close and remove the directory and everything in it."""
        self.close_for_deletion()
        self.remove_files()

    def close_for_deletion(self) -> None:
        """Refuse every read and write from now on (the files go later)."""
        with self._lock:
            if not self._closed:
                for segment in self._segments:
                    # The .log descriptor is left to in-flight FileRegions.
                    segment.close_indexes()
                self._closed = True

    def remove_files(self) -> None:
        with self._lock:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _check_open(self) -> None:
        if self._offline is not None:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR,
                f"[{self.name}] log dir is offline after an I/O error: {self._offline}",
            )
        if self._closed:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"[{self.name}] log is closed")
