from samsa.controller.image.registrations import NO_LEADER
from samsa.controller.partitions.leader_selectors import (
    LeaderElection,
    controlled_shutdown_leader,
    noop_leader,
    offline_leader,
    preferred_leader,
    reassigned_leader,
)


def live(*ids: int):  # type: ignore[no-untyped-def]
    return lambda b: b in ids


def test_offline_picks_first_live_isr_member_in_assignment_order() -> None:
    election = offline_leader([3, 1, 2], [1, 2, 3], live(1, 2))
    assert election == LeaderElection(1, (1, 2))
    assert not election.unclean


def test_offline_without_live_isr_member_has_no_leader_when_clean() -> None:
    election = offline_leader([1, 2, 3], [1], live(2, 3))
    assert election.leader == NO_LEADER and not election.has_leader
    assert election.isr == (1,)


def test_offline_unclean_takes_a_live_out_of_sync_replica_and_flags_it() -> None:
    election = offline_leader([1, 2, 3], [1], live(3), unclean_allowed=True)
    assert election == LeaderElection(3, (3,), unclean=True)


def test_offline_unclean_still_prefers_a_clean_choice() -> None:
    assert offline_leader([1, 2, 3], [2], live(1, 2), unclean_allowed=True) == LeaderElection(
        2, (2,)
    )


def test_offline_unclean_with_nothing_live() -> None:
    assert offline_leader([1, 2], [1], live(), unclean_allowed=True).leader == NO_LEADER


def test_reassigned_uses_the_new_assignment_order() -> None:
    assert reassigned_leader([4, 5, 1], [1, 4, 5], live(1, 4, 5)).leader == 4
    assert reassigned_leader([4, 5], [1, 5], live(1, 5)).leader == 5
    assert reassigned_leader([4, 5], [1], live(1, 4, 5)).leader == NO_LEADER


def test_preferred_only_the_first_replica() -> None:
    assert preferred_leader([2, 1], [1, 2], live(1, 2)).leader == 2
    assert preferred_leader([2, 1], [1], live(1, 2)).leader == NO_LEADER
    assert preferred_leader([2, 1], [1, 2], live(1)).leader == NO_LEADER
    assert preferred_leader([], [], live(1)).leader == NO_LEADER


def test_controlled_shutdown_moves_off_the_broker_and_shrinks_the_isr() -> None:
    election = controlled_shutdown_leader([1, 2, 3], [1, 2, 3], live(1, 2, 3), {1})
    assert election == LeaderElection(2, (2, 3))
    none_left = controlled_shutdown_leader([1, 2], [1], live(1, 2), {1})
    assert none_left == LeaderElection(NO_LEADER, ())


def test_noop_keeps_the_leader() -> None:
    assert noop_leader(3, [3, 1]) == LeaderElection(3, (3, 1))
