from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from samsa.controller.image.registrations import (
    NO_LEADER,
    LeaderRecoveryState,
    PartitionRegistration,
)
from samsa.controller.partitions.leader_selectors import (
    controlled_shutdown_leader,
    offline_leader,
    preferred_leader,
    reassigned_leader,
)
from samsa.controller.partitions.partition_change import Election, build_partition_change, is_noop

TID = b"t" * 16


def reg(
    replicas: tuple[int, ...] = (1, 2, 3),
    isr: tuple[int, ...] | None = None,
    leader: int = 1,
    **kw: Any,
) -> PartitionRegistration:
    return PartitionRegistration(replicas, replicas if isr is None else isr, leader, 3, 7, **kw)


def live(*ids: int):  # type: ignore[no-untyped-def]
    return lambda b: b in ids


def build(r: PartitionRegistration, acceptable=live(1, 2, 3, 4, 5), **kw: Any):  # type: ignore[no-untyped-def]
    record = build_partition_change(r, TID, 0, acceptable, **kw)
    return None if record is None else record.body


def test_nothing_to_change_gives_none() -> None:
    assert build(reg()) is None
    assert build(reg(), target_isr=[1, 2, 3]) is None


def test_isr_shrink_keeps_the_leader_and_its_epoch() -> None:
    body = build(reg(), target_isr=[1, 2])
    assert body is not None
    assert body["isr"] == [1, 2] and body["leader"] == -2
    assert reg().merge(body).leader_epoch == 3


def test_leader_leaving_the_isr_is_replaced_in_replica_order() -> None:
    body = build(reg(replicas=(1, 3, 2)), acceptable=live(2, 3), target_isr=[2, 3])
    assert body is not None and body["leader"] == 3 and body["isr"] == [2, 3]


def test_fencing_the_last_isr_member_keeps_it_and_leaves_no_leader() -> None:
    body = build(reg(isr=(1,)), acceptable=live(2, 3), target_isr=[])
    assert body is not None
    assert body["leader"] == NO_LEADER and body["isr"] is None


