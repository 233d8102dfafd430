"""The state of one move and the step it takes next (sans-I/O).

Kafka 4.4's ReplicaAlterLogDirsThread keeps, per moving partition, how far
the controller has come with the replica's new directory
(``ReassignmentState``): NONE until the future log first catches up with the
current one; QUEUED once AssignReplicasToDirs is sent; ACCEPTED when the
controller has recorded it; EFFECTIVE after the swap.  The future log
replaces the current one only once ACCEPTED (a broker that swapped first and
then lost the new dir would leave the controller thinking the replica on a
healthy dir).  While QUEUED or ACCEPTED the metadata may name a dir the
replica is not in yet; a move cancelled then must have its assignment put
back (``maybe_inconsistent_metadata``).

``next_step`` is the whole decision, taken on the event loop after each copy
pass from the facts of both logs.  Without a controller to tell (a node that
assigns no dirs, or a unit test) a caught-up future log is swapped at once,
as Kafka's ``DirectoryEventHandler.NOOP`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from samsa.storage.leader_epoch_cache import EpochEntry

__all__ = ["LogFacts", "Move", "ReassignmentState", "Step", "caught_up", "next_step"]


class ReassignmentState(Enum):
    NONE = "none"
    QUEUED = "queued"
    ACCEPTED = "accepted"
    EFFECTIVE = "effective"

    @property
    def maybe_inconsistent_metadata(self) -> bool:
        """The metadata may name the target dir while the replica is not there."""
        return self in (ReassignmentState.QUEUED, ReassignmentState.ACCEPTED)


class Step(Enum):
    COPY = "copy"
    """The future log is behind: another copy pass."""
    ASSIGN = "assign"
    """Caught up: tell the controller the replica's new dir."""
    WAIT = "wait"
    """Caught up, the controller not answered yet: wait for it (copying on)."""
    SWAP = "swap"
    """Caught up and recorded: the future log replaces the current one."""


@dataclass(frozen=True, slots=True)
class LogFacts:
    """What the decision needs of one log."""

    log_start_offset: int
    log_end_offset: int
    epochs: tuple[EpochEntry, ...]


def caught_up(current: LogFacts, future: LogFacts) -> bool:
    """The future log holds what the current one does: same offsets, same
    leader epochs (so a follower asking it for an epoch's end is answered
    alike)."""
    return current == future


@dataclass(slots=True)
class Move:
    """One partition moving to ``target_dir`` from ``source_dir``."""

    topic: str
    partition: int
    target_dir: str
    source_dir: str
    state: ReassignmentState = ReassignmentState.NONE
    copied_bytes: int = 0
    passes: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


def next_step(move: Move, current: LogFacts, future: LogFacts, *, assigns: bool) -> Step:
    """What ``move`` does next, given both logs now; ``assigns``: a controller
    is to be told the new dir before the swap."""
    if move.state is ReassignmentState.EFFECTIVE:
        raise ValueError(f"[{move.name}] already swapped")
    done = caught_up(current, future)
    if not assigns:
        return Step.SWAP if done else Step.COPY
    if move.state is ReassignmentState.ACCEPTED:
        return Step.SWAP if done else Step.COPY
    if not done:
        return Step.COPY
    if move.state is ReassignmentState.QUEUED:
        return Step.WAIT
    return Step.ASSIGN
