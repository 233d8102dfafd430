"""When to roll a segment and which old segments retention deletes.

Pure decisions on segment facts (sizes, timestamps, index fullness) and a
LogConfig, kept apart from the Log that acts on them so the rules can be read
and tested against Kafka's in one place.  Nothing here touches files.
"""

from __future__ import annotations

from collections.abc import Sequence

from samsa.storage.segments.segment import LogSegment
from samsa.storage.topic_config.log_config import LogConfig


def roll_reason(
    segment: LogSegment,
    config: LogConfig,
    *,
    append_bytes: int,
    last_offset: int,
    max_timestamp: int,
    now_ms: int,
) -> str:
    """Why the active ``segment`` must be rolled before this append, or "".

    Kafka's rules: a non-empty segment rolls when the append would take it past
    ``segment.bytes``, or it is older than ``segment.ms`` (minus jitter), or an
    index is full; any segment rolls when the offsets would overflow the
    indexes' 32-bit relative offsets."""
    if not segment.can_hold_offset(last_offset):
        return "offsets no longer fit the index"
    if segment.size == 0:
        return ""
    jitter = segment.base_offset % config.segment_jitter_ms if config.segment_jitter_ms else 0
    if segment.size > config.segment_bytes - append_bytes:
        return f"size {segment.size} + {append_bytes} > segment.bytes {config.segment_bytes}"
    if segment.time_waited_for_roll(now_ms, max_timestamp) > config.segment_ms - jitter:
        return f"segment.ms {config.segment_ms} elapsed"
    if segment.indexes_full():
        return "index full"
    return ""


def count_retention_ms_breached(
    segments: Sequence[LogSegment], now_ms: int, retention_ms: int
) -> int:
    """How many of the oldest segments are past ``retention.ms``: those whose
    largest timestamp is older than now - retention.ms, stopping at the first
    that is not, and never the active (last) segment.  -1 keeps forever."""
    if retention_ms < 0:
        return 0
    count = 0
    while count + 1 < len(segments) and now_ms - segments[count].largest_timestamp() > retention_ms:
        count += 1
    return count


def count_retention_bytes_breached(segments: Sequence[LogSegment], retention_bytes: int) -> int:
    """How many of the oldest segments must go so the log fits
    ``retention.bytes`` (whole segments only, never the active one).  -1 = no
    limit."""
    if retention_bytes < 0:
        return 0
    excess = sum(s.size for s in segments) - retention_bytes
    count = 0
    while count + 1 < len(segments) and excess >= segments[count].size:
        excess -= segments[count].size
        count += 1
    return count


def count_below_log_start(base_offsets: Sequence[int], log_start_offset: int) -> int:
    """How many of the oldest segments hold only offsets below the log start
    offset (the next segment starts at or below it)."""
    count = 0
    while count + 1 < len(base_offsets) and base_offsets[count + 1] <= log_start_offset:
        count += 1
    return count
