"""Search a whole topic for records whose key, value or a header contains a text.

As Kafka UIs search: from the newest records back (``from=newest``) or forward
from the oldest, an offset or a time, bounded by a scan limit, answering the
matches found, how many records were scanned and the position reached in
each partition, so the page shows progress and the next call continues from
there (``positions``).  The page calls again and again, a slice of the scan
limit each time, until the limit, the matches wanted or the end.

It never holds the event loop: records are read a slice at a time (at most
``SLICE_BYTES``) through ``read_records``, the Fetch handler's own reader
(a consumer's read from the leader, below the high watermark), and each
slice is decoded and matched in the console's own worker thread, one slice
at a time, while the loop serves everything else.  A call also stops after
``MAX_CALL_BYTES`` read or ``MAX_CALL_SECONDS``.  The match is on the raw
bytes, ignoring case (ASCII letters; any letter when the text is not ASCII),
or on the bytes a text of hex digits spells; only matches are rendered.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samsa.console.context import ConsoleContext
from samsa.console.messages import (
    LOG_APPEND_TIME,
    MODES,
    partition_param,
    partitions_to_read,
    record_row,
)
from samsa.console.params import choice_param, int_param
from samsa.errors import ErrorCode
from samsa.eventloop.switch_interval import switch_interval
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.protocol.acl import AclOperation
from samsa.protocol.batches.record_batch import iter_batches, validate_batch
from samsa.protocol.batches.record_reader import decode_batch

DEFAULT_LIMIT, MAX_LIMIT = 50, 500
DEFAULT_SCAN, MAX_SCAN = 10_000, 100_000
SLICE_BYTES = 256 * 1024
SLICE_RECORDS = 2000
"""How far back a backward slice starts (halved while its records do not fit)."""
SHARE_MIN = 500
"""The fewest records a partition scans in its turn (unless the limit is nearer)."""
MAX_CALL_BYTES = 32 << 20
MAX_CALL_SECONDS = 5.0
CONTROL = 0x20
SWITCH_INTERVAL_S = 0.001


@functools.cache
def _worker() -> concurrent.futures.ThreadPoolExecutor:
    """One thread for every search: slices of concurrent searches take turns,
    and the broker's own thread pool (flushes, the cleaner) is never crowded."""
    return concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="console-search")


async def _off_loop(work: Callable[[], Slice]) -> Slice:
    """``work`` in the search's thread.  Decoding holds the GIL, so the
    interpreter switches threads every millisecond meanwhile (not every 5, the
    default), as the broker does for its own workers: the loop's requests wait
    that long at most for each turn."""
    with switch_interval(SWITCH_INTERVAL_S):
        return await asyncio.get_running_loop().run_in_executor(_worker(), work)


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

    @property
    def done(self) -> bool:
        if self.error is not None:
            return True
        return self.position <= self.low if self.backward else self.position >= self.high

    def status(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "position": self.position,
            "log_start_offset": self.low,
            "high_watermark": self.high,
            "remaining": 0
            if self.done
            else (self.position - self.low if self.backward else self.high - self.position),
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
            batch = decode_batch(data, pos, header)
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


def _read(ctx: ConsoleContext, name: str, partition: int, offset: int) -> tuple[bytes, str | None]:
    request = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": SLICE_BYTES,
        "isolation_level": 0,
        "topics": [
            {
                "topic": name,
                "partitions": [
                    {
                        "partition": partition,
                        "fetch_offset": offset,
                        "current_leader_epoch": -1,
                        "log_start_offset": -1,
                        "partition_max_bytes": SLICE_BYTES,
                    }
                ],
            }
        ],
    }
    entry = ctx.broker.read_records(request)[0]["partitions"][0]
    if entry["error_code"]:
        return b"", ErrorCode(entry["error_code"]).name
    raw = entry.get("records") or b""
    return (raw.read_bytes() if hasattr(raw, "read_bytes") else bytes(raw)), None


