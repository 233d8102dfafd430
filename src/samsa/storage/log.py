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

Tiered storage (``remote.storage.enable``): the log start is the partition's
start counting the remote tier, ``local_log_start_offset`` the first offset
still on disk; local retention deletes only segments the remote tier holds
(``update_highest_offset_in_remote_storage``) and moves only the local start;
the remote log manager moves the log start (``update_log_start_offset_from_remote``).
With tiering off both starts are the same and nothing here changes.

The class is assembled from one mixin per path, each in its own module:
log_state (fields, facts, leader epochs), log_append (append, roll, flush),
log_read (reads) and log_retention (truncation, retention, the cleaner's
swap); this module opens, closes, moves and deletes.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from samsa.storage.log_append import LogAppend
from samsa.storage.log_loader import load_log
from samsa.storage.log_read import LogRead
from samsa.storage.log_retention import LogRetention
from samsa.storage.log_state import Clock, wall_clock_ms
from samsa.storage.topic_config.log_config import LogConfig

__all__ = ["Clock", "Log", "wall_clock_ms"]


class Log(LogAppend, LogRead, LogRetention):
    """One partition's log.  Open with ``Log.open``."""

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
            log_start_checkpoint=log_start_offset,
        )

    # -- lifecycle ----------------------------------------------------------

    def update_config(self, config: LogConfig) -> None:
        """Use ``config`` from now on (rolls and retention read it each time).

        The first config a loaded log gets says whether it is tiered: the
        logs load before the metadata that holds the topic configs, so the
        load raised the log start to the first local segment; a tiered log's
        start is the checkpointed one, remote data included (see
        ``take_log_start_hint``)."""
        with self._lock:
            self.config = config
            hint, self._log_start_hint = self._log_start_hint, None
            if (
                hint is not None
                and config.remote_storage_enable
                and hint < self._log_start_offset == self._bases[0]
            ):
                self._log_start_offset = hint

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
