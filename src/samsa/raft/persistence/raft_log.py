"""The replicated log as the machine sees it: the ``RaftLog`` protocol.

Two implementations: ``MemoryRaftLog`` (tests, simulator) and a disk log on
``samsa.storage`` (segments, ``leader-epoch-checkpoint``, ``.checkpoint``
snapshots).  The machine owns the decisions (what to truncate, when a snapshot
may be taken); the log only stores, and must keep these promises:

* Offsets are dense: entry ``n`` sits at offset ``n``; ``start_offset <=
  end_offset``.  Entries below ``start_offset`` exist only in the snapshot whose
  id is ``earliest_snapshot_id`` (its offset equals ``start_offset``).
* Epochs never decrease along the log.  ``end_offset_for_epoch`` answers from
  the epoch boundaries (Kafka's leader-epoch cache), treating the snapshot the
  log starts from as the first boundary.
* ``flushed_end_offset`` only says what is durable: after a crash the log holds
  at least the entries below it.  ``truncate_to`` takes effect at once (and
  lowers ``flushed_end_offset`` if needed).
* When opened, a log is never behind its latest snapshot: a snapshot is durable
  at once while the entries it was taken from may not be, so recovery empties a
  log that ends before its latest snapshot (or disagrees with its epoch) to
  start at that snapshot.
* Snapshot bytes (``read_snapshot`` / ``install_snapshot``) are the log's own
  serialised form, moved between nodes chunk by chunk without being parsed; a
  snapshot stores the voter set in force at its end offset with the owner's data.

Disk notes: ``append_as_leader``/``append_as_follower`` map to appending
RecordBatches (control batches for ``LeaderChange`` and ``Voters``);
``end_offset_for_epoch`` is the leader-epoch-checkpoint lookup; ``flush`` is an
fsync of the active segment; snapshots are Kafka's
``<offset>-<epoch>.checkpoint`` files whose first batch carries the voter set.
``install_snapshot`` must write the file atomically and then empty the log so it
starts at the snapshot; ``delete_before_snapshot`` deletes whole segments, so a
disk log may keep some entries below the snapshot (``start_offset`` then stays
lower, which is allowed).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from samsa.raft.records import Entry, OffsetAndEpoch, Payload, SnapshotId
from samsa.raft.voters import VoterSet

__all__ = [
    "RaftLog",
    "Snapshot",
    "SnapshotChunk",
    "ValidOffsetAndEpoch",
    "ValidationKind",
    "truncation_offset",
    "validate_offset_and_epoch",
]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A loaded snapshot: the voter set at its end offset and the owner's opaque state."""

    snapshot_id: SnapshotId
    voters: VoterSet | None
    data: bytes


@dataclass(frozen=True, slots=True)
class SnapshotChunk:
    """``data`` starts at the requested position; ``size`` is the whole snapshot's size."""

    size: int
    data: bytes


