import itertools

import pytest

from samsa.controller.image.registrations import NO_LEADER, PartitionRegistration
from samsa.controller.partitions.partition_states import (
    PARTITION_VALID_PREVIOUS,
    REPLICA_VALID_PREVIOUS,
    IllegalStateTransition,
    PartitionState,
    ReplicaState,
    check_partition_transition,
    check_replica_transition,
    is_valid_partition_transition,
    is_valid_replica_transition,
    partition_state,
    replica_state,
)

P = PartitionState
R = ReplicaState


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (P.NON_EXISTENT, P.NEW),
        (P.NEW, P.ONLINE),
        (P.ONLINE, P.OFFLINE),
        (P.OFFLINE, P.ONLINE),
        (P.ONLINE, P.ONLINE),
        (P.OFFLINE, P.NON_EXISTENT),
    ],
)
def test_kafkas_partition_transitions_are_allowed(
    current: PartitionState, target: PartitionState
) -> None:
    check_partition_transition("t-0", current, target)
    assert is_valid_partition_transition(current, target)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (P.ONLINE, P.NON_EXISTENT),  # must go offline first
        (P.NEW, P.NON_EXISTENT),
        (P.ONLINE, P.NEW),
        (P.NON_EXISTENT, P.ONLINE),
        (P.NON_EXISTENT, P.OFFLINE),
    ],
)
def test_illegal_partition_transitions_raise(
    current: PartitionState, target: PartitionState
) -> None:
    assert not is_valid_partition_transition(current, target)
    with pytest.raises(IllegalStateTransition, match="t-0: illegal transition"):
        check_partition_transition("t-0", current, target)


def test_replica_deletion_path_and_illegal_shortcut() -> None:
    path = [
        R.NON_EXISTENT,
        R.NEW,
        R.ONLINE,
        R.OFFLINE,
        R.DELETION_STARTED,
        R.DELETION_SUCCESSFUL,
        R.NON_EXISTENT,
    ]
    for current, target in itertools.pairwise(path):
        check_replica_transition("replica 1 of t-0", current, target)
    with pytest.raises(IllegalStateTransition) as info:
        check_replica_transition("replica 1 of t-0", R.ONLINE, R.DELETION_STARTED)
    assert info.value.current is R.ONLINE and "OfflineReplica" in str(info.value)
    assert is_valid_replica_transition(R.DELETION_STARTED, R.DELETION_INELIGIBLE)
    assert is_valid_replica_transition(R.DELETION_INELIGIBLE, R.ONLINE)
    assert not is_valid_replica_transition(R.DELETION_SUCCESSFUL, R.ONLINE)


def test_tables_cover_every_state() -> None:
    assert set(PARTITION_VALID_PREVIOUS) == set(P)
    assert set(REPLICA_VALID_PREVIOUS) == set(R)


def test_states_are_derived_from_registrations() -> None:
    online = PartitionRegistration((1, 2), (1, 2), 1)
    offline = PartitionRegistration((1, 2), (1,), NO_LEADER)
    assert partition_state(None) is P.NON_EXISTENT
    assert partition_state(online) is P.ONLINE
    assert partition_state(offline) is P.OFFLINE
    assert replica_state(online, 2, broker_is_live=True) is R.ONLINE
    assert replica_state(online, 2, broker_is_live=False) is R.OFFLINE
    assert replica_state(online, 3, broker_is_live=True) is R.NON_EXISTENT
