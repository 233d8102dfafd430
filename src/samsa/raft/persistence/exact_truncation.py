"""Truncating the metadata log at any offset, even inside a batch.

``samsa.storage.Log.truncate_to`` removes the whole batch holding the offset,
as Kafka's log does.  Kafka's Raft never needs more, because followers store
the leader's batches byte for byte, so divergence points fall on batch
boundaries.  Here entries travel between nodes one by one and each node groups
them into batches of its own, so a divergence point (where an epoch ends on the
leader) can fall inside a batch of this node.  Truncating the whole batch would
drop entries the leader has, possibly committed ones that this node's
acknowledgement helped commit; Raft may not lose those.

So a truncation inside the batch [base, next) to ``offset``:

1. builds a batch of the records [base, offset) (``batch_prefix``);
2. if some of them were flushed, writes that batch to ``raft-truncation.pending``
   (atomically, fsynced) before touching the log;
3. truncates the log to ``base``, appends the prefix batch, restores the log
   start offset and fsyncs the prefix if it had been flushed;
4. deletes the pending file.

A crash at any step leaves either the log as it was (the truncation is simply
not done, as any truncation whose data comes back after a crash) or the pending
file, which ``finish_pending_truncation`` applies when the log is opened: the
flushed prefix is never lost.
"""

from __future__ import annotations

import logging
from pathlib import Path

from samsa.errors import DecodeError, KafkaError
from samsa.protocol.batches.record_batch import read_batch_header
from samsa.raft.persistence.entry_codec import batch_prefix, iter_whole_batches
from samsa.storage import Log
from samsa.storage.files.atomic_file import atomic_write, fsync_dir

__all__ = ["PENDING_TRUNCATION_FILE", "finish_pending_truncation", "truncate_exactly"]

logger = logging.getLogger(__name__)

PENDING_TRUNCATION_FILE = "raft-truncation.pending"


def truncate_exactly(log: Log, offset: int) -> None:
    """Remove every entry at or above ``offset`` and nothing below it (module doc)."""
    if offset >= log.log_end_offset:
        return
    fetched = log.read(offset, 1)
    data = bytes(fetched.records)
    header = read_batch_header(data)
    if header.base_offset >= offset:
        log.truncate_to(offset)
        return
    prefix = batch_prefix(data, 0, header, offset)
    flushed = log.recovery_point
    pending = log.directory / PENDING_TRUNCATION_FILE
    journaled = flushed > header.base_offset
    if journaled:
        atomic_write(pending, bytes(prefix))
    _replace_tail(log, prefix, log.log_start_offset, flush_to=min(flushed, offset))
    if journaled:
        _remove(pending)


def finish_pending_truncation(log: Log) -> None:
    """At open: complete a truncation that a crash interrupted (see module doc)."""
    pending = log.directory / PENDING_TRUNCATION_FILE
    try:
        prefix = bytearray(pending.read_bytes())
    except FileNotFoundError:
        return
    try:
        batches = list(iter_whole_batches(prefix))
        if len(batches) != 1:
            raise DecodeError(f"{len(batches)} batches instead of one")
    except (DecodeError, KafkaError) as e:
        # It is written atomically, so this is damage after the fact: the log
        # itself was not touched before the file was complete.
        logger.warning("[%s] ignoring a damaged %s: %s", log.name, PENDING_TRUNCATION_FILE, e)
        _remove(pending)
        return
    header = batches[0][1]
    end = log.log_end_offset
    if header.base_offset <= end < header.next_offset:
        logger.info(
            "[%s] completing a truncation interrupted by a crash: restoring offsets %d to %d",
            log.name,
            header.base_offset,
            header.next_offset - 1,
        )
        _replace_tail(log, prefix, log.log_start_offset, flush_to=header.next_offset)
    elif end < header.base_offset:
        logger.warning(
            "[%s] the log ends at %d, below a pending truncation's batch at %d: not applied",
            log.name,
            end,
            header.base_offset,
        )
    _remove(pending)


def _replace_tail(log: Log, prefix: bytearray, start_offset: int, *, flush_to: int) -> None:
    base = read_batch_header(prefix).base_offset
    log.truncate_to(base)
    log.append(prefix, assign_offsets=False)
    if start_offset > log.log_start_offset:  # truncate_to lowers the start to the cut
        log.delete_records(start_offset)
    if flush_to > base:
        log.flush(flush_to)


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
    fsync_dir(path.parent)
