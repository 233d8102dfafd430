"""Kafka's partition and replica state machines: the states and their legal moves.

These are the transition tables of Kafka's ZooKeeper-era controller
(``PartitionStateMachine`` and ``ReplicaStateMachine``): each target state lists
the states it may be entered from.  The KRaft controller keeps no per-state
bookkeeping; here the tables are the rule book the controller checks its
partition changes against, so a change that would, say, delete an online
partition without taking it offline first is refused instead of applied.

Rules:
* ``check_*_transition`` raises ``IllegalStateTransition`` for a move the table
  does not allow and returns nothing otherwise; callers log and skip, never apply.
* A partition's state in the image is derived, not stored: no registration is
  NonExistent, a leader makes it Online, no leader Offline (``partition_state``).
"""

from __future__ import annotations

from enum import Enum

from samsa.controller.image.registrations import NO_LEADER, PartitionRegistration


class PartitionState(Enum):
    NON_EXISTENT = "NonExistentPartition"
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"


class ReplicaState(Enum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"


_P = PartitionState
PARTITION_VALID_PREVIOUS: dict[PartitionState, frozenset[PartitionState]] = {
    _P.NEW: frozenset({_P.NON_EXISTENT}),
    _P.ONLINE: frozenset({_P.NEW, _P.ONLINE, _P.OFFLINE}),
    _P.OFFLINE: frozenset({_P.NEW, _P.ONLINE, _P.OFFLINE}),
    _P.NON_EXISTENT: frozenset({_P.OFFLINE}),
}
"""Target partition state -> the states it may be entered from."""

_R = ReplicaState
REPLICA_VALID_PREVIOUS: dict[ReplicaState, frozenset[ReplicaState]] = {
    _R.NEW: frozenset({_R.NON_EXISTENT}),
    _R.ONLINE: frozenset({_R.NEW, _R.ONLINE, _R.OFFLINE, _R.DELETION_INELIGIBLE}),
    _R.OFFLINE: frozenset({_R.NEW, _R.ONLINE, _R.OFFLINE, _R.DELETION_INELIGIBLE}),
    _R.DELETION_STARTED: frozenset({_R.OFFLINE}),
    _R.DELETION_SUCCESSFUL: frozenset({_R.DELETION_STARTED}),
    _R.DELETION_INELIGIBLE: frozenset({_R.OFFLINE, _R.DELETION_STARTED}),
    _R.NON_EXISTENT: frozenset({_R.DELETION_SUCCESSFUL}),
}
"""Target replica state -> the states it may be entered from."""


class IllegalStateTransition(ValueError):
    """A state change the transition table does not allow; it must not be applied."""

    def __init__(self, what: str, current: Enum, target: Enum) -> None:
        super().__init__(
            f"{what}: illegal transition from {current.value} to {target.value}; "
            f"{target.value} may only be entered from "
            + ", ".join(sorted(s.value for s in _previous_of(target)))
        )
        self.current = current
        self.target = target


def _previous_of(target: Enum) -> frozenset[Enum]:
    if isinstance(target, PartitionState):
        return frozenset(PARTITION_VALID_PREVIOUS[target])
    assert isinstance(target, ReplicaState)
    return frozenset(REPLICA_VALID_PREVIOUS[target])


def is_valid_partition_transition(current: PartitionState, target: PartitionState) -> bool:
    return current in PARTITION_VALID_PREVIOUS[target]


def is_valid_replica_transition(current: ReplicaState, target: ReplicaState) -> bool:
    return current in REPLICA_VALID_PREVIOUS[target]


def check_partition_transition(what: str, current: PartitionState, target: PartitionState) -> None:
    """Raise IllegalStateTransition unless ``current -> target`` is allowed.

    ``what`` names the partition for the message ("orders-3").
    """
    if current not in PARTITION_VALID_PREVIOUS[target]:
        raise IllegalStateTransition(what, current, target)


def check_replica_transition(what: str, current: ReplicaState, target: ReplicaState) -> None:
    """Raise IllegalStateTransition unless ``current -> target`` is allowed.

    ``what`` names the replica for the message ("replica 2 of orders-3").
    """
    if current not in REPLICA_VALID_PREVIOUS[target]:
        raise IllegalStateTransition(what, current, target)


def partition_state(registration: PartitionRegistration | None) -> PartitionState:
    """The state a partition is in, derived from its registration."""
    if registration is None:
        return PartitionState.NON_EXISTENT
    return PartitionState.OFFLINE if registration.leader == NO_LEADER else PartitionState.ONLINE


def replica_state(
    registration: PartitionRegistration | None, replica: int, broker_is_live: bool
) -> ReplicaState:
    """The state of ``replica`` of a partition, derived from its registration and
    whether its broker is live (registered and unfenced)."""
    if registration is None or replica not in registration.replicas:
        return ReplicaState.NON_EXISTENT
    return ReplicaState.ONLINE if broker_is_live else ReplicaState.OFFLINE
