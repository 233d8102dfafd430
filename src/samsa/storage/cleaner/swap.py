"""The crash-safe file protocol that swaps a cleaned segment into a log.

A group of old segments ``[S0, S1, ... Sn]`` (consecutive, not the active one)
is replaced by one cleaned segment with S0's base offset ``B``:

1. The cleaner writes ``B.log.cleaned``, ``B.index.cleaned`` and
   ``B.timeindex.cleaned`` and fsyncs them.
   Crash here: the loader deletes ``.cleaned`` files; the old segments are
   intact.  (crash point ``after_cleaned``)
2. Under the log's lock: rename the indexes to ``.swap``, then the log:
   ``B.log.swap`` is the commit point.  fsync the directory.
   Crash here: the loader *completes* the swap.  (``after_swap_rename``)
3. Delete the old segments, each ``.log`` before its indexes.
   Crash here: the loader completes the swap.  (``mid_replace``, after the
   first old segment is gone)
4. Rename ``B.log.swap`` to ``B.log``, then the index swaps; fsync the directory.
   Crash between those renames leaves index ``.swap`` files without a
   ``B.log.swap``: the loader deletes them and rebuilds the indexes, which
   are caches.

Completing a swap (Kafka's rule, ``complete_swaps``): read the next offset
``E`` of ``B.log.swap``; delete every segment whose base lies in
``[B, max(E, B + 1))`` -- these can only be members of the replaced group,
since the segments after the group start at or after its end >= E -- then
rename the swap files into place.  An old segment whose records were all
removed and whose base is >= E survives that rule; it holds only records the
interrupted pass was removing, and as the cleaner checkpoint moves only after
a pass completes, the next pass cleans them again.  Nothing retained is lost.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from samsa.errors import KafkaError
from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE, iter_batches
from samsa.storage.files.checkpoint import fsync_dir
from samsa.storage.segments.file_records import FileRecords
from samsa.storage.segments.index import OffsetIndex, TimeIndex
from samsa.storage.segments.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    LogSegment,
    segment_file_name,
)
from samsa.storage.topic_config.log_config import LogConfig

logger = logging.getLogger("samsa.storage")

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
CRASH_POINTS = ("after_cleaned", "after_swap_rename", "mid_replace", "before_checkpoint")
_FILE_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, LOG_SUFFIX)  # log last: the commit point
_SCAN_CHUNK = 1024 * 1024

CrashHook = Callable[[str], None]


def no_crash(point: str) -> None:
    """The production crash hook: does nothing."""


def create_cleaned_segment(
    directory: Path, base_offset: int, config: LogConfig, now_ms: int
) -> LogSegment:
    """A new, empty segment whose files carry the ``.cleaned`` suffix (step 1);
    stale files of an earlier attempt are removed first."""
    paths = [
        directory / (segment_file_name(base_offset, s) + CLEANED_SUFFIX) for s in _FILE_SUFFIXES
    ]
    for path in paths:
        path.unlink(missing_ok=True)
    index_path, time_index_path, log_path = paths
    return LogSegment(
        base_offset,
        FileRecords.open(log_path),
        OffsetIndex(index_path, base_offset, config.segment_index_bytes),
        TimeIndex(time_index_path, base_offset, config.segment_index_bytes),
        index_interval_bytes=config.index_interval_bytes,
        created_ms=now_ms,
    )


def discard_cleaned(segment: LogSegment) -> None:
    """Drop a cleaned segment that will not be swapped in -- unless the swap
    got past its commit point (``.log.swap``): then the loader finishes it."""
    if not segment.log.path.name.endswith(CLEANED_SUFFIX):
        logger.error("cleaned segment %s is past its swap commit point; kept", segment.log.path)
        return
    segment.log.close()
    segment.delete()


def swap_in(
    directory: Path, old: list[LogSegment], new: LogSegment, crash: CrashHook = no_crash
) -> None:
    """Steps 2-4 of the module doc; the caller holds the log's lock and has
    fsynced ``new``.  ``crash`` is called at the named crash points."""
    _rename(new, SWAP_SUFFIX, log_last=True)
    fsync_dir(directory)
    crash("after_swap_rename")
    for i, segment in enumerate(old):
        segment.delete()
        if i == 0:
            crash("mid_replace")
    _rename(new, "", log_last=False)
    fsync_dir(directory)


def _rename(segment: LogSegment, suffix: str, *, log_last: bool) -> None:
    """Give the segment's three files the ``suffix`` (the open descriptors
    keep working); the ``.log`` goes last or first as the protocol needs."""
    prefix = segment.log.path.parent / segment_file_name(segment.base_offset, "")

    def target(kind: str) -> Path:
        return Path(f"{prefix}{kind}{suffix}")

    if not log_last:
        segment.log.rename(target(LOG_SUFFIX))
    segment.offset_index.rename(target(INDEX_SUFFIX))
    segment.time_index.rename(target(TIME_INDEX_SUFFIX))
    if log_last:
        segment.log.rename(target(LOG_SUFFIX))


def complete_swaps(directory: Path, name: str, names: list[str]) -> bool:
    """Finish or discard interrupted swaps before the loader lists segments
    (see the module doc); ``names``: the directory's listing.  True if files
    changed (the caller lists again).  Idempotent: a crash while completing is
    completed again on the next start."""
    swap_bases = sorted(
        int(n[:20]) for n in names if n.endswith(LOG_SUFFIX + SWAP_SUFFIX) and n[:20].isdigit()
    )
    for base in swap_bases:
        swap_log = directory / (segment_file_name(base, LOG_SUFFIX) + SWAP_SUFFIX)
        end = max(_next_offset(swap_log, base), base + 1)
        for file_name in names:
            stem = file_name[:20]
            if file_name.endswith(LOG_SUFFIX) and stem.isdigit() and base <= int(stem) < end:
                logger.warning(
                    "[%s] completing interrupted compaction swap %d: deleting replaced segment %s",
                    name,
                    base,
                    file_name,
                )
                for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
                    (directory / (stem + suffix)).unlink(missing_ok=True)
        for suffix in _FILE_SUFFIXES:
            swap = directory / (segment_file_name(base, suffix) + SWAP_SUFFIX)
            if swap.exists():
                os.replace(swap, directory / segment_file_name(base, suffix))
        logger.warning("[%s] completed interrupted compaction swap of segment %d", name, base)
    if swap_bases:
        names = os.listdir(directory)
    leftovers = [n for n in names if n.endswith(SWAP_SUFFIX)]
    for file_name in leftovers:
        logger.info("[%s] removing leftover index swap file %s", name, file_name)
        (directory / file_name).unlink(missing_ok=True)
    if swap_bases or leftovers:  # a directory nothing changed in needs no fsync
        fsync_dir(directory)
        return True
    return False


def _next_offset(path: Path, base: int) -> int:
    """The offset after the last complete batch of a segment file."""
    next_offset = base
    pos = 0
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        while size - pos >= BATCH_HEADER_SIZE:
            chunk = os.pread(f.fileno(), _SCAN_CHUNK, pos)
            consumed = 0
            try:
                for rel, header in iter_batches(chunk):
                    next_offset = header.next_offset
                    consumed = rel + header.size
            except KafkaError:
                return next_offset
            if consumed == 0:
                length = int.from_bytes(chunk[8:12], "big", signed=True) + 12
                if length <= len(chunk) or pos + length > size:
                    return next_offset
                chunk = os.pread(f.fileno(), length, pos)
                for _, header in iter_batches(chunk):
                    next_offset = header.next_offset
                consumed = length
            pos += consumed
    return next_offset