class RaftLog(Protocol):
    """The storage behind one Raft partition (see the module doc for the promises)."""

    @property
    def start_offset(self) -> int: ...

    @property
    def end_offset(self) -> int: ...

    @property
    def flushed_end_offset(self) -> int: ...

    @property
    def last_fetched_epoch(self) -> int:
        """Epoch of the last entry; of the start snapshot if the log is empty; else 0."""
        ...

    @property
    def latest_snapshot_id(self) -> SnapshotId | None: ...

    @property
    def earliest_snapshot_id(self) -> SnapshotId | None:
        """The snapshot the log starts from (offset == ``start_offset``), if start > 0."""
        ...

    def append_as_leader(self, payloads: Sequence[Payload], epoch: int) -> range:
        """Append at the end with ``epoch``; returns the offsets given to the payloads."""
        ...

    def append_as_follower(self, entries: Sequence[Entry]) -> None:
        """Append entries fetched from the leader; the first one's offset is ``end_offset``."""
        ...

    def truncate_to(self, offset: int) -> None:
        """Drop every entry at or above ``offset`` (never below ``start_offset``)."""
        ...

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """Where the largest epoch <= ``epoch`` ends here, as (offset, that epoch).

        For ``epoch`` >= ``last_fetched_epoch``: (``end_offset``, ``last_fetched_epoch``).
        When no epoch <= ``epoch`` is known: (``start_offset``, ``epoch``).
        """
        ...

    def read(self, from_offset: int, max_entries: int, max_bytes: int | None = None) -> list[Entry]:
        """Entries from ``from_offset``; at least one if any exists, then within the limits."""
        ...

    def control_entries(self, from_offset: int) -> Iterator[Entry]:
        """Every control entry (LeaderChange, Voters) from ``from_offset`` to the end,
        without decoding the data entries between them."""
        ...

    def flush(self, up_to_offset: int) -> None:
        """Make every entry below ``up_to_offset`` durable."""
        ...

    def create_snapshot(
        self, snapshot_id: SnapshotId, voters: VoterSet | None, data: bytes
    ) -> None:
        """Store a snapshot of everything below ``snapshot_id.offset`` (durably)."""
        ...

    def read_snapshot(
        self, snapshot_id: SnapshotId, position: int, max_bytes: int
    ) -> SnapshotChunk | None:
        """Raw bytes of a stored snapshot from ``position``; ``None`` if it does not exist."""
        ...

    def install_snapshot(self, snapshot_id: SnapshotId, raw: bytes) -> None:
        """Store a snapshot fetched from the leader and make the log start (and end) at it."""
        ...

    def load_snapshot(self, snapshot_id: SnapshotId) -> Snapshot | None: ...

    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> None:
        """Let the log start at ``snapshot_id`` (entries and older snapshots below it go)."""
        ...


class ValidationKind(Enum):
    VALID = "valid"
    DIVERGING = "diverging"
    SNAPSHOT = "snapshot"


@dataclass(frozen=True, slots=True)
class ValidOffsetAndEpoch:
    """The leader's verdict on a fetch position (Kafka's ValidOffsetAndEpoch)."""

    kind: ValidationKind
    offset_and_epoch: OffsetAndEpoch | None = None


def validate_offset_and_epoch(
    log: RaftLog, fetch_offset: int, last_fetched_epoch: int
) -> ValidOffsetAndEpoch:
    """Check a follower's (fetch offset, last fetched epoch) against the leader's log.

    * Below the log start (or an empty follower while a snapshot exists): fetch the
      latest snapshot.
    * A last fetched epoch older than the snapshot the log starts from means the
      follower holds an entry that conflicts with the snapshot's committed prefix;
      the snapshot replaces its log too.
    * Otherwise the follower's last entry, (fetch_offset - 1, last_fetched_epoch),
      is on the leader iff the leader has that epoch and it ends at or after
      ``fetch_offset``; if not, answer the diverging epoch so the follower truncates.
    """
    latest = log.latest_snapshot_id
    start = log.start_offset
    if latest is not None and (fetch_offset < start or (fetch_offset == 0 and latest.offset > 0)):
        return ValidOffsetAndEpoch(ValidationKind.SNAPSHOT, latest)
    base = log.earliest_snapshot_id
    if base is not None and last_fetched_epoch < base.epoch:
        return ValidOffsetAndEpoch(ValidationKind.SNAPSHOT, latest if latest is not None else base)
    end = log.end_offset_for_epoch(last_fetched_epoch)
    if end.epoch != last_fetched_epoch or end.offset < fetch_offset:
        return ValidOffsetAndEpoch(ValidationKind.DIVERGING, end)
    return ValidOffsetAndEpoch(ValidationKind.VALID)


def truncation_offset(log: RaftLog, diverging: OffsetAndEpoch) -> int:
    """Where a follower truncates after the leader answered ``diverging``.

    The leader's entries of epochs <= ``diverging.epoch`` end at ``diverging.offset``;
    ours end where our largest epoch <= it ends.  Below the smaller of the two our
    entries match the leader's, or the next fetch narrows it further (each round
    the epoch in question decreases, as in Kafka's reconciliation).
    """
    local = log.end_offset_for_epoch(diverging.epoch)
    return min(diverging.offset, local.offset, log.end_offset)
