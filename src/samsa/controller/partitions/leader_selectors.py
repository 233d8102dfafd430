"""Leader selectors: who leads a partition after a given kind of event.

Kafka's ``Election`` rules (core ``kafka.controller.Election``), as small pure
functions over an assignment, an ISR and a liveness test.  Each returns a
``LeaderElection``: the chosen leader (``NO_LEADER`` when there is none), the
ISR that goes with it, and whether the choice was unclean (a leader from
outside the ISR, which may lose acknowledged writes).

* offline: the first live replica of the assignment that is in the ISR; only
  when unclean election is allowed, the first live replica at all (unclean).
* reassigned: the first live in-sync replica of the new assignment.
* preferred: the first replica of the assignment, if live and in sync.
* controlled shutdown: the first live in-sync replica not shutting down, with
  the shutting-down brokers taken out of the ISR.
* no-op: the current leader stays, whatever else changes.

"Live" is a predicate so callers decide what it means (unfenced and not in
controlled shutdown, for the controller).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from samsa.controller.image.registrations import NO_LEADER

IsLive = Callable[[int], bool]


@dataclass(frozen=True, slots=True)
class LeaderElection:
    leader: int
    isr: tuple[int, ...]
    unclean: bool = False

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER


def offline_leader(
    assignment: Sequence[int],
    isr: Sequence[int],
    is_live: IsLive,
    unclean_allowed: bool = False,
) -> LeaderElection:
    """After the leader went away: a live in-sync replica, else (if allowed) any live one.

    A clean choice keeps the live part of the ISR; an unclean one makes the ISR
    the new leader alone, as Kafka does.
    """
    for replica in assignment:
        if replica in isr and is_live(replica):
            return LeaderElection(replica, tuple(r for r in isr if is_live(r)))
    if unclean_allowed:
        for replica in assignment:
            if is_live(replica):
                return LeaderElection(replica, (replica,), unclean=True)
    return LeaderElection(NO_LEADER, tuple(isr))


def reassigned_leader(
    new_assignment: Sequence[int], isr: Sequence[int], is_live: IsLive
) -> LeaderElection:
    """The first live in-sync replica of the target assignment; the ISR is kept."""
    for replica in new_assignment:
        if replica in isr and is_live(replica):
            return LeaderElection(replica, tuple(isr))
    return LeaderElection(NO_LEADER, tuple(isr))


def preferred_leader(
    assignment: Sequence[int], isr: Sequence[int], is_live: IsLive
) -> LeaderElection:
    """The preferred replica (first of the assignment) if it is live and in sync."""
    if assignment:
        preferred = assignment[0]
        if preferred in isr and is_live(preferred):
            return LeaderElection(preferred, tuple(isr))
    return LeaderElection(NO_LEADER, tuple(isr))


def controlled_shutdown_leader(
    assignment: Sequence[int],
    isr: Sequence[int],
    is_live: IsLive,
    shutting_down: Collection[int],
) -> LeaderElection:
    """A live in-sync replica not on a broker shutting down; the ISR loses those brokers."""
    new_isr = tuple(r for r in isr if r not in shutting_down)
    for replica in assignment:
        if replica in new_isr and is_live(replica):
            return LeaderElection(replica, new_isr)
    return LeaderElection(NO_LEADER, new_isr)


def noop_leader(current_leader: int, isr: Sequence[int]) -> LeaderElection:
    """Keep the current leader (used when only the ISR or the assignment changes)."""
    return LeaderElection(current_leader, tuple(isr))
