"""The leader's rules: high watermark over the maximal ISR, shrink and expand."""

from __future__ import annotations

import pytest

from samsa.replication.leader.isr_state import CommittedIsr, PendingExpandIsr, PendingShrinkIsr
from samsa.replication.leader.leader_state import LeaderState

LAG = 10_000
NOW = 100_000


def everyone(_: int) -> bool:
    return True


def leader(isr: tuple[int, ...] = (1, 2, 3), replicas: tuple[int, ...] = (1, 2, 3)) -> LeaderState:
    state = LeaderState(1, LAG)
    state.update_assignment(replicas, isr)
    state.start_epoch(NOW, 0, is_new_leader=True)
    return state


def fetched(state: LeaderState, broker: int, offset: int, leader_end: int, now: int = NOW) -> None:
    state.remote[broker].update_fetch_state(offset, 0, now, leader_end)


def test_high_watermark_is_the_smallest_end_offset_of_the_isr() -> None:
    state = leader()
    assert state.high_watermark_candidate(10, NOW, everyone) == -1  # followers unknown yet
    fetched(state, 2, 10, 10)
    fetched(state, 3, 7, 10)
    assert state.high_watermark_candidate(10, NOW, everyone) == 7


def test_high_watermark_ignores_followers_out_of_the_isr_and_behind() -> None:
    state = leader(isr=(1, 2))
    fetched(state, 2, 10, 10)
    fetched(state, 3, 2, 10, now=NOW - LAG - 1)  # never caught up
    assert state.high_watermark_candidate(10, NOW, everyone) == 10


def test_high_watermark_waits_for_a_caught_up_replica_about_to_join() -> None:
    state = leader(isr=(1, 2))
    fetched(state, 2, 10, 10)
    fetched(state, 3, 10, 10)  # level with the leader at 10 ...
    # ... which has since appended up to 12: 3 is caught up (within the lag).
    assert state.high_watermark_candidate(12, NOW + 1, everyone) == 10
    # An ineligible broker (fenced, shutting down) is not waited for.
    assert state.high_watermark_candidate(12, NOW + 1, lambda b: b != 3) == 10
    fetched(state, 2, 12, 12)
    assert state.high_watermark_candidate(12, NOW + 1, lambda b: b != 3) == 12


def test_out_of_sync_after_the_lag_without_catching_up() -> None:
    state = leader()
    fetched(state, 2, 10, 10)
    fetched(state, 3, 5, 10)
    assert state.out_of_sync_replicas(10, NOW + LAG) == frozenset()
    assert state.out_of_sync_replicas(10, NOW + LAG + 1) == {3}
    # A replica level with the leader is never out of sync, however old its proof.
    assert 2 not in state.out_of_sync_replicas(10, NOW + 10 * LAG)


def test_expand_needs_the_high_watermark_and_the_epoch_start() -> None:
    state = LeaderState(1, LAG)
    state.update_assignment((1, 2, 3), (1, 2))
    state.start_epoch(NOW, 20, is_new_leader=True)  # this epoch starts at 20
    fetched(state, 3, 15, 25)
    assert not state.should_expand(3, 15, everyone)  # behind the epoch start
    fetched(state, 3, 22, 25)
    assert not state.should_expand(3, 23, everyone)  # behind the high watermark
    assert state.should_expand(3, 22, everyone)
    assert not state.should_expand(3, 22, lambda b: False)
    assert not state.should_expand(2, 0, everyone)  # already in the ISR


def test_pending_expand_counts_the_new_replica_at_once() -> None:
    state = leader(isr=(1, 2))
    fetched(state, 2, 10, 10)
    fetched(state, 3, 10, 10)
    pending = state.prepare_expand(3, leader_epoch=4, partition_epoch=7)
    assert isinstance(state.isr_state, PendingExpandIsr)
    assert pending.sent.isr == (1, 2, 3) and pending.sent.partition_epoch == 7
    assert state.isr_state.isr == {1, 2}
    assert state.isr_state.maximal_isr == {1, 2, 3}
    fetched(state, 3, 10, 12, now=NOW + 2 * LAG)
    assert state.high_watermark_candidate(12, NOW + 2 * LAG, everyone) == 10


def test_pending_shrink_keeps_the_leaving_replica_for_the_high_watermark() -> None:
    state = leader()
    fetched(state, 2, 10, 10)
    fetched(state, 3, 4, 10)
    pending = state.prepare_shrink(frozenset({3}), leader_epoch=0, partition_epoch=0)
    assert pending.sent.isr == (1, 2)
    assert isinstance(state.isr_state, PendingShrinkIsr)
    assert state.high_watermark_candidate(10, NOW, everyone) == 4
    state.commit((1, 2))
    assert state.isr_state == CommittedIsr(frozenset({1, 2}))


def test_no_second_change_while_one_is_in_flight() -> None:
    state = leader()
    fetched(state, 2, 10, 10)
    state.prepare_shrink(frozenset({3}), 0, 0)
    assert state.out_of_sync_replicas(10, NOW + 10 * LAG) == frozenset()
    assert not state.should_expand(3, 0, everyone)
    with pytest.raises(RuntimeError):
        state.prepare_expand(3, 0, 0)
    state.roll_back()
    assert state.isr_state == CommittedIsr(frozenset({1, 2, 3}))


def test_assignment_change_keeps_known_followers_and_drops_removed_ones() -> None:
    state = leader()
    fetched(state, 2, 10, 10)
    state.update_assignment((1, 2, 4), (1, 2))
    assert set(state.remote) == {2, 4}
    assert state.remote[2].log_end_offset == 10
