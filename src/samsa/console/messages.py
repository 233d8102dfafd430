"""The message browser: a page of a topic's records, read through the fetch path.

Records are read by the broker's ``read_records``, the function the Fetch
handler serves consumers with (a consumer's read: below the high watermark,
from the partition's leader), never by a second reader of segment files; only
this page decodes them.  The caller needs READ on the topic, as a Fetch does.
Every request reads at most ``max_bytes`` (1 MiB by default, 8 MiB at most)
in total, however many partitions and however large their records.  Where to start: ``newest`` (the last ``limit`` records),
``oldest``, an ``offset`` or a ``timestamp`` (the ListOffsets handler finds the
first offset at or after it).  Over more partitions than records wanted, only
the partitions that can hold the newest records are read (newest), or the
partitions in order until the page is full (the other modes), so a page of a
10,000-partition topic costs about ``limit`` reads.  ``q`` keeps the records of
the page whose key, value or a header contains it (the page's search box uses
``search``, over the whole topic).  Over all partitions only
those this broker leads are read (records are served by leaders); the others
are counted by leader in ``elsewhere``, so the page can say where they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.console.context import ConsoleContext
from samsa.console.params import choice_param, int_param
from samsa.console.schemas.values import with_schemas
from samsa.console.values import matches, render
from samsa.errors import ErrorCode
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.protocol.acl import AclOperation
from samsa.protocol.batches.record_reader import decode_records

MODES = ("newest", "oldest", "offset", "timestamp")
DEFAULT_LIMIT, MAX_LIMIT = 50, 500
DEFAULT_BYTES, MAX_BYTES = 1 << 20, 8 << 20
MIN_PARTITION_BYTES = 16 * 1024
LOG_APPEND_TIME = 0x08
MAX_INFLATED_BATCH = 64 << 20
"""The most one stored batch may inflate to when the console shows it.  The console
runs in the broker's process, and a small compressed batch can claim gigabytes
(the produce path lets it in on a topic without compaction or validation, as
Kafka does); a page shows a few hundred records, so a batch past this is
reported as not shown rather than inflated."""


@dataclass(slots=True)
class Budget:
    """The bytes this request may still read."""

    left: int
    used: int = 0

    def spend(self, size: int) -> None:
        self.left -= size
        self.used += size


@dataclass(slots=True)
class PartitionRead:
    partition: int
    records: list[dict[str, Any]] = field(default_factory=list)
    log_start_offset: int | None = None
    high_watermark: int | None = None
    error: str | None = None

    def status(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "log_start_offset": self.log_start_offset,
            "high_watermark": self.high_watermark,
            "next_offset": self.records[-1]["offset"] + 1 if self.records else None,
            "error": self.error,
        }


def browse(ctx: ConsoleContext, name: str, request: Request) -> Response:
    topic = ctx.known_topic(name, AclOperation.READ)  # a consumer's Fetch needs READ
    mode = choice_param(request, "from", MODES)
    limit = int_param(request, "limit", DEFAULT_LIMIT, low=1, high=MAX_LIMIT)
    budget = Budget(int_param(request, "max_bytes", DEFAULT_BYTES, low=1024, high=MAX_BYTES))
    single = partition_param(request, name, topic.partitions)
    chosen, elsewhere = partitions_to_read(ctx, topic.partitions, single)
    many = len(chosen) > limit
    if mode == "newest" and many:
        chosen = _newest_partitions(ctx, name, chosen, limit)
    per_partition = max(budget.left // max(len(chosen), 1), MIN_PARTITION_BYTES)
    reads: list[PartitionRead] = []
    found = 0
    # Over many partitions, where to start is looked up a page's worth at a time:
    # the page is usually full long before the last partition.
    step = limit if many else max(len(chosen), 1)
    for at in range(0, len(chosen), step):
        chunk = chosen[at : at + step]
        starts = _starts(ctx, name, chunk, mode, request)
        for index in chunk:
            read = PartitionRead(index)
            _bounds(ctx, name, read)
            start = starts.get(index)
            if read.error is None and start is not None:
                if mode == "newest":
                    _read_newest(ctx, name, read, limit, budget, per_partition)
                else:
                    _read_from(ctx, name, read, start, limit, budget, per_partition)
            reads.append(read)
            found += len(read.records)
        if many and found >= limit:
            break  # more partitions than records wanted: the first that fill the page
    records = [r for read in reads for r in read.records]
    if mode == "newest":
        records.sort(key=lambda r: (r["timestamp"], r["offset"]), reverse=True)
    else:
        records.sort(key=lambda r: (r["timestamp"], r["partition"], r["offset"]))
    records = records[:limit]
    needle = request.query.get("q", "").lower()
    shown = [r for r in records if _found(r, needle)] if needle else records
    return json_response(
        {
            "topic": name,
            "from": mode,
            "partition": single,
            "limit": limit,
            "max_bytes": budget.left + budget.used,
            "bytes_read": budget.used,
            "q": needle or None,
            "matched": len(shown),
            "scanned": len(records),
            "records": shown,
            "partitions": [read.status() for read in reads if read.records or read.error],
            "elsewhere": elsewhere,
        }
    )


def partitions_to_read(
    ctx: ConsoleContext, partitions: Mapping[int, Any], single: int | None
) -> tuple[list[int], list[dict[str, int]]]:
    """The one partition asked for, or every partition this broker leads (records
    are served by leaders); and the others counted by leader, so the page can
    say where they are."""
    if single is not None:
        return [single], []
    node = ctx.broker.node_id
    chosen = sorted(i for i, r in partitions.items() if r.leader == node)
    elsewhere = Counter(r.leader for r in partitions.values() if r.leader != node)
    return chosen, [
        {"leader": leader, "partitions": count} for leader, count in sorted(elsewhere.items())
    ]


def partition_param(request: Request, name: str, partitions: Mapping[int, Any]) -> int | None:
    """The one partition asked for, or None for all."""
    if request.query.get("partition", "") in ("", "all"):
        return None
    chosen = int_param(request, "partition", 0, low=0)
    if chosen not in partitions:
        raise HttpError(
            404, f"topic {name!r} has no partition {chosen} (it has {len(partitions)} partitions)"
        )
    return chosen


def _newest_partitions(ctx: ConsoleContext, name: str, chosen: list[int], limit: int) -> list[int]:
    """The partitions that can hold the newest ``limit`` records: those with the
    ``limit`` newest largest timestamps (each segment keeps its largest in
    memory).  A partition holding one of those records has a largest timestamp
    at least as new as all of them, and at most ``limit`` partitions can."""
    newest: list[tuple[int, int]] = []
    for index in chosen:
        local = ctx.broker.replica(name, index)
        if local is None or local.high_watermark <= local.log_start_offset:
            continue
        stamp = max((segment.max_timestamp for segment in local.log.segments), default=-1)
        newest.append((stamp, index))
    newest.sort(reverse=True)
    return sorted(index for _, index in newest[:limit])


def _starts(
    ctx: ConsoleContext, name: str, chosen: list[int], mode: str, request: Request
) -> dict[int, int]:
    """Where each partition's read begins (-1: at its end; absent: nothing to read)."""
    if mode in ("newest", "oldest"):
        return dict.fromkeys(chosen, -1)
    if mode == "offset":
        if "offset" not in request.query:
            raise HttpError(400, "from=offset needs an offset")
        offset = int_param(request, "offset", 0, low=0)
        if len(chosen) == 1:
            local = ctx.broker.replica(name, chosen[0])
            if local is not None and not local.log_start_offset <= offset <= local.high_watermark:
                low, high = local.log_start_offset, local.high_watermark
                held = (
                    f"records are at offsets {low} to {high - 1}" if high > low else "it is empty"
                )
                raise HttpError(
                    400, f"offset {offset} is out of range for {name}-{chosen[0]}: {held}"
                )
        return dict.fromkeys(chosen, offset)
    if "timestamp" not in request.query:
        raise HttpError(400, "from=timestamp needs a timestamp (milliseconds since the epoch)")
    timestamp = int_param(request, "timestamp", 0, low=0)
    found = ctx.list_offsets(name, chosen, timestamp)
    return {p["partition_index"]: p["offset"] for p in found if p["offset"] >= 0}


