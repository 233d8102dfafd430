"""The state every part of a partition's Log shares (see log.py).

The Log is split by path so each file holds one concern: this base holds the
fields, the facts derived from them, the leader epoch cache (read on first
use, see log.py) and the open/offline check every public method starts with;
log_append adds the write path (append, roll, flush), log_read the read path,
log_retention truncation, retention and the cleaner's swap; log.py opens,
closes and deletes.  The parts are mixins of one class, not objects behind
references: append and read are the hot paths, and a method found through the
class costs no more than one defined on it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.leader_epoch_cache import (
    EpochEndOffset,
    EpochEntry,
    LeaderEpochFileCache,
    load_leader_epoch_cache,
)
from samsa.storage.log_dir_failure import IoErrorReport, io_errors_fail_dir, storage_error
from samsa.storage.segments.segment import LogSegment
from samsa.storage.topic_config.log_config import LogConfig

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class LogState:
    """Fields and facts of one partition's log (see log.py for the whole Log)."""

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
        log_start_checkpoint: int | None = None,
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
        self._log_start_hint: int | None = (
            log_start_checkpoint
            if log_start_checkpoint is not None and log_start_checkpoint < log_start_offset
            else None
        )
        """The checkpointed log start when the load raised it to the first
        segment: a tiered log's true start, until the first config says (log.py)."""
        self._highest_remote_offset = -1
        """Tiered logs: the last offset the remote tier holds (-1: none known)."""
        self.on_roll: Callable[[int], None] | None = None
        """Told the base offset of each new active segment, before anything is
        written to it (a tiered partition snapshots its producers there)."""
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
                    hint = self._log_start_hint
                    self._epochs = load_leader_epoch_cache(
                        self.directory,
                        self.name,
                        # A tiered log keeps the epochs of its remote data.
                        log_start_offset=self._log_start_offset if hint is None else hint,
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
    def local_log_start_offset(self) -> int:
        """The first offset on local disk: the log start unless the remote tier
        holds offsets below the first local segment (tiered storage)."""
        start = self._log_start_offset
        first = self._bases[0]
        return first if first > start else start

    @property
    def highest_offset_in_remote_storage(self) -> int:
        """The last offset copied to the remote tier (-1: none, or not tiered)."""
        return self._highest_remote_offset

    def update_highest_offset_in_remote_storage(self, offset: int) -> None:
        """Everything up to ``offset`` is in the remote tier: local retention of
        a tiered log may delete segments that end at or below it (only moves up)."""
        with self._lock:
            if offset > self._highest_remote_offset:
                self._highest_remote_offset = offset

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

    def restore_leader_epochs(self, entries: list[EpochEntry]) -> None:
        """Replace the epochs with ``entries`` (a tiered follower that rebuilt
        its state from the remote tier takes the leader's lineage there)."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] epoch"):
            self._check_open()
            cache = self._leader_epochs
            cache.clear()
            if entries:
                cache.assign_all(entries)

    def _check_open(self) -> None:
        if self._offline is not None:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR,
                f"[{self.name}] log dir is offline after an I/O error: {self._offline}",
            )
        if self._closed:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"[{self.name}] log is closed")
