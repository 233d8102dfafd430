"""The Log's read path: fetches, header scans, aborted transactions, timestamps.

Kept apart from the write path because readers never change the log: every
method here takes the lock only to see a consistent list of segments, finds
the segment holding an offset by bisecting the base offsets, and hands back
file regions, never decoded records (see log.py).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import BatchHeader
from samsa.storage.log_info import FetchDataInfo
from samsa.storage.log_state import LogState
from samsa.storage.segments.segment import LogSegment
from samsa.storage.segments.transaction_index import AbortedTxn


class LogRead(LogState):
    """Reads of one partition's log."""

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
        Raises KafkaError(OFFSET_OUT_OF_RANGE) outside [local log start, log end]."""
        with self._lock:
            self._check_open()
            start = self._log_start_offset
            if self._bases[0] > start:  # tiered: the rest is in the remote tier
                start = self._bases[0]
            if offset < start or offset > self._next_offset:
                raise KafkaError(
                    ErrorCode.OFFSET_OUT_OF_RANGE,
                    f"[{self.name}] offset {offset} is outside the local log "
                    f"[{start}, {self._next_offset}]",
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
        ``timestamp`` (ListOffsets by time), or None if there is none.  Raises
        KafkaError(INVALID_RECORD) when a compressed batch it must look into holds
        records over ``max.decompressed.message.bytes``."""
        limit = self.config.max_decompressed_message_bytes
        with self._lock:
            for segment in self._segments:
                if 0 <= segment.max_timestamp < timestamp:
                    continue
                found = segment.find_offset_by_timestamp(timestamp, self._log_start_offset, limit)
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
            return best.record_with_max_timestamp(self.config.max_decompressed_message_bytes)