async def _step(
    ctx: ConsoleContext, name: str, cursor: Cursor, needle: Needle, scans: int, wanted: int
) -> tuple[Slice, int]:
    """One slice of one partition: read on the loop, scanned in the worker."""
    if not cursor.backward:
        start, end = cursor.position, cursor.high
        data, error = _read(ctx, name, cursor.partition, start)
        if error is None and not data:
            error = f"nothing to read at offset {start}"
        if error is not None:
            return Slice(position=start, error=error), 0
        work = functools.partial(scan_slice, cursor, data, start, end, needle, scans, wanted)
        return await _off_loop(work), len(data)
    end, back, spent = cursor.position, SLICE_RECORDS, 0
    while True:
        start = max(cursor.low, end - back)
        data, error = _read(ctx, name, cursor.partition, start)
        spent += len(data)
        if error is not None:
            return Slice(position=end, error=error), spent
        work = functools.partial(scan_slice, cursor, data, start, end, needle, scans, wanted)
        found = await _off_loop(work)
        if found.covered:
            return found, spent
        if back <= 1:
            return Slice(position=end, error=f"cannot read back from offset {end}"), spent
        back = max(1, back // 4)


def _cursors(
    ctx: ConsoleContext, name: str, chosen: list[int], request: Request, backward: bool
) -> list[Cursor]:
    """Each partition's cursor: from ``positions`` (continuing a search), else
    from where ``from`` says."""
    cursors = []
    for index in chosen:
        local = ctx.broker.replica(name, index)
        if local is None:
            continue
        low, high = local.log_start_offset, local.high_watermark
        cursors.append(Cursor(index, high if backward else low, low, high, backward))
    given = request.query.get("positions", "")
    mode = request.query.get("from", "") or "newest"
    if given:
        at = _positions(given)
        unknown = set(at) - {c.partition for c in cursors}
        if unknown:
            raise HttpError(400, f"positions name partitions not searched here: {sorted(unknown)}")
        cursors = [c for c in cursors if c.partition in at]
        for c in cursors:
            c.position = min(max(at[c.partition], c.low), c.high)
    elif mode == "offset":
        if "offset" not in request.query:
            raise HttpError(400, "from=offset needs an offset")
        offset = int_param(request, "offset", 0, low=0)
        for c in cursors:
            c.position = min(max(offset, c.low), c.high)
    elif mode == "timestamp":
        if "timestamp" not in request.query:
            raise HttpError(400, "from=timestamp needs a timestamp (milliseconds since the epoch)")
        stamp = int_param(request, "timestamp", 0, low=0)
        found = ctx.list_offsets(name, [c.partition for c in cursors], stamp)
        starts = {p["partition_index"]: p["offset"] for p in found}
        for c in cursors:
            offset = starts.get(c.partition, -1)
            c.position = c.high if offset < 0 else min(max(offset, c.low), c.high)
    return cursors


def _positions(raw: str) -> dict[int, int]:
    try:
        pairs = [item.split(":") for item in raw.split(",") if item]
        return {int(p): int(o) for p, o in pairs}
    except ValueError:
        raise HttpError(
            400, f"positions must be partition:offset pairs joined by commas, not {raw!r}"
        ) from None


async def search(ctx: ConsoleContext, name: str, request: Request) -> Response:
    topic = ctx.known_topic(name, AclOperation.READ)  # a consumer's Fetch needs READ
    text = request.query.get("q", "")
    if not text:
        raise HttpError(400, "q is required: the text to search for")
    needle = Needle.of(text)
    mode = choice_param(request, "from", MODES)
    backward = mode == "newest"
    limit = int_param(request, "limit", DEFAULT_LIMIT, low=1, high=MAX_LIMIT)
    scan_limit = int_param(request, "scan_limit", DEFAULT_SCAN, low=1, high=MAX_SCAN)
    single = partition_param(request, name, topic.partitions)
    chosen, elsewhere = partitions_to_read(ctx, topic.partitions, single)
    cursors = _cursors(ctx, name, chosen, request, backward)
    rows: list[dict[str, Any]] = []
    scanned = bytes_read = 0
    stopped = "end"
    started = time.monotonic()
    while any(not c.done for c in cursors):
        if scanned >= scan_limit:
            stopped = "scan_limit"
        elif len(rows) >= limit:
            stopped = "limit"
        elif bytes_read >= MAX_CALL_BYTES:
            stopped = "bytes"
        elif time.monotonic() - started >= MAX_CALL_SECONDS:
            stopped = "time"
        else:
            active = [c for c in cursors if not c.done]
            # The scan limit left, shared among the partitions still open, so
            # each moves on in turn.
            left = scan_limit - scanned
            share = max(min(SHARE_MIN, left), left // len(active))
            for cursor in active:
                left, wanted = scan_limit - scanned, limit - len(rows)
                if left <= 0 or wanted <= 0:
                    break
                scans = min(share, left)
                found, spent = await _step(ctx, name, cursor, needle, scans, wanted)
                bytes_read += spent
                scanned += found.scanned
                rows.extend(found.rows)
                cursor.position = found.position
                cursor.error = found.error
            continue
        break
    rows.sort(key=lambda r: (r["timestamp"], r["partition"], r["offset"]), reverse=backward)
    open_cursors = [c for c in cursors if not c.done]
    return json_response(
        {
            "topic": name,
            "q": text,
            "from": mode,
            "direction": "backward" if backward else "forward",
            "partition": single,
            "limit": limit,
            "scan_limit": scan_limit,
            "scanned": scanned,
            "matched": len(rows),
            "bytes_read": bytes_read,
            "records": rows,
            "positions": [c.status() for c in cursors],
            "done": not open_cursors,
            "stopped": stopped,
            "continue": ",".join(f"{c.partition}:{c.position}" for c in open_cursors) or None,
            "elsewhere": elsewhere,
        }
    )
