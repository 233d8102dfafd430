"""LogCleaner: which compacted logs to clean, and the cleaner checkpoint.

Mirrors Kafka's LogCleanerManager.  For every log with ``compact`` in its
``cleanup.policy`` it keeps the first dirty offset in
``<data dir>/cleaner-offset-checkpoint`` (Kafka's checkpoint format), and a
pass cleans a log when one of these holds:

- its dirty ratio (bytes of the dirty non-active segments / bytes of all
  non-active segments) exceeds ``min.cleanable.dirty.ratio`` (with 0: any
  dirty byte);
- its first dirty segment is older than ``max.compaction.lag.ms``;
- a delete horizon stamped by an earlier pass has passed, so tombstones can go
  (KIP-534; kept in memory, so after a restart they go once the log is dirty
  again, as in Kafka).

The dirty section ends at the active segment's base, or earlier at the first
segment whose newest record is younger than ``min.compaction.lag.ms``.

Failures stay with their log: a log whose planning or cleaning raises is
skipped and the pass goes on with the others.  An I/O failure is retried on
the next pass (logged once until it clears); anything else marks the
partition uncleanable until restart, as Kafka's LogCleanerManager does.
``stats`` counts passes, cleaned logs and reclaimed bytes and names the
uncleanable partitions; each pass that did something logs a summary at INFO.

Crash behaviour: the checkpoint is written (atomically) only after a log's
pass finished, so a crash makes the next pass redo work, never skip it; a
checkpoint that cannot be read means "everything is dirty".  Cleaning crash
points (``crash_at``) let tests stop the process at named steps: see
cleaner_swap.CRASH_POINTS.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.eventloop.failure_log import FailureLog
from samsa.protocol.batches.record_batch import read_batch_header
from samsa.storage.cleaner.compaction import Cleaner, CleaningAborted, CleanResult
from samsa.storage.cleaner.offset_map import OffsetMap
from samsa.storage.cleaner.swap import CRASH_POINTS, CrashHook
from samsa.storage.files.checkpoint import (
    CorruptCheckpointError,
    TopicPartitionKey,
    read_checkpoint,
    write_checkpoint,
)
from samsa.storage.log import Log
from samsa.storage.segments.segment import LogSegment

logger = logging.getLogger("samsa.storage")

CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
DEFAULT_MAX_MAP_ENTRIES = 500_000


class InjectedCrash(BaseException):
    """Raised at a crash point when no other crash action is given (tests)."""


@dataclass(slots=True, frozen=True)
class CleaningPlan:
    """Why and what to clean in one log."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    dirty_ratio: float
    reason: str


@dataclass(slots=True)
class CleanerStats:
    """What the cleaner did since start, for the broker log and status surfaces.

    Written only by the cleaner's thread; readers elsewhere see plain ints and
    a dict they should copy, which is safe enough for counters."""

    passes: int = 0
    logs_cleaned: int = 0
    bytes_reclaimed: int = 0
    uncleanable: dict[str, str] = field(default_factory=dict)
    """Partition name (``topic-N``) -> why it was given up on."""


