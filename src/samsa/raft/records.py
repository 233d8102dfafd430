"""The values Raft replicates: entries, their control payloads, offsets and epochs.

An entry is one record of the metadata log.  Raft never looks inside a data
payload (opaque ``bytes``: a metadata record framed by the controller); it only
reads its own control payloads, which Kafka writes in control batches:

* ``LeaderChange``: appended by every new leader at the start of its epoch, so
  that the high watermark can move past older entries once an entry of the new
  epoch is committed (Kafka's LeaderChangeMessage).
* ``Voters``: a new voter set (KIP-853's VotersRecord).  It takes effect on a
  node as soon as it is in that node's log, committed or not.

The wire layer turns runs of entries into RecordBatches; nothing here is bytes
beyond the opaque data payloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from samsa.raft.endpoint import Endpoint

if TYPE_CHECKING:
    from samsa.raft.voters import VoterSet

__all__ = [
    "NO_EPOCH",
    "NO_OFFSET",
    "Endpoint",
    "Entry",
    "LeaderChange",
    "OffsetAndEpoch",
    "Payload",
    "SnapshotId",
    "Voters",
    "is_control",
]

NO_EPOCH = -1
NO_OFFSET = -1


@dataclass(frozen=True, slots=True, order=True)
class OffsetAndEpoch:
    """An offset with the epoch of the entry just before it (Kafka's OffsetAndEpoch).

    Used for a log's end (end offset, last fetched epoch), for a diverging epoch
    (the epoch and the offset where it ends on the leader) and for snapshot ids
    (end offset, epoch of the last entry the snapshot contains).  Ordering compares
    the epoch first, as Kafka does when it decides whether a log is up to date:
    see ``is_at_least``.
    """

    offset: int
    epoch: int

    def is_at_least(self, other: OffsetAndEpoch) -> bool:
        """True when a log ending here is at least as up to date as one ending at ``other``."""
        return (self.epoch, self.offset) >= (other.epoch, other.offset)


SnapshotId = OffsetAndEpoch
"""A snapshot holds every entry below ``offset``; ``epoch`` is the last one's epoch."""


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """Control payload a new leader appends at the start of its epoch."""

    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Voters:
    """Control payload carrying a complete new voter set (KIP-853 VotersRecord)."""

    voter_set: VoterSet


Payload = Union[bytes, LeaderChange, Voters]  # noqa: UP007 (a runtime alias with a forward ref)


def is_control(payload: Payload) -> bool:
    """Control payloads belong to Raft; the state machine above skips them."""
    return not isinstance(payload, bytes)


@dataclass(frozen=True, slots=True)
class Entry:
    """One replicated entry: its offset in the log, the epoch of the leader that wrote it."""

    offset: int
    epoch: int
    payload: Payload

    def size_bytes(self) -> int:
        """Approximate encoded size, used only to bound fetch responses."""
        if isinstance(self.payload, bytes):
            return len(self.payload) + 16
        return 64
