"""Loading a partition directory into segments, with crash recovery.

Mirrors Kafka's LogLoader.  Steps, in order:

1. Finish an interrupted compaction swap (``.swap`` files; see
   cleaner_swap), then remove leftovers of interrupted operations:
   ``.deleted``/``.cleaned``/``.tmp`` files, and index files whose ``.log`` is
   gone (a segment deletion that crashed between unlinks).
2. Open every segment.  Segments that may hold unflushed data -- the one
   holding the recovery point and all after it -- are recovered unless the
   broker shut down cleanly: each batch's size, magic, CRC and offsets are
   checked, the log is truncated at the first bad batch, indexes are rebuilt,
   and every segment after a truncated one is deleted (its data cannot follow
   a hole).  What was dropped is logged on ``samsa.storage``: partition,
   offset, bytes.
3. Segments below the recovery point were fsynced, so their indexes are
   trusted: a missing one is rebuilt from the log now, the others are read,
   sanity-checked (and rebuilt if broken) only when first used (Kafka's
   LazyIndex).  After a clean shutdown no segment is recovered, so a broker of
   10,000 idle partitions opens one file per partition at start-up, not three.
4. The log end offset: after a clean shutdown it is the checkpointed recovery
   point (a clean close flushes every log to its end before the checkpoint
   and the marker are written), so nothing is read; otherwise it is read from
   the active segment's tail (its offset index's last entry, then headers).

Nothing here is lost twice: recovery only removes bytes that do not form a
valid batch, or that follow such bytes.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from samsa.storage.cleaner.swap import SWAP_SUFFIX, complete_swaps
from samsa.storage.segments.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, LogSegment
from samsa.storage.segments.transaction_index import TXN_INDEX_SUFFIX
from samsa.storage.topic_config.log_config import LogConfig

logger = logging.getLogger("samsa.storage")

_LEFTOVER_SUFFIXES = (".deleted", ".cleaned", ".tmp")
_SEGMENT_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, ".snapshot")
_UNTIDY_SUFFIXES = (*_LEFTOVER_SUFFIXES, SWAP_SUFFIX)
_INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)


@dataclass(slots=True)
class LoadedLog:
    segments: list[LogSegment]
    next_offset: int
    log_start_offset: int
    recovery_point: int
    file_names: frozenset[str]
    """What the directory held once loaded (the producer state's snapshots are
    found here rather than by listing the directory again)."""


def open_segment(
    directory: Path,
    base_offset: int,
    config: LogConfig,
    now_ms: int,
    *,
    lazy: bool = False,
    file_names: frozenset[str] | set[str] | None = None,
) -> LogSegment:
    """``file_names``: the directory's listing, when the caller has it (a
    transaction index absent from it is not looked for)."""
    return LogSegment.open(
        directory,
        base_offset,
        index_interval_bytes=config.index_interval_bytes,
        max_index_bytes=config.segment_index_bytes,
        now_ms=now_ms,
        lazy_indexes=lazy,
        file_names=file_names,
    )


def load_log(
    directory: Path,
    name: str,
    config: LogConfig,
    *,
    recovery_point: int,
    log_start_offset: int,
    had_clean_shutdown: bool,
    now_ms: int,
) -> LoadedLog:
    """Open (and if needed recover) the segments of one partition directory."""
    bases, names = _clean_and_list(directory, name)
    # The segment holding the recovery point and all later ones may hold
    # unflushed data, unless the broker shut down cleanly.
    first_unflushed = len(bases)
    if not had_clean_shutdown:
        first_unflushed = 0
        for i, base in enumerate(bases):
            if base <= recovery_point:
                first_unflushed = i
    segments: list[LogSegment] = []
    for i, base in enumerate(bases):
        prefix = f"{base:020d}"
        had_indexes = prefix + INDEX_SUFFIX in names and prefix + TIME_INDEX_SUFFIX in names
        segment = open_segment(directory, base, config, now_ms, lazy=True, file_names=names)
        segments.append(segment)
        if i >= first_unflushed or had_indexes or not segment.size:
            continue
        logger.warning("[%s] rebuilding indexes of segment %d: index files are missing", name, base)
        _recover_segment(segment, name)
    segments = _recover_unflushed(segments, name, first_unflushed)

    if not segments:
        segments.append(open_segment(directory, max(log_start_offset, 0), config, now_ms))
    next_offset = _clean_end_offset(segments[-1], recovery_point, had_clean_shutdown)
    if next_offset is None:
        next_offset = segments[-1].read_next_offset()
    log_start_offset = max(log_start_offset, segments[0].base_offset)
    if log_start_offset > next_offset:
        # The checkpointed start is beyond the data (its segments were deleted
        # and the rest lost): start an empty log there, as Kafka does.
        logger.warning(
            "[%s] log start offset %d is beyond the log end %d; starting an empty log there",
            name,
            log_start_offset,
            next_offset,
        )
        for segment in segments:
            segment.delete()
        segments = [open_segment(directory, log_start_offset, config, now_ms)]
        next_offset = log_start_offset
    recovery_point = next_offset if had_clean_shutdown else min(recovery_point, next_offset)
    return LoadedLog(segments, next_offset, log_start_offset, recovery_point, frozenset(names))


def _clean_end_offset(
    active: LogSegment, recovery_point: int, had_clean_shutdown: bool
) -> int | None:
    """The log end offset known without reading, else None (see module doc, 4):
    an empty active segment ends at its base; after a clean shutdown the
    checkpointed recovery point is the end if it lies in the active segment
    (a log missing from the checkpoint reads 0 there, which fails this test
    unless the segment is empty)."""
    if not active.size:
        return active.base_offset
    if had_clean_shutdown and recovery_point > active.base_offset:
        return recovery_point
    return None


def _recover_unflushed(segments: list[LogSegment], name: str, first: int) -> list[LogSegment]:
    """Recover ``segments[first:]``; delete every segment after a truncated one."""
    for i in range(first, len(segments)):
        if _recover_segment(segments[i], name):
            dropped = segments[i + 1 :]
            for segment in dropped:
                logger.warning(
                    "[%s] deleting segment %d (%d bytes) after the corrupt segment %d",
                    name,
                    segment.base_offset,
                    segment.size,
                    segments[i].base_offset,
                )
                segment.delete()
            return segments[: i + 1]
    return segments


def _recover_segment(segment: LogSegment, name: str) -> bool:
    """Recover one segment; True if bytes were truncated."""
    result = segment.recover()
    if result.truncated_bytes:
        logger.warning(
            "[%s] recovery truncated segment %d at offset %d (position %d): dropped %d bytes: %s",
            name,
            segment.base_offset,
            result.next_offset,
            result.valid_bytes,
            result.truncated_bytes,
            result.reason,
        )
    return result.truncated_bytes > 0


def _clean_and_list(directory: Path, name: str) -> tuple[list[int], set[str]]:
    """Remove leftovers (see module doc); return the base offsets of segments
    and the names of the files left."""
    listing = os.listdir(directory)
    tidy = _tidy_bases(listing)
    if tidy is not None:
        return tidy, set(listing)
    if complete_swaps(directory, name, listing):
        listing = os.listdir(directory)
    names = set(listing)
    bases: set[int] = set()
    removed: set[str] = set()
    for file_name in names:
        if file_name.endswith(_LEFTOVER_SUFFIXES):
            logger.info("[%s] removing leftover file %s", name, file_name)
            (directory / file_name).unlink(missing_ok=True)
            removed.add(file_name)
        elif file_name.endswith(LOG_SUFFIX):
            base = _base_of(file_name)
            if base is not None:
                bases.add(base)
    for file_name in names:
        base = _base_of(file_name)
        if (
            base is not None
            and file_name.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX))
            and base not in bases
        ):
            logger.info("[%s] removing orphan index file %s", name, file_name)
            (directory / file_name).unlink(missing_ok=True)
            removed.add(file_name)
    return sorted(bases), names - removed


def _tidy_bases(listing: list[str]) -> list[int] | None:
    """The segment bases of a directory with nothing to clean up (no swap, no
    leftover, no index without its log), else None for the full pass above.
    Nearly every directory is tidy, and at start-up 10,000 of them went
    through that pass, name by name, for a fifth of the time of loading them;
    these few passes stay in C string methods."""
    if any(file_name.endswith(_UNTIDY_SUFFIXES) for file_name in listing):
        return None
    stems = {
        file_name[: -len(LOG_SUFFIX)] for file_name in listing if file_name.endswith(LOG_SUFFIX)
    }
    for file_name in listing:
        if file_name.endswith(_INDEX_SUFFIXES) and file_name.partition(".")[0] not in stems:
            return None
    bases = [int(stem) for stem in stems if len(stem) == 20 and stem.isdigit()]
    if len(bases) != len(stems):
        return None
    bases.sort()
    return bases


def _base_of(file_name: str) -> int | None:
    stem, dot, suffix = file_name.partition(".")
    if not dot or len(stem) != 20 or not stem.isdigit() or "." + suffix not in _SEGMENT_SUFFIXES:
        return None
    return int(stem)