def _bounds(ctx: ConsoleContext, name: str, read: PartitionRead) -> None:
    local = ctx.broker.replica(name, read.partition)
    registration = ctx.broker.image.topics[name].partitions.get(read.partition)
    leader = -1 if registration is None else registration.leader
    if local is None or leader != ctx.broker.node_id:
        read.error = (
            "offline: no leader"
            if leader < 0
            else f"led by broker {leader}: browse it on that broker's console"
        )
        return
    read.log_start_offset = local.log_start_offset
    read.high_watermark = local.high_watermark


def _read_newest(
    ctx: ConsoleContext, name: str, read: PartitionRead, limit: int, budget: Budget, cap: int
) -> None:
    """The last ``limit`` records; when they do not fit in the bytes left, fewer
    of the newest (halving how far back the read starts)."""
    assert read.high_watermark is not None and read.log_start_offset is not None
    end = read.high_watermark
    back = limit
    while True:
        start = max(read.log_start_offset, end - back)
        if start >= end:
            return
        _read_from(ctx, name, read, start, limit, budget, cap)
        if read.error or not read.records or read.records[-1]["offset"] >= end - 1:
            return
        if budget.left <= 0 or back <= 1:
            return
        back = max(1, min(back, len(read.records)) // 2)


def _read_from(
    ctx: ConsoleContext,
    name: str,
    read: PartitionRead,
    start: int,
    limit: int,
    budget: Budget,
    cap: int,
) -> None:
    if budget.left <= 0:
        return
    low, high = read.log_start_offset or 0, read.high_watermark or 0
    if start < 0:
        start = low
    if not low <= start <= high:
        read.error = f"offset {start} is out of range: records are at {low} to {high - 1}"
        return
    request = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": budget.left,
        "isolation_level": 0,
        "topics": [
            {
                "topic": name,
                "partitions": [
                    {
                        "partition": read.partition,
                        "fetch_offset": start,
                        "current_leader_epoch": -1,
                        "log_start_offset": -1,
                        "partition_max_bytes": min(cap, budget.left),
                    }
                ],
            }
        ],
    }
    responses = ctx.broker.read_records(request)
    entry = responses[0]["partitions"][0]
    if entry["error_code"]:
        read.error = ErrorCode(entry["error_code"]).name
        return
    raw = entry.get("records") or b""
    data = raw.read_bytes() if hasattr(raw, "read_bytes") else bytes(raw)
    budget.spend(len(data))
    rows = []
    try:
        for header, records in decode_records(data, max_inflated=MAX_INFLATED_BATCH):
            timestamp_type = (
                "LogAppendTime" if header.attributes & LOG_APPEND_TIME else "CreateTime"
            )
            for r in records:
                if r.offset >= start:
                    rows.append(with_schemas(ctx, record_row(read.partition, r, timestamp_type), r))
    except Exception as exc:  # a damaged batch: say so, show what came before it
        read.error = f"could not decode records after offset {start}: {exc}"
    read.records = rows[:limit]


def record_row(partition: int, record: Any, timestamp_type: str) -> dict[str, Any]:
    return {
        "partition": partition,
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestamp_type": timestamp_type,
        "key": render(record.key),
        "value": render(record.value),
        "headers": [{"key": k, "value": render(v)} for k, v in record.headers],
    }


def _found(row: dict[str, Any], needle: str) -> bool:
    return (
        matches(row["key"], needle)
        or matches(row["value"], needle)
        or any(needle in h["key"].lower() or matches(h["value"], needle) for h in row["headers"])
    )
