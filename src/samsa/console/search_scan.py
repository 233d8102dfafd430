"""Scanning one slice of a partition's records for a search: sans-I/O.

``scan_slice`` takes the bytes one Fetch read gave (whole record batches), the
range of offsets still to scan and the budgets left, and answers the matches,
how many records it scanned and where the partition's search goes on from.
Forward, a cursor's ``position`` is the next offset to read; backward (newest
first), every offset from ``position`` up has been scanned.  Transaction
markers are stepped over and never counted; records below the log start
offset (deleted, but still in their batch) are never scanned; batches past
the range are not decoded.  It runs in the search's worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samsa.console.messages import LOG_APPEND_TIME, MAX_INFLATED_BATCH, record_row
from samsa.protocol.batches.record_batch import iter_batches, validate_batch
from samsa.protocol.batches.record_reader import decode_batch

CONTROL = 0x20


@dataclass(frozen=True, slots=True)
class Needle:
    text: str
    raw: bytes
    ascii: bool
    spelled: bytes | None
    """The bytes a text of hex digits spells ("ff fe"), as binary data is shown."""

    @classmethod
    def of(cls, text: str) -> Needle:
        lowered = text.lower()
        try:
            spelled: bytes | None = bytes.fromhex(lowered)
        except ValueError:
            spelled = None
        return cls(lowered, lowered.encode(), lowered.isascii(), spelled or None)

    def found_in(self, data: bytes | None) -> bool:
        if data is None:
            return False
        if self.spelled is not None and self.spelled in data:
            return True
        if self.ascii:
            return self.raw in data.lower()
        return self.text in data.decode("utf-8", "replace").lower()

    def matches(self, record: Any) -> bool:
        return (
            self.found_in(record.key)
            or self.found_in(record.value)
            or any(self.found_in(k.encode()) or self.found_in(v) for k, v in record.headers)
        )


@dataclass(slots=True)
class Cursor:
    """One partition's search: forward, ``position`` is the next offset to read;
    backward, everything from ``position`` up has been scanned."""

    partition: int
    position: int
    low: int
    high: int
    backward: bool
    error: str | None = None
    touched: bool = False
    """Moved from where ``from`` starts it (this call, or an earlier one)."""

    @property
    def done(self) -> bool:
        if self.error is not None:
            return True
        return self.position <= self.low if self.backward else self.position >= self.high

    @property
    def remaining(self) -> int:
        """Offsets left to scan (an upper bound of the records left)."""
        if self.done:
            return 0
        return self.position - self.low if self.backward else self.high - self.position

    def status(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "position": self.position,
            "log_start_offset": self.low,
            "high_watermark": self.high,
            "remaining": self.remaining,
            "done": self.done,
            "error": self.error,
        }


@dataclass(slots=True)
class Slice:
    """What scanning one slice found, computed in the worker thread."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    scanned: int = 0
    position: int = 0
    covered: bool = True
    error: str | None = None


def scan_slice(
    cursor: Cursor, data: bytes, start: int, end: int, needle: Needle, scans: int, wanted: int
) -> Slice:
    """Scan the records of ``data`` in [start, end) (backward: newest first), at
    most ``scans`` of them, stopping at the ``wanted``-th match; the position
    then reached.  Backward, ``covered`` is False when ``data`` stops short of
    ``end`` (records too large for a slice): nothing is scanned."""
    out = Slice(position=cursor.position)
    records: list[tuple[Any, str]] = []
    # Backward, the whole first batch counts (its records below ``start`` are not
    # scanned yet either: decoded once, not again by the next slice).
    lower = cursor.low if cursor.backward else start
    first: int | None = None  # the first batch's base offset
    last = start - 1  # the last offset of the batches read (control ones too)
    try:
        for pos, header in iter_batches(data):
            if header.base_offset >= end:
                break  # past the range: not decoded at all
            if first is None:
                first = header.base_offset
            last = header.base_offset + header.last_offset_delta
            if header.attributes & CONTROL:
                continue
            validate_batch(data, pos, header)
            kind = "LogAppendTime" if header.attributes & LOG_APPEND_TIME else "CreateTime"
            batch = decode_batch(data, pos, header, max_inflated=MAX_INFLATED_BATCH)
            records.extend((r, kind) for r in batch if lower <= r.offset < end)
            if not cursor.backward and len(records) >= scans:
                break
    except Exception as exc:  # a damaged batch: say where, scan what came before it
        out.error = f"could not decode records after offset {max(start, last + 1)}: {exc}"
    if cursor.backward:
        if out.error is None and last < end - 1:
            out.covered = False
            return out
        records.reverse()
    scanned_last: int | None = None
    for record, kind in records:
        if out.scanned >= scans or len(out.rows) >= wanted:
            # Stopped inside the slice: continue right after the last record scanned.
            out.position = record_after(scanned_last, cursor)
            return out
        out.scanned += 1
        scanned_last = record.offset
        if needle.matches(record):
            out.rows.append(record_row(cursor.partition, record, kind))
    if cursor.backward:
        out.position = max(cursor.low, min(start, start if first is None else first))
    else:
        out.position = min(max(last + 1, start), end)
    return out


def record_after(scanned_last: int | None, cursor: Cursor) -> int:
    """Where a search continues after scanning up to ``scanned_last``."""
    if scanned_last is None:
        return cursor.position
    return scanned_last if cursor.backward else scanned_last + 1