def test_unclean_election_takes_an_out_of_sync_replica_and_marks_recovering(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = build(reg(isr=(1,), leader=NO_LEADER), acceptable=live(2, 3), election=Election.UNCLEAN)
    assert body is not None
    assert body["leader"] == 2 and body["isr"] == [2]
    assert body["leader_recovery_state"] == LeaderRecoveryState.RECOVERING
    assert "unclean leader election" in caplog.text


def test_online_election_never_goes_unclean() -> None:
    assert build(reg(isr=(1,), leader=NO_LEADER), acceptable=live(2, 3)) is None


def test_leaderless_partition_gets_a_leader_when_its_isr_member_returns() -> None:
    body = build(reg(isr=(2,), leader=NO_LEADER), acceptable=live(2))
    assert body is not None and body["leader"] == 2 and body["isr"] is None


def test_preferred_election() -> None:
    body = build(reg(leader=2), election=Election.PREFERRED)
    assert body is not None and body["leader"] == 1
    # Preferred not in sync: the current valid leader stays (no record).
    assert build(reg(isr=(2, 3), leader=2), election=Election.PREFERRED) is None
    # Preferred not live and current leader gone: next valid replica.
    body = build(reg(isr=(1, 3), leader=NO_LEADER), acceptable=live(3), election=Election.PREFERRED)
    assert body is not None and body["leader"] == 3


def test_reassignment_adding_replicas_waits_for_the_isr() -> None:
    body = build(
        reg(), target_replicas=[4, 5, 1, 2, 3], target_adding=[4, 5], target_removing=[1, 2, 3]
    )
    assert body is not None
    assert body["replicas"] == [4, 5, 1, 2, 3]
    assert body["adding_replicas"] == [4, 5] and body["removing_replicas"] == [1, 2, 3]
    assert body["leader"] == -2 and body["isr"] is None


def test_reassignment_completes_when_targets_join_the_isr_and_moves_the_leader() -> None:
    moving = reg(
        replicas=(4, 5, 1, 2, 3), isr=(1, 2, 3), adding_replicas=(4, 5), removing_replicas=(1, 2, 3)
    )
    body = build(moving, target_isr=[1, 2, 3, 4, 5])
    assert body is not None
    assert body["replicas"] == [4, 5] and body["isr"] == [4, 5] and body["leader"] == 4
    assert body["adding_replicas"] == [] and body["removing_replicas"] == []
    done = moving.merge(body)
    assert done.leader_epoch == 4 and not done.is_reassigning


def test_removing_a_follower_bumps_the_leader_epoch_without_moving_the_leader() -> None:
    body = build(reg(), target_replicas=[1, 2], target_removing=[3])
    assert body is not None
    assert body["leader"] == 1 and body["replicas"] == [1, 2] and body["isr"] == [1, 2]
    assert reg().merge(body).leader_epoch == 4


def test_recovery_state_target() -> None:
    recovering = reg(isr=(1,), leader_recovery_state=1)
    body = build(recovering, target_leader_recovery_state=0)
    assert body is not None and body["leader_recovery_state"] == 0
    assert build(recovering, target_leader_recovery_state=1) is None


def test_is_noop() -> None:
    record = build_partition_change(reg(), TID, 0, live(1, 2, 3), target_isr=[1])
    assert record is not None and not is_noop(record)


# The builder's election paths are the leader selectors: check they agree.
replica_sets = st.lists(st.integers(1, 6), min_size=1, max_size=5, unique=True)


@settings(max_examples=200, deadline=None)
@given(replicas=replica_sets, data=st.data())
def test_removing_the_leader_picks_the_controlled_shutdown_selectors_choice(
    replicas: list[int], data: st.DataObject
) -> None:
    isr = data.draw(st.lists(st.sampled_from(replicas), min_size=1, unique=True))
    live = set(data.draw(st.lists(st.integers(1, 6), unique=True)))
    leaving = isr[0]
    registration = PartitionRegistration(tuple(replicas), tuple(isr), leaving)
    record = build_partition_change(
        registration,
        TID,
        0,
        lambda b: b != leaving and b in live,
        target_isr=[r for r in isr if r != leaving],
    )
    expected = controlled_shutdown_leader(replicas, isr, live.__contains__, {leaving})
    new = registration if record is None else registration.merge(record.body)
    assert new.leader == expected.leader
    if expected.isr:
        assert new.isr == expected.isr
    else:
        assert new.isr == (leaving,)  # never an empty ISR


@settings(max_examples=200, deadline=None)
@given(replicas=replica_sets, data=st.data())
def test_completing_a_reassignment_picks_the_reassigned_selectors_choice(
    replicas: list[int], data: st.DataObject
) -> None:
    target = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=4, unique=True))
    live = set(data.draw(st.lists(st.integers(1, 6), unique=True)))
    removing = sorted(set(replicas) - set(target))
    adding = sorted(set(target) - set(replicas))
    assume(removing or adding)
    moving = PartitionRegistration(
        (*target, *removing),
        tuple(replicas),
        replicas[0],
        removing_replicas=tuple(removing),
        adding_replicas=tuple(adding),
    )
    full_isr = [*replicas, *adding]
    record = build_partition_change(moving, TID, 0, live.__contains__, target_isr=full_isr)
    assert record is not None
    done = moving.merge(record.body)
    assert done.replicas == tuple(target) and not done.is_reassigning
    if replicas[0] in target and replicas[0] in live:
        assert done.leader == replicas[0]  # a leader that stays keeps leading
    else:
        expected = reassigned_leader(
            target, [r for r in full_isr if r in target], live.__contains__
        )
        assert done.leader == expected.leader


@settings(max_examples=200, deadline=None)
@given(replicas=replica_sets, data=st.data())
def test_offline_and_preferred_paths_agree_with_the_selectors(
    replicas: list[int], data: st.DataObject
) -> None:
    isr = data.draw(st.lists(st.sampled_from(replicas), min_size=1, unique=True))
    live = set(data.draw(st.lists(st.integers(1, 6), unique=True)))
    unclean = data.draw(st.booleans())
    leaderless = PartitionRegistration(tuple(replicas), tuple(isr), NO_LEADER)
    record = build_partition_change(
        leaderless,
        TID,
        0,
        live.__contains__,
        election=Election.UNCLEAN if unclean else Election.ONLINE,
    )
    expected = offline_leader(replicas, isr, live.__contains__, unclean_allowed=unclean)
    new = leaderless if record is None else leaderless.merge(record.body)
    assert new.leader == expected.leader
    if expected.unclean:
        assert new.isr == (expected.leader,) and new.leader_recovery_state == 1
    preferred = preferred_leader(replicas, isr, live.__contains__)
    elected = build_partition_change(
        PartitionRegistration(tuple(replicas), tuple(isr), isr[-1]),
        TID,
        0,
        live.__contains__,
        election=Election.PREFERRED,
    )
    if preferred.has_leader and preferred.leader != isr[-1]:
        assert elected is not None and elected.body["leader"] == preferred.leader
