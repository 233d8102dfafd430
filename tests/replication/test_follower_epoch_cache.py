"""A follower's epoch cache after it led an epoch in which it wrote nothing.

Found by the cluster simulator (tests/cluster_sim, seed 343 before the fix): broker
7 led leader epoch 1 with an empty log, so its cache held (1, 0); it then followed
the leader of epoch 2, whose log starts with a batch of epoch 0.  Appending that
batch left the cache at (1, 0), the follower reported last_fetched_epoch 1, the
leader answered a divergence at epoch 0 and the follower truncated the committed
batch, again and again.  Kafka's follower assigns every fetched batch's epoch
(removing conflicting entries), so the cache says (0, 0).
"""

from __future__ import annotations

from pathlib import Path

from tests.replication.helpers import ManualClock, make_batch, make_partition, registration


def test_fetched_older_epoch_replaces_an_epoch_led_without_writes(tmp_path: Path) -> None:
    clock = ManualClock()
    old_leader = make_partition(tmp_path, clock, name="old-leader")
    old_leader.make_leader(registration(leader_epoch=0), clock())
    old_leader.append_from_client(memoryview(make_batch(2)), required_acks=1)

    follower = make_partition(tmp_path, clock, node_id=2, name="follower")
    follower.make_leader(registration(leader=2, leader_epoch=1), clock())
    assert follower.log_end_offset == 0
    follower.make_follower(registration(leader=1, leader_epoch=2), clock())

    fetched = old_leader.log.read(0, 1 << 20).records
    records = fetched if isinstance(fetched, bytes) else fetched.read_bytes()
    follower.append_as_follower(records)

    assert follower.last_fetched_epoch() == 0
    assert follower.log.end_offset_for_epoch(0) == (0, 2)
    assert [tuple(e) for e in follower.log.leader_epoch_cache.entries()] == [(0, 0)]


def test_fetched_batches_of_one_epoch_add_one_entry(tmp_path: Path) -> None:
    clock = ManualClock()
    leader = make_partition(tmp_path, clock, name="leader")
    leader.make_leader(registration(leader_epoch=3), clock())
    for _ in range(3):
        leader.append_from_client(memoryview(make_batch(1)), required_acks=1)
    follower = make_partition(tmp_path, clock, node_id=2, name="follower")
    follower.make_follower(registration(leader_epoch=3), clock())
    fetched = leader.log.read(0, 1 << 20).records
    follower.append_as_follower(fetched if isinstance(fetched, bytes) else fetched.read_bytes())
    assert [tuple(e) for e in follower.log.leader_epoch_cache.entries()] == [(3, 0)]
