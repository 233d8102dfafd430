"""The Log's removals: truncation, DeleteRecords, retention and the cleaner's swap.

Every way data leaves a partition's log lives here, so the crash-safety rule
they share is in one place: files go oldest-first from the front (what
remains is a suffix) or newest-first from the back (what remains is a
prefix), both of which recovery accepts; and the leader epoch cache is cut
with the data (see log.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.log_dir_failure import io_errors_fail_dir
from samsa.storage.log_loader import open_segment
from samsa.storage.log_policy import (
    count_below_log_start,
    count_retention_bytes_breached,
    count_retention_ms_breached,
)
from samsa.storage.log_state import LogState
from samsa.storage.segments.segment import LogSegment

logger = logging.getLogger("samsa.storage")


class LogRetention(LogState):
    """Truncation, record deletion, retention and segment replacement of one log."""

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

    def truncate_fully_and_start_at(self, offset: int, log_start_offset: int | None = None) -> None:
        """Delete everything and continue as an empty log starting at ``offset``;
        a tiered follower that rebuilt its state from the remote tier gives the
        leader's ``log_start_offset`` (below ``offset``: the rest is remote)."""
        with self._lock, io_errors_fail_dir(self.io_error_report, f"[{self.name}] truncate"):
            self._check_open()
            self._truncate_fully_and_start_at(offset)
            if log_start_offset is not None and log_start_offset < offset:
                self._log_start_offset = log_start_offset

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        for segment in reversed(self._segments):
            segment.delete()
        self._segments = [open_segment(self.directory, offset, self.config, self._clock())]
        self._bases = [offset]
        self._next_offset = self._log_start_offset = self._recovery_point = offset
        self._highest_remote_offset = -1
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

    def update_log_start_offset_from_remote(self, offset: int) -> None:
        """The partition starts at ``offset`` by the remote tier (remote
        retention deleted what was below, or the first remote segment starts
        there): the log start only moves up, never past the log end; local
        segments wholly below it go (Kafka's ``updateLogStartOffsetFromRemoteTier``)."""
        with self._lock:
            if self._closed or offset <= self._log_start_offset:
                return
            self.delete_records(min(offset, self._next_offset))

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
            if self.config.remote_storage_enable:
                return self._run_local_retention(now_ms, limit)
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

    def _run_local_retention(self, now_ms: int, limit: int) -> int:
        """A tiered log's retention (Kafka's, with remote storage on): by
        ``local.retention.ms`` / ``.bytes`` (-2: the total retention), only
        segments the remote tier already holds (unless copying is disabled,
        KIP-950), and only the local log start moves: the data stays readable
        from the remote tier, whose own retention the remote log manager applies."""
        config = self.config
        if not config.remote_log_copy_disable:
            limit = min(limit, count_below_log_start(self._bases, self._highest_remote_offset + 1))
        retention_ms = (
            config.retention_ms if config.local_retention_ms == -2 else config.local_retention_ms
        )
        retention_bytes = (
            config.retention_bytes
            if config.local_retention_bytes == -2
            else config.local_retention_bytes
        )
        count = count_retention_ms_breached(self._segments, now_ms, retention_ms)
        deleted = self._delete_oldest(
            min(count, limit), f"local.retention.ms {retention_ms} breached", move_log_start=False
        )
        limit -= deleted
        count = count_retention_bytes_breached(self._segments, retention_bytes)
        deleted += self._delete_oldest(
            min(count, limit),
            f"local.retention.bytes {retention_bytes} breached",
            move_log_start=False,
        )
        return deleted

    def _delete_oldest(self, count: int, reason: str, *, move_log_start: bool = True) -> int:
        """Delete the ``count`` oldest segments, oldest first, and move the log
        start offset up to the new first segment (a tiered log's local
        retention, ``move_log_start`` False, leaves it: the remote tier holds
        what went).  Crash behaviour: each segment's files go before the next
        one's, so what remains is a suffix; the loader raises the start offset
        to the first segment's base."""
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
        if count and move_log_start:
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
