"""The leader's view of one follower: when it counts as caught up."""

from __future__ import annotations

from samsa.replication.leader.replica_state import UNKNOWN_OFFSET, ReplicaState

LAG = 10_000


def test_fetch_at_the_leaders_end_is_caught_up_now() -> None:
    replica = ReplicaState(2)
    replica.update_fetch_state(100, 0, fetch_time_ms=5_000, leader_end_offset=100)
    assert replica.last_caught_up_time_ms == 5_000
    assert replica.log_end_offset == 100


def test_fetch_reaching_the_previous_end_was_caught_up_at_the_previous_fetch() -> None:
    replica = ReplicaState(2)
    replica.update_fetch_state(50, 0, fetch_time_ms=1_000, leader_end_offset=100)
    assert replica.last_caught_up_time_ms == 0
    # The leader grew to 120 meanwhile; the follower got everything up to 100.
    replica.update_fetch_state(100, 0, fetch_time_ms=2_000, leader_end_offset=120)
    assert replica.last_caught_up_time_ms == 1_000


def test_fetch_behind_the_previous_end_proves_nothing() -> None:
    replica = ReplicaState(2, last_caught_up_time_ms=500)
    replica.update_fetch_state(50, 0, fetch_time_ms=1_000, leader_end_offset=100)
    replica.update_fetch_state(90, 0, fetch_time_ms=2_000, leader_end_offset=130)
    assert replica.last_caught_up_time_ms == 500


def test_caught_up_when_level_or_within_the_lag() -> None:
    replica = ReplicaState(2, log_end_offset=100, last_caught_up_time_ms=1_000)
    assert replica.is_caught_up(100, now_ms=1_000_000, max_lag_ms=LAG)
    assert replica.is_caught_up(150, now_ms=1_000 + LAG, max_lag_ms=LAG)
    assert not replica.is_caught_up(150, now_ms=1_001 + LAG, max_lag_ms=LAG)


def test_reset_for_a_new_leader_forgets_offsets_and_trusts_only_the_isr() -> None:
    in_sync = ReplicaState(2, log_end_offset=80, last_fetch_leader_log_end_offset=90)
    out = ReplicaState(3, log_end_offset=80, last_caught_up_time_ms=7)
    in_sync.reset(5_000, 100, is_new_leader=True, in_sync=True)
    out.reset(5_000, 100, is_new_leader=True, in_sync=False)
    assert in_sync.log_end_offset == UNKNOWN_OFFSET
    assert in_sync.last_caught_up_time_ms == 5_000
    assert out.last_caught_up_time_ms == 0


def test_reset_for_a_new_epoch_of_the_same_leader_keeps_offsets() -> None:
    replica = ReplicaState(2, log_end_offset=80)
    replica.reset(5_000, 100, is_new_leader=False, in_sync=True)
    assert replica.log_end_offset == 80
    assert replica.last_fetch_leader_log_end_offset == 100
    assert replica.last_fetch_time_ms == 5_000
