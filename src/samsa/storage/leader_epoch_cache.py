"""Which leader epoch wrote which offsets: Kafka's LeaderEpochFileCache.

A replica that was a follower, or a leader that lost its leadership, may hold
a suffix that the new leader never had.  To find where its log diverges it
asks the leader "where did my latest epoch end on your log?"
(OffsetForLeaderEpoch, and Raft's Fetch with ``last_fetched_epoch``).  Both
sides answer from this cache: one ``(epoch, start_offset)`` entry per epoch
that wrote data, the start being the offset of its first batch.

Invariants (as Kafka keeps them): entries are ordered, with both epochs and
start offsets strictly increasing; every start offset lies within
[log start offset, log end offset] of the log that owns the cache (the load
and the truncations restore this after a crash, see ``load_leader_epoch_cache``).

Durability: the cache is written to ``leader-epoch-checkpoint`` (Kafka's
format, see leader_epoch_checkpoint) whenever its entries change, before the
change is visible in memory, so a failed write leaves memory and file as they
were.  The Log assigns a new epoch *before* it writes the epoch's first batch,
so the file never misses an epoch that is on disk; entries the file holds
beyond the data (a crash between the two writes, a truncation whose data
loss came back) are cut by the truncations at load.  The write is atomic but
not fsynced (atomic_file's ``sync=False``): a process crash keeps it (the page
cache survives), and against a power loss ``sync`` makes it durable before
the data it describes -- the Log calls it first thing when it fsyncs
segments.  An epoch whose entry is lost with the power wrote no durable data,
so nothing on disk misses its epoch.  This keeps a broker that gains or
loses leadership of 10,000 partitions from doing 10,000 fsyncs on its event
loop (Kafka defers these writes too, KAFKA-15046).

Threading: owned by one Log and changed only under the Log's lock.  Each
change replaces the entries whole, so a reader without the lock (Raft's
driver, a fetch handler) sees one consistent version, old or new.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from samsa.errors import KafkaError
from samsa.protocol.batches.record_batch import BatchHeader
from samsa.storage.files.atomic_file import sync_file
from samsa.storage.files.checkpoint import CorruptCheckpointError
from samsa.storage.files.leader_epoch_checkpoint import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    EpochEntry,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)

__all__ = [
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "EpochEndOffset",
    "EpochEntry",
    "LeaderEpochFileCache",
    "load_leader_epoch_cache",
    "newer_epochs",
]

logger = logging.getLogger("samsa.storage")

# Kafka's OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class EpochEndOffset(NamedTuple):
    """Answer to "where did ``epoch`` end?": the largest known epoch <= the one
    asked and the offset where it ended, or (-1, -1) when unknown."""

    epoch: int
    end_offset: int


_UNKNOWN = EpochEndOffset(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


class LeaderEpochFileCache:
    """Ordered (epoch, start offset) entries, persisted at ``path`` (None: in
    memory only, e.g. for an in-memory Raft log in tests).

    ``latest_epoch`` is a plain attribute, not a property, because the Log
    compares every append's epoch with it; read it, never assign it."""

    __slots__ = ("_entries", "_on_file", "_unsynced", "file_ahead", "latest_epoch", "name", "path")

    def __init__(self, path: Path | None, name: str, entries: Iterable[EpochEntry] = ()) -> None:
        self.path = path
        self.name = name
        # (epochs, starts): replaced whole, never changed in place, so a reader
        # without the Log's lock sees one consistent version.
        self._entries: tuple[list[int], list[int]] = ([], [])
        self._unsynced = False  # written without fsync since the last ``sync``
        # What the file holds, when known: a change back to it is not written.
        self._on_file: tuple[list[int], list[int]] | None = None
        # The file differs from memory: it holds entries the load cut (harmless
        # until data passes their start offsets) or misses a deferred
        # ``assign_at_end`` (harmless until data of that epoch is written); the
        # Log writes the file before it appends.
        self.file_ahead = False
        # The newest epoch in the cache, UNDEFINED_EPOCH (-1) when it is empty.
        self.latest_epoch = UNDEFINED_EPOCH
        epochs: list[int] = []
        starts: list[int] = []
        for epoch, start_offset in entries:
            _check_entry(epoch, start_offset)
            if _is_update_needed(epochs, starts, epoch, start_offset):
                _remove_conflicting(epochs, starts, epoch, start_offset)
                epochs.append(epoch)
                starts.append(start_offset)
        self._set(epochs, starts)

    # -- reads ------------------------------------------------------------

    def entries(self) -> list[EpochEntry]:
        """A copy of the entries, oldest first."""
        epochs, starts = self._entries
        return [EpochEntry(e, s) for e, s in zip(epochs, starts, strict=True)]

    def __len__(self) -> int:
        return len(self._entries[0])

    def latest_entry(self) -> EpochEntry | None:
        epochs, starts = self._entries
        return EpochEntry(epochs[-1], starts[-1]) if epochs else None

    def earliest_entry(self) -> EpochEntry | None:
        epochs, starts = self._entries
        return EpochEntry(epochs[0], starts[0]) if epochs else None

    def previous_epoch(self) -> int:
        """The epoch before the latest one, or UNDEFINED_EPOCH."""
        epochs = self._entries[0]
        return epochs[-2] if len(epochs) >= 2 else UNDEFINED_EPOCH

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch that wrote ``offset`` (the entry with the largest start
        offset <= it), or UNDEFINED_EPOCH if it lies before the first entry."""
        epochs, starts = self._entries
        i = bisect.bisect_right(starts, offset) - 1
        return epochs[i] if i >= 0 else UNDEFINED_EPOCH

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> EpochEndOffset:
        """Kafka's endOffsetFor: the largest epoch <= ``requested_epoch`` and the
        start offset of the first epoch after it, which is where it ended.

        * the latest epoch ends at the log end offset (it is still being
          written to);
        * an epoch older than every entry answers itself with the first
          entry's start: its data, if any, is gone from the log, and the
          follower should continue from where the log now starts;
        * UNDEFINED_EPOCH, an epoch newer than every entry, or an empty cache
          answer (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)."""
        epochs, starts = self._entries
        if requested_epoch == UNDEFINED_EPOCH:
            return _UNKNOWN
        if epochs and epochs[-1] == requested_epoch:
            return EpochEndOffset(requested_epoch, log_end_offset)
        higher = bisect.bisect_right(epochs, requested_epoch)
        if higher == len(epochs):
            return _UNKNOWN
        if higher == 0:
            return EpochEndOffset(requested_epoch, starts[0])
        return EpochEndOffset(epochs[higher - 1], starts[higher])

    # -- changes ------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; True if the cache
        changed (and was written).

        As Kafka's assign: nothing happens when ``epoch`` is already the latest
        and does not start earlier.  Otherwise, entries at the end that would
        break the ordering (an epoch >= ``epoch`` or a start >= ``start_offset``)
        are removed first: a new leader's epoch replaces what a deposed one
        had started at the same offset.  Removing more than that is logged:
        it means data of those epochs was truncated without the cache being
        told.  Raises ValueError for a negative epoch or offset (batches of a
        single-node broker carry epoch -1: the Log never assigns those)."""
        return self.assign_all([EpochEntry(epoch, start_offset)])

    def assign_at_end(self, epoch: int, start_offset: int) -> bool:
        """``assign`` a new leader's epoch at the log end, writing the file only
        before the next append (the Log checks ``file_ahead``).

        Until data of that epoch is appended the entry describes nothing on
        disk, so a crash that loses it loses nothing; a broker that takes over
        thousands of idle partitions, or restarts with them, thus writes no
        file for them on its event loop."""
        return self.assign_all([EpochEntry(epoch, start_offset)], defer=True)

    def assign_all(self, entries: Sequence[EpochEntry], *, defer: bool = False) -> bool:
        """``assign`` each entry in order, writing the file once (or, ``defer``,
        before the next append: see ``assign_at_end``)."""
        current_epochs, current_starts = self._entries
        if not any(_is_update_needed(current_epochs, current_starts, *e) for e in entries):
            # The usual case at start-up: a broker leading again at the epoch it
            # had, for thousands of partitions; nothing to copy, check or write.
            for epoch, start_offset in entries:
                _check_entry(epoch, start_offset)
            return False
        epochs, starts = list(current_epochs), list(current_starts)
        changed = False
        for epoch, start_offset in entries:
            _check_entry(epoch, start_offset)
            if not _is_update_needed(epochs, starts, epoch, start_offset):
                continue
            removed = _remove_conflicting(epochs, starts, epoch, start_offset)
            if len(removed) > 1 or (removed and removed[0].start_offset != start_offset):
                logger.warning(
                    "[%s] new leader epoch entry %s truncated conflicting entries %s",
                    self.name,
                    EpochEntry(epoch, start_offset),
                    removed,
                )
            epochs.append(epoch)
            starts.append(start_offset)
            changed = True
        if changed:
            self._write_and_set(epochs, starts, write=not defer)
        return changed

    def assign_newer(self, headers: Iterable[BatchHeader]) -> bool:
        """Assign the epoch of each batch that is newer than every epoch before
        it (the Log's append path; batches of older epochs, or without an epoch,
        never change the cache there)."""
        new = newer_epochs(headers, self.latest_epoch)
        return self.assign_all(new) if new else False

    def truncate_from_end(self, end_offset: int, *, write: bool = True) -> bool:
        """Drop the entries starting at or after ``end_offset`` (the log was
        truncated to it); True if any went.  ``write=False`` changes memory
        only (the load, which cuts the file's extra entries every time)."""
        epochs, starts = self._entries
        if end_offset < 0 or not starts or starts[-1] < end_offset:
            return False
        keep = bisect.bisect_left(starts, end_offset)
        self._write_and_set(epochs[:keep], starts[:keep], write=write)
        return True

    def truncate_from_start(self, start_offset: int, *, write: bool = True) -> bool:
        """The log start moved to ``start_offset``: entries wholly below it go,
        and the epoch covering it now starts there (an entry at ``start_offset``
        itself is kept as is).  True if the cache changed.  ``write`` as for
        ``truncate_from_end``."""
        epochs, starts = self._entries
        covering = bisect.bisect_right(starts, start_offset) - 1
        if covering < 0 or (covering == 0 and starts[0] == start_offset):
            return False
        self._write_and_set(epochs[covering:], [start_offset, *starts[covering + 1 :]], write=write)
        return True

    def clear(self) -> None:
        """Remove every entry (the log was emptied)."""
        self._write_and_set([], [])

    # -- internals ----------------------------------------------------------

    def write(self) -> None:
        """Write the current entries to the file (crash behaviour: module doc)."""
        if self.path is not None:
            write_leader_epoch_checkpoint(self.path, self.entries(), sync=False)
            self._unsynced = True
            self._on_file = self._entries
            self.file_ahead = False

    def read_from_file(self) -> None:
        """Note that the entries are what the file holds (they were just read)."""
        self._on_file = self._entries
        self.file_ahead = False

    def sync(self) -> None:
        """Make the last write durable (see module doc); nothing if it is."""
        if self._unsynced and self.path is not None:
            sync_file(self.path)
            self._unsynced = False

    def _write_and_set(self, epochs: list[int], starts: list[int], *, write: bool = True) -> None:
        """Write (unless told not to, or the file holds these entries), then set.

        Skipping a write that changes nothing matters at scale: every restart
        cuts an idle leader's entry at its empty log end and the leadership
        puts it back, which would be 10,000 file replacements."""
        if self.path is not None and write and self._on_file != (epochs, starts):
            write_leader_epoch_checkpoint(
                self.path,
                [EpochEntry(e, s) for e, s in zip(epochs, starts, strict=True)],
                sync=False,
            )
            self._unsynced = True
            self._on_file = (epochs, starts)
        self._set(epochs, starts)
        self.file_ahead = self._on_file != self._entries  # None: not known, so write

    def _set(self, epochs: list[int], starts: list[int]) -> None:
        self._entries = (epochs, starts)
        self.latest_epoch = epochs[-1] if epochs else UNDEFINED_EPOCH

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self.name}, {self.entries()})"


