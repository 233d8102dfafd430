"""The streams member state machine (after Kafka's streams CurrentAssignmentBuilderTest,
written for Samsa): revoke before moving on, never grant a task another member
still holds, in-place role changes, assignment epochs per active task."""

from __future__ import annotations

import pytest

from samsa.coordinator.streams.group import MemberState, StreamsMember
from samsa.coordinator.streams.reconciliation import FencedMember, Reconciler
from samsa.coordinator.streams.tasks import HeldTasks, TaskSet

NOBODY: dict[tuple[str, int], str] = {}


def held(
    active: dict[str, dict[int, int]] | None = None,
    standby: dict[str, set[int]] | None = None,
    warmup: dict[str, set[int]] | None = None,
) -> HeldTasks:
    return HeldTasks(
        active or {},
        {s: frozenset(p) for s, p in (standby or {}).items()},
        {s: frozenset(p) for s, p in (warmup or {}).items()},
    )


def step(
    member: StreamsMember,
    target_epoch: int,
    target: TaskSet,
    owned: TaskSet | None = None,
    active: dict[tuple[str, int], str] = NOBODY,
    standby: dict[tuple[str, int], set[str]] | None = None,
) -> StreamsMember:
    standby = standby or {}
    return Reconciler(
        member,
        target_epoch,
        target,
        owned,
        lambda s, p: active.get((s, p)),
        lambda s, p: standby.get((s, p), set()),
        lambda s, p: set(),
    ).build()


def test_a_new_member_gets_its_free_target_tasks_with_the_target_epoch() -> None:
    joined = step(StreamsMember("m", process_id="p1"), 3, TaskSet.of({"0": [0, 1]}))
    assert joined.state is MemberState.STABLE
    assert (joined.member_epoch, joined.previous_member_epoch) == (3, 0)
    assert joined.assigned.active == {"0": {0: 3, 1: 3}}


def test_reconciled_member_is_returned_unchanged() -> None:
    m = StreamsMember("m", member_epoch=3, process_id="p1", assigned=held({"0": {0: 3}}))
    assert step(m, 3, TaskSet.of({"0": [0]})) is m


def test_tasks_moving_away_are_revoked_first_and_the_epoch_waits() -> None:
    m = StreamsMember("m", member_epoch=2, process_id="p1", assigned=held({"0": {0: 1, 1: 2}}))
    revoking = step(m, 4, TaskSet.of({"0": [0]}))
    assert revoking.state is MemberState.UNREVOKED_TASKS
    assert revoking.member_epoch == 2
    assert revoking.assigned.active == {"0": {0: 1}}, "a kept task keeps its epoch"
    assert revoking.pending_revocation.active == {"0": {1: 2}}
    # No owned tasks reported, or task 1 still reported: nothing moves.
    assert step(revoking, 4, TaskSet.of({"0": [0]})) is revoking
    still = TaskSet.of({"0": [0, 1]})
    assert step(revoking, 4, TaskSet.of({"0": [0]}), owned=still) is revoking
    done = step(revoking, 4, TaskSet.of({"0": [0]}), owned=TaskSet.of({"0": [0]}))
    assert (done.state, done.member_epoch) == (MemberState.STABLE, 4)
    assert done.pending_revocation.is_empty()


def test_a_task_another_process_still_runs_is_not_granted() -> None:
    m = StreamsMember("m", member_epoch=1, process_id="p2")
    waiting = step(m, 2, TaskSet.of({"0": [0, 1]}), active={("0", 1): "p1"})
    assert waiting.state is MemberState.UNRELEASED_TASKS
    assert waiting.member_epoch == 2
    assert waiting.assigned.active == {"0": {0: 2}}
    released = step(waiting, 2, TaskSet.of({"0": [0, 1]}))
    assert released.state is MemberState.STABLE
    assert released.assigned.active == {"0": {0: 2, 1: 2}}


def test_a_standby_waits_for_another_member_of_the_same_process() -> None:
    m = StreamsMember("m", member_epoch=1, process_id="p1")
    target = TaskSet.of(standby={"1": [0]})
    waiting = step(m, 2, target, standby={("1", 0): {"p1"}})
    assert waiting.state is MemberState.UNRELEASED_TASKS
    # A standby on another process does not block.
    granted = step(m, 2, target, standby={("1", 0): {"p9"}})
    assert granted.assigned.standby == {"1": {0}}


def test_demotion_to_standby_is_granted_at_once_while_the_active_is_revoked() -> None:
    m = StreamsMember("m", member_epoch=1, process_id="p1", assigned=held({"1": {0: 1}}))
    demoted = step(m, 2, TaskSet.of(standby={"1": [0]}), active={("1", 0): "p1"})
    assert demoted.state is MemberState.UNREVOKED_TASKS
    assert demoted.assigned.standby == {"1": {0}}
    assert demoted.pending_revocation.active == {"1": {0: 1}}


def test_promotion_from_standby_keeps_the_standby_until_the_active_is_free() -> None:
    m = StreamsMember("m", member_epoch=1, process_id="p2", assigned=held(standby={"1": {0}}))
    target = TaskSet.of({"1": [0]})
    blocked = step(m, 2, target, active={("1", 0): "p1"})
    assert blocked.state is MemberState.UNRELEASED_TASKS
    assert blocked.assigned.standby == {"1": {0}}, "kept for an in-place promotion"
    assert blocked.pending_revocation.is_empty(), "a promotion needs no revocation"
    promoted = step(blocked, 2, target)
    assert promoted.assigned.active == {"1": {0: 2}}
    assert promoted.assigned.standby == {}


def test_a_member_in_an_unknown_state_must_rejoin() -> None:
    m = StreamsMember("m", member_epoch=1, state=MemberState.UNKNOWN, process_id="p1")
    with pytest.raises(FencedMember):
        step(m, 2, TaskSet.of({"0": [0]}), owned=TaskSet.of({"0": [0]}))
    restarted = step(m, 2, TaskSet.of({"0": [0]}), owned=TaskSet())
    assert restarted.member_epoch == 2
