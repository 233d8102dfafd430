"""One pass of copying a current log into its future log (blocking).

Kafka's ReplicaAlterLogDirsThread fetches from the local replica manager
what a follower would fetch over the network; here a pass reads the current
log's batches straight from its files and appends them to the future log as
a follower appends what it fetched (``follower_writes``: offsets and leader
epochs kept, CRCs checked, producer state and the aborted-transaction index
built as it goes), so the future log is the same log, byte for byte.

Before copying, a pass makes the future log a prefix of the current one
again, as Kafka's fetcher does with the leader:

* a diverging suffix is cut -- the current log, a follower, may have
  truncated data the future log already copied; the leader-epoch exchange of
  a follower (replication/epochs) finds where, without a round trip;
* the log start follows the current log's (retention, DeleteRecords); when
  the current log no longer holds the future log's end, the future log
  starts over at the current log's first local offset (a tiered log keeps
  its remote start).

When the future log has caught up, its leader epochs are made the current
log's (a leader records its epoch before writing in it: the future log
would not know it from the batches).  Every function here blocks on disk:
``copy_pass`` runs in a worker thread; only ``copy_batches`` of a few
batches runs on the event loop, for the last step before the swap.
"""

from __future__ import annotations

import logging

from samsa.replication.dir_moves.promotion import LogFacts
from samsa.replication.epochs import offset_truncation
from samsa.replication.fetcher import follower_writes
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH
from samsa.storage.log import Log
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.segments.file_region import FileRegion

log = logging.getLogger("samsa.replication.dir_moves")

__all__ = ["copy_batches", "copy_pass", "facts", "needs_preparing", "prepare"]

READ_BYTES = 1 << 20
"""Bytes read from the current log at a time (one segment's worth at most)."""
MAX_TRUNCATION_ROUNDS = 64


def facts(log_: Log) -> LogFacts:
    return LogFacts(
        log_.log_start_offset,
        log_.log_end_offset,
        tuple(log_.leader_epoch_cache.entries()),
    )


def copy_pass(source: Log, future: Log, state: ProducerStateManager, max_bytes: int) -> int:
    """Prepare, copy up to ``max_bytes`` (at least one batch when behind), and
    take the current log's epochs once caught up; the bytes appended."""
    prepare(source, future, state)
    copied = copy_batches(source, future, state, max_bytes)
    sync_epochs(source, future)
    return copied


def needs_preparing(source: Log, future: Log) -> bool:
    """Whether the future log's start or end must move before batches can be
    appended to it (a cheap check, for the event loop)."""
    end = future.log_end_offset
    return (
        future.log_start_offset != source.log_start_offset
        or end > source.log_end_offset
        or end < source.local_log_start_offset
        or _diverges(source, future)
    )


def prepare(source: Log, future: Log, state: ProducerStateManager) -> None:
    truncate_diverged(source, future, state)
    align_start(source, future, state)
    future.update_highest_offset_in_remote_storage(source.highest_offset_in_remote_storage)


def truncate_diverged(source: Log, future: Log, state: ProducerStateManager) -> bool:
    """Cut what the current log no longer holds (Kafka's future-replica
    truncation by leader epoch); True if anything was cut."""
    truncated = False
    for _ in range(MAX_TRUNCATION_ROUNDS):
        end = future.log_end_offset
        if end == future.log_start_offset:
            break
        epoch = future.leader_epoch_cache.epoch_for_offset(end - 1)
        if epoch == UNDEFINED_EPOCH:
            # No epochs (data from before them): only the end can be compared.
            cut_at = min(end, source.log_end_offset)
            completed = True
        else:
            theirs = source.end_offset_for_epoch(epoch)
            if theirs.epoch == epoch and theirs.end_offset >= end:
                break
            ours = future.end_offset_for_epoch(theirs.epoch)
            cut = offset_truncation(theirs, ours, end, min(end, source.log_end_offset))
            cut_at, completed = cut.offset, cut.completed
        if cut_at < end:
            log.info("[%s] future log diverges from the current one at %d", future.name, cut_at)
            follower_writes.truncate_to(future, state, cut_at)
            truncated = True
        if completed or cut_at >= end:
            break
    return truncated


def _diverges(source: Log, future: Log) -> bool:
    end = future.log_end_offset
    if end == future.log_start_offset:
        return False
    epoch = future.leader_epoch_cache.epoch_for_offset(end - 1)
    if epoch == UNDEFINED_EPOCH:
        return end > source.log_end_offset
    theirs = source.end_offset_for_epoch(epoch)
    return theirs.epoch != epoch or theirs.end_offset < end


def align_start(source: Log, future: Log, state: ProducerStateManager) -> None:
    """Follow the current log's start (see the module doc).  A future log
    starting after the current one (whose start a crash put back to its
    checkpoint) starts over too: a log start never moves back."""
    local_start = source.local_log_start_offset
    start = source.log_start_offset
    end = future.log_end_offset
    empty = end == future.log_start_offset
    if (
        end < local_start
        or future.log_start_offset > start
        or (empty and (end != local_start or future.log_start_offset != start))
    ):
        log.info(
            "[%s] future log starts over at %d (the current log starts at %d)",
            future.name,
            local_start,
            start,
        )
        # A tiered log keeps its remote start below its first local offset.
        future.truncate_fully_and_start_at(local_start, start if start < local_start else None)
        state.truncate_fully_and_start_at(local_start)
    elif future.log_start_offset < start:
        future.delete_records(start)
        state.delete_snapshots_before(future.log_start_offset)


def copy_batches(source: Log, future: Log, state: ProducerStateManager, max_bytes: int) -> int:
    """Append the current log's next batches to the future log, up to
    ``max_bytes`` (at least one batch when behind); the bytes appended."""
    copied = 0
    while copied < max_bytes:
        offset = future.log_end_offset
        if offset >= source.log_end_offset:
            break
        read = source.read(offset, min(max_bytes - copied, READ_BYTES), min_one=True)
        records = read.records
        if not len(records):
            break
        data = records.read_bytes() if isinstance(records, FileRegion) else bytes(records)
        appended = follower_writes.append_as_follower(future, state, data)
        if appended is None:
            break
        copied += appended.valid_bytes
    return copied


def sync_epochs(source: Log, future: Log) -> bool:
    """Once caught up, give the future log the current log's leader epochs;
    True if they changed."""
    if (
        future.log_end_offset != source.log_end_offset
        or future.log_start_offset != source.log_start_offset
    ):
        return False
    wanted = source.leader_epoch_cache.entries()
    if future.leader_epoch_cache.entries() == wanted:
        return False
    future.restore_leader_epochs(wanted)
    return True
