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
slice is decoded and matched (``search_scan``) in the console's own worker
thread, one slice at a time, while the loop serves everything else.  A call also stops after
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
from typing import Any

from samsa.console.context import ConsoleContext
from samsa.console.messages import MODES, partition_param, partitions_to_read
from samsa.console.params import choice_param, int_param
from samsa.console.search_scan import Cursor, Needle, Slice, scan_slice
from samsa.errors import ErrorCode
from samsa.eventloop.switch_interval import switch_interval
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.protocol.acl import AclOperation

DEFAULT_LIMIT, MAX_LIMIT = 50, 500
DEFAULT_SCAN, MAX_SCAN = 10_000, 100_000
SLICE_BYTES = 256 * 1024
SLICE_RECORDS = 2000
"""How far back a backward slice starts (a quarter as far while its records do not fit)."""
SHARE_MIN = 500
"""The fewest records a partition scans in its turn (unless the limit is nearer)."""
MAX_CALL_BYTES = 32 << 20
MAX_CALL_SECONDS = 5.0
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
    if mode == "offset":
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
    if given:
        at, finished = parse_positions(given)
        unknown = set(at) - {c.partition for c in cursors}
        if unknown:
            raise HttpError(400, f"positions name partitions not searched here: {sorted(unknown)}")
        for c in cursors:
            if any(low <= c.partition <= high for low, high in finished):
                c.position, c.touched = (c.low if c.backward else c.high), True  # done
            elif c.partition in at:
                c.position, c.touched = min(max(at[c.partition], c.low), c.high), True
    return cursors


def parse_positions(raw: str) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """``P:OFFSET`` items (where a partition goes on) and ``P:done`` or
    ``P-Q:done`` items (finished), joined by commas: an answer's ``continue``."""
    at: dict[int, int] = {}
    finished: list[tuple[int, int]] = []
    try:
        for item in filter(None, raw.split(",")):
            which, offset = item.split(":")
            if offset == "done":
                low, _, high = which.partition("-")
                finished.append((int(low), int(high or low)))
            else:
                at[int(which)] = int(offset)
    except ValueError:
        raise HttpError(
            400,
            "positions must be partition:offset (or partition[-partition]:done) items joined "
            f"by commas, as an answer's continue, not {raw!r}",
        ) from None
    return at, finished


def continuation(cursors: list[Cursor]) -> str | None:
    """Where a next call goes on: the partitions moved and still open with their
    offsets, the finished ones as runs; the others start as ``from`` says (so
    the string stays short however many partitions the topic has)."""
    items = [f"{c.partition}:{c.position}" for c in cursors if c.touched and not c.done]
    finished = sorted(c.partition for c in cursors if c.done)
    run: list[int] = []
    for partition in [*finished, None]:
        if run and (partition is None or partition != run[-1] + 1):
            which = str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
            items.append(f"{which}:done")
            run = []
        if partition is not None:
            run.append(partition)
    return ",".join(items)


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
                cursor.position, cursor.error, cursor.touched = found.position, found.error, True
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
            # The partitions this search has moved and not finished, and those
            # that failed; the others are counted.
            "positions": [c.status() for c in cursors if (c.touched and not c.done) or c.error],
            "remaining": sum(c.remaining for c in open_cursors),
            "partitions_open": len(open_cursors),
            "partitions_done": len(cursors) - len(open_cursors),
            "done": not open_cursors,
            "stopped": stopped,
            "continue": continuation(cursors) if open_cursors else None,
            "elsewhere": elsewhere,
        }
    )
