"""A segment's recovery: validate every batch, rebuild the indexes, cut a torn tail.

Kept apart because it runs rarely (after a crash, or when a lazily opened
index fails its check) and reads the whole file in large chunks, checking
each batch's CRC, where every other path trusts the bytes and reads headers
only.
"""

from __future__ import annotations

from collections.abc import Iterator

from samsa.errors import DecodeError, KafkaError
from samsa.protocol.batches.record_batch import (
    LOG_OVERHEAD,
    BatchHeader,
    iter_batches,
    validate_batch,
)
from samsa.storage.segments.state import RecoveryResult, SegmentState

_RECOVERY_CHUNK = 1024 * 1024


class SegmentRecovery(SegmentState):
    """Recovery of one segment."""

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
