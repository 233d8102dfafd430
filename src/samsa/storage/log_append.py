"""The Log's write path: append, segment rolls and flushes (see log.py).

Kept apart from reads and retention because it is the produce hot path: one
lock, one pass over the batch headers, one write, and an fsync only when
``flush.messages`` or ``flush.ms`` says so.  Offsets are stamped here (as
leader) or checked (as follower); a batch of a newer leader epoch is recorded
in the epoch cache before its bytes are written.
"""

from __future__ import annotations

import bisect
import logging
import time

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import (
    BatchHeader,
    WritableBuffer,
    iter_batches,
    read_batch_header,
    set_log_append_time,
    stamp_batch,
)
from samsa.storage.files.atomic_file import fsync_dir
from samsa.storage.files.flush_timing import FLUSH_TIMINGS
from samsa.storage.log_dir_failure import io_errors_fail_dir, report_if_io_error, storage_error
from samsa.storage.log_info import AppendInfo
from samsa.storage.log_loader import open_segment
from samsa.storage.log_policy import roll_reason
from samsa.storage.log_state import LogState
from samsa.storage.segments.segment import LogSegment

logger = logging.getLogger("samsa.storage")


def _max_timestamp(header: BatchHeader) -> int:
    return header.max_timestamp


class LogAppend(LogState):
    """Appends, rolls and flushes of one partition's log."""

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
        if self.on_roll is not None:
            self.on_roll(new_base)
        segment = open_segment(self.directory, new_base, self.config, now_ms)
        self._segments.append(segment)
        self._bases.append(new_base)
        return segment

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