class LogCleaner:
    """Runs passes over the compacted logs of one data directory.

    One pass at a time, in the caller's thread (the broker uses a worker
    thread); ``stop`` may be called from any thread and makes a running pass
    end at the next batch, leaving only ``.cleaned`` files behind."""

    def __init__(
        self,
        data_dir: Path,
        *,
        max_map_entries: int = DEFAULT_MAX_MAP_ENTRIES,
        crash_at: str | None = None,
        on_crash: CrashHook | None = None,
        first_unstable_offset: Callable[[TopicPartitionKey], int | None] | None = None,
    ) -> None:
        """``first_unstable_offset`` names the first offset of a partition's
        oldest open transaction: the segment holding it and all later ones stay
        uncleanable (Kafka bounds cleaning by it), since whether those records
        count is not decided yet."""
        self._first_unstable = first_unstable_offset
        if crash_at is not None and crash_at not in CRASH_POINTS:
            raise ValueError(f"unknown cleaner crash point {crash_at!r}; one of {CRASH_POINTS}")
        self.checkpoint_path = Path(data_dir) / CLEANER_CHECKPOINT
        self._crash_at = crash_at
        self._on_crash = on_crash
        self._stop = threading.Event()
        self._horizons: dict[TopicPartitionKey, int] = {}
        self._uncleanable: dict[TopicPartitionKey, Log] = {}
        self._transient_failures = FailureLog(logger, "log cleaning")
        self._checkpoint_failures = FailureLog(logger, "writing the cleaner checkpoint")
        self._checkpoint_pending = False
        self._new_failures = False
        self.stats = CleanerStats()
        self._checkpoints = self._read_checkpoints()
        self._cleaner = Cleaner(
            OffsetMap(max_map_entries), crash=self._crash_point, should_stop=self._stop.is_set
        )

    def _read_checkpoints(self) -> dict[TopicPartitionKey, int]:
        try:
            return read_checkpoint(self.checkpoint_path)
        except (CorruptCheckpointError, OSError) as e:
            logger.warning("ignoring unreadable cleaner checkpoint (cleaning from start): %s", e)
            return {}

    def checkpoints(self) -> dict[TopicPartitionKey, int]:
        return dict(self._checkpoints)

    def stop(self) -> None:
        self._stop.set()

    # -- passes -----------------------------------------------------------

    def run_pass(
        self, logs: Mapping[TopicPartitionKey, Log], now_ms: int
    ) -> dict[TopicPartitionKey, CleanResult]:
        """Clean every log that needs it, dirtiest first.

        Each log is planned and cleaned on its own: a log whose planning or
        cleaning raises is skipped (marked uncleanable, or retried next pass
        when the failure may be transient) and the pass goes on with the rest.
        """
        self._forget_removed(logs)
        plans: list[tuple[float, TopicPartitionKey, Log, CleaningPlan]] = []
        for key, log in logs.items():
            if self._is_uncleanable(key, log):
                continue
            try:
                plan = self.plan(key, log, now_ms)
            except Exception as exc:
                self._failed(key, log, "planning", exc)
                continue
            if plan is not None:
                plans.append((plan.dirty_ratio, key, log, plan))
        plans.sort(key=lambda p: -p[0])
        results: dict[TopicPartitionKey, CleanResult] = {}
        for _, key, log, plan in plans:
            if self._stop.is_set():
                break
            result = self._clean(key, log, plan, now_ms)
            if result is not None:
                results[key] = result
        if results or self._checkpoint_pending:
            self._crash_point("before_checkpoint")
            self._checkpoint_pending = (
                self._checkpoint_failures.run(
                    str(self.checkpoint_path), lambda: self._write_checkpoint(logs)
                )
                is None
            )
        self._record_pass(results)
        return results

    def _write_checkpoint(self, logs: Mapping[TopicPartitionKey, Log]) -> bool:
        write_checkpoint(
            self.checkpoint_path,
            {k: v for k, v in self._checkpoints.items() if k in logs},
        )
        return True

    def _record_pass(self, results: dict[TopicPartitionKey, CleanResult]) -> None:
        stats = self.stats
        stats.passes += 1
        reclaimed = 0
        for key, result in results.items():
            reclaimed += result.bytes_before - result.bytes_after
            logger.info(
                "cleaned %s-%d up to offset %d (tombstones=%d): %d segments -> %d, "
                "%d -> %d bytes, %d of %d records retained",
                key[0],
                key[1],
                result.end_offset,
                result.retained_tombstones,
                result.segments_before,
                result.segments_after,
                result.bytes_before,
                result.bytes_after,
                result.records_retained,
                result.records_read,
            )
        stats.logs_cleaned += len(results)
        stats.bytes_reclaimed += reclaimed
        if results or self._new_failures:
            logger.info(
                "log cleaner pass %d: cleaned %d logs, reclaimed %d bytes "
                "(since start: %d logs, %d bytes); uncleanable partitions: %s",
                stats.passes,
                len(results),
                reclaimed,
                stats.logs_cleaned,
                stats.bytes_reclaimed,
                ", ".join(sorted(stats.uncleanable)) or "none",
            )
        self._new_failures = False

    def clean_log(self, key: TopicPartitionKey, log: Log, now_ms: int) -> CleanResult | None:
        """Clean one log if it needs it and checkpoint; used by tests."""
        return self.run_pass({key: log}, now_ms).get(key)

    def _clean(
        self, key: TopicPartitionKey, log: Log, plan: CleaningPlan, now_ms: int
    ) -> CleanResult | None:
        try:
            result = self._cleaner.clean(
                log, plan.first_dirty_offset, plan.first_uncleanable_offset, now_ms
            )
        except CleaningAborted as e:
            logger.info("[%s] cleaning stopped: %s", log.name, e)
            return None
        except Exception as exc:
            self._failed(key, log, "cleaning", exc)
            return None
        self._transient_failures.succeeded(log.name)
        self._checkpoints[key] = result.end_offset
        if result.next_delete_horizon_ms is None:
            self._horizons.pop(key, None)
        else:
            self._horizons[key] = result.next_delete_horizon_ms
        return result

    # -- failures ---------------------------------------------------------

    def _failed(self, key: TopicPartitionKey, log: Log, step: str, exc: Exception) -> None:
        """Skip this log for now: retry next pass when the failure may be
        transient (I/O), else mark it uncleanable until restart, as Kafka does."""
        if isinstance(exc, OSError) or (
            isinstance(exc, KafkaError) and exc.code == ErrorCode.KAFKA_STORAGE_ERROR
        ):
            self._transient_failures.failed(log.name, exc)
            return
        self._uncleanable[key] = log
        self.stats.uncleanable[log.name] = f"{step}: {type(exc).__name__}: {exc}"
        self._new_failures = True
        logger.error(
            "[%s] %s failed; partition marked uncleanable until restart: %s",
            log.name,
            step,
            exc,
            exc_info=not isinstance(exc, (KafkaError, DecodeError)),
        )

    def _is_uncleanable(self, key: TopicPartitionKey, log: Log) -> bool:
        return self._uncleanable.get(key) is log

    def _forget_removed(self, logs: Mapping[TopicPartitionKey, Log]) -> None:
        """A deleted (or deleted and re-created) log starts with a clean slate."""
        for key, marked in list(self._uncleanable.items()):
            if logs.get(key) is not marked:
                del self._uncleanable[key]
                self.stats.uncleanable.pop(marked.name, None)

    # -- choosing logs ----------------------------------------------------

    def plan(self, key: TopicPartitionKey, log: Log, now_ms: int) -> CleaningPlan | None:
        """Whether ``log`` needs cleaning now, and its dirty range."""
        config = log.config
        if not config.compact:
            return None
        segments = log.segments
        active_base = segments[-1].base_offset
        first_dirty = self._checkpoints.get(key, log.log_start_offset)
        if first_dirty < log.log_start_offset or first_dirty > active_base:
            first_dirty = log.log_start_offset
        inactive = segments[:-1]
        if not inactive:
            return None  # only the active segment, which is never cleaned
        first_uncleanable = active_base
        unstable = None if self._first_unstable is None else self._first_unstable(key)
        if unstable is not None:
            holding = [seg.base_offset for seg in segments if seg.base_offset <= unstable]
            if holding:  # the segment holding the open transaction's start
                first_uncleanable = min(first_uncleanable, holding[-1])
        if config.min_compaction_lag_ms > 0:
            for s in _dirty(inactive, first_dirty, active_base):
                if s.largest_timestamp() > now_ms - config.min_compaction_lag_ms:
                    first_uncleanable = s.base_offset
                    break
        dirty = [
            s
            for s in _dirty(inactive, first_dirty, active_base)
            if s.base_offset < first_uncleanable
        ]
        dirty_bytes = sum(s.size for s in dirty)
        clean_bytes = sum(s.size for s in inactive if s.base_offset < first_dirty)
        total = dirty_bytes + clean_bytes
        ratio = dirty_bytes / total if total else 0.0
        reason = ""
        if dirty_bytes and ratio > config.min_cleanable_dirty_ratio:
            reason = f"dirty ratio {ratio:.2f}"
        elif dirty_bytes and _first_timestamp(dirty[0]) < now_ms - config.max_compaction_lag_ms:
            reason = "max.compaction.lag.ms exceeded"
        elif self._horizons.get(key, now_ms + 1) <= now_ms:
            reason = "delete horizon passed"
        if not reason:
            return None
        return CleaningPlan(first_dirty, max(first_uncleanable, first_dirty), ratio, reason)

    # -- crash injection --------------------------------------------------

    def _crash_point(self, point: str) -> None:
        if point != self._crash_at:
            return
        logger.warning("cleaner crash point %s reached", point)
        if self._on_crash is not None:
            self._on_crash(point)
        raise InjectedCrash(point)


def _dirty(segments: list[LogSegment], first_dirty: int, end: int) -> list[LogSegment]:
    """Segments that may hold offsets >= first_dirty, judged by the next
    segment's base (``end``, the active segment's base, for the last one)."""
    if not segments:
        return []
    bounds = [s.base_offset for s in segments[1:]] + [end]
    return [s for s, bound in zip(segments, bounds, strict=True) if bound > first_dirty]


def _first_timestamp(segment: LogSegment) -> int:
    """Max timestamp of the segment's first batch (Kafka's firstBatchTimestamp)."""
    if segment.size == 0:
        return 2**63 - 1
    try:
        return read_batch_header(segment.log.read(0, 61)).max_timestamp
    except DecodeError:
        return 2**63 - 1