def _check_entry(epoch: int, start_offset: int) -> None:
    if epoch < 0 or start_offset < 0:
        raise ValueError(f"invalid leader epoch entry ({epoch}, {start_offset})")


def _is_update_needed(epochs: list[int], starts: list[int], epoch: int, start_offset: int) -> bool:
    return not epochs or epoch != epochs[-1] or start_offset < starts[-1]


def _remove_conflicting(
    epochs: list[int], starts: list[int], epoch: int, start_offset: int
) -> list[EpochEntry]:
    """Pop, newest first, the entries a new (epoch, start_offset) would follow
    out of order; return them."""
    removed: list[EpochEntry] = []
    while epochs and (epochs[-1] >= epoch or starts[-1] >= start_offset):
        removed.append(EpochEntry(epochs.pop(), starts.pop()))
    return removed


def load_leader_epoch_cache(
    directory: Path,
    name: str,
    *,
    log_start_offset: int,
    log_end_offset: int,
    batch_headers: Callable[[], Iterable[BatchHeader]],
) -> LeaderEpochFileCache:
    """The cache of the log in ``directory``, consistent with its offsets.

    Read from the checkpoint file; if it is missing (a log from before the
    cache existed) or unreadable, rebuilt from ``batch_headers()`` (every
    batch's ``partition_leader_epoch``, oldest first) and written.  Then cut to
    [log start, log end]: entries past the end are from data that recovery
    dropped or that never reached the disk; the log start may have moved
    without the file being rewritten.  An empty log gets no file until its
    first epoch (nothing to walk next time either).  Crash behaviour: the
    file is only replaced atomically, and doing this again gives the same
    result."""
    path = directory / LEADER_EPOCH_CHECKPOINT_FILE
    cache: LeaderEpochFileCache | None = None
    try:
        entries = read_leader_epoch_checkpoint(path)
        if entries is not None:
            cache = LeaderEpochFileCache(path, name, entries)
            cache.read_from_file()
    except (CorruptCheckpointError, OSError, ValueError) as e:
        logger.warning("[%s] rebuilding the leader epoch cache from the log: %s", name, e)
    if cache is None:
        cache = LeaderEpochFileCache(path, name, _rebuild(name, batch_headers))
        if log_end_offset > log_start_offset:
            cache.write()  # so the next start need not walk the log again
        elif not path.exists():
            cache.read_from_file()  # no file and no entries: they agree
    cache.truncate_from_end(log_end_offset, write=False)
    cache.truncate_from_start(log_start_offset, write=False)
    return cache


def newer_epochs(headers: Iterable[BatchHeader], latest_epoch: int) -> list[EpochEntry]:
    """(epoch, base offset) of each batch whose epoch is newer than
    ``latest_epoch`` and every batch before it."""
    new: list[EpochEntry] = []
    for header in headers:
        if header.partition_leader_epoch > latest_epoch:
            latest_epoch = header.partition_leader_epoch
            new.append(EpochEntry(latest_epoch, header.base_offset))
    return new


def _rebuild(name: str, batch_headers: Callable[[], Iterable[BatchHeader]]) -> list[EpochEntry]:
    """Entries from the batch headers; a log whose old segments cannot be
    walked still opens, with the epochs found before the bad bytes."""
    entries: list[EpochEntry] = []
    try:
        for header in batch_headers():
            if header.partition_leader_epoch > (entries[-1].epoch if entries else UNDEFINED_EPOCH):
                entries.append(EpochEntry(header.partition_leader_epoch, header.base_offset))
    except KafkaError as e:
        logger.warning("[%s] leader epoch cache rebuilt only up to a bad batch: %s", name, e)
    return entries
