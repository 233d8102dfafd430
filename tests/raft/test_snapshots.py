"""Snapshots: taking them, dropping the log prefix, and a follower fetching one."""

from __future__ import annotations

import dataclasses

import pytest
from tests.raft.helpers import (
    CONFIG,
    Wire,
    elect,
    fetch,
    flush_all,
    follow,
    make_machine,
    of_type,
    responded,
)

from samsa.raft import (
    ElectionState,
    FetchResponse,
    FetchSnapshotRequest,
    HighWatermarkAdvanced,
    LoadSnapshot,
    MemoryRaftLog,
    OffsetAndEpoch,
    RaftMachine,
    VoterSet,
)
from samsa.raft.errors import ErrorCode


def committed_leader(payloads: int, *, dynamic: bool = False) -> tuple[RaftMachine, MemoryRaftLog]:
    """Node 1 of (1, 2, 3), leader of epoch 1 with ``payloads`` committed data entries."""
    log = MemoryRaftLog()
    leader = make_machine(1, log=log, dynamic=dynamic)
    leader.start(0)
    elect(leader, log)
    leader.append(1001, [f"k{i}=v{i}".encode() for i in range(payloads)])
    flush_all(leader, log, 1001)
    leader.receive_request(1002, 2, fetch(2, log.end_offset, 1, 1), "f")
    assert leader.high_watermark == log.end_offset
    return leader, log


def test_snapshot_only_below_the_high_watermark() -> None:
    leader, log = committed_leader(4)
    with pytest.raises(ValueError):
        leader.create_snapshot(log.end_offset + 1, b"state")
    snapshot_id = leader.create_snapshot(3, b"state")
    assert snapshot_id == OffsetAndEpoch(3, 1)
    assert log.load_snapshot(snapshot_id).data == b"state"
    assert log.start_offset == 0
    leader.delete_before_snapshot()
    assert log.start_offset == 3 and log.earliest_snapshot_id == snapshot_id


def test_snapshot_stores_the_voter_set_of_a_dynamic_quorum() -> None:
    leader, log = committed_leader(2, dynamic=True)
    snapshot_id = leader.create_snapshot(log.end_offset, b"s")
    snapshot = log.load_snapshot(snapshot_id)
    assert snapshot is not None and snapshot.voters == VoterSet.of((1, 2, 3))


def test_fetch_below_the_log_start_gets_the_snapshot_id() -> None:
    leader, _ = committed_leader(4)
    snapshot_id = leader.create_snapshot(4, b"state")
    leader.delete_before_snapshot()
    answer = responded(leader.receive_request(1003, 3, fetch(3, 0, 0, 1), "f"), "f")
    assert isinstance(answer, FetchResponse) and answer.snapshot_id == snapshot_id
    assert answer.log_start_offset == 4


def test_follower_installs_a_fetched_snapshot_in_chunks() -> None:
    leader, leader_log = committed_leader(6)
    state = b"x" * 300  # several 64-byte chunks
    snapshot_id = leader.create_snapshot(5, state)
    leader.delete_before_snapshot()
    follower_log = MemoryRaftLog()
    small_chunks = dataclasses.replace(CONFIG, fetch_snapshot_max_bytes=64)
    follower = make_machine(3, log=follower_log, config=small_chunks)
    follower.start(0)
    wire = Wire({1: (leader, leader_log), 3: (follower, follower_log)})
    wire.deliver(3, follow(follower, 1, 1, 1003), 1003)
    collected = wire.seen[3]
    chunks = [t for t in wire.trace if t.endswith("FetchSnapshotRequest")]
    assert len(chunks) >= 5
    assert LoadSnapshot(snapshot_id) in collected
    load_at = collected.index(LoadSnapshot(snapshot_id))
    assert HighWatermarkAdvanced(5) in collected[load_at:]
    assert follower_log.start_offset == 5
    assert follower_log.load_snapshot(snapshot_id).data == state
    assert follower_log.read(5, 100) == leader_log.read(5, 100)
    assert follower.high_watermark == leader_log.end_offset


def test_snapshot_request_errors() -> None:
    leader, _ = committed_leader(4)
    snapshot_id = leader.create_snapshot(4, b"state")
    missing = FetchSnapshotRequest(2, 1, OffsetAndEpoch(9, 1), 0, 100)
    answer = responded(leader.receive_request(1003, 2, missing, "a"), "a")
    assert answer.error_code == ErrorCode.SNAPSHOT_NOT_FOUND
    beyond = FetchSnapshotRequest(2, 1, snapshot_id, 10_000, 100)
    answer = responded(leader.receive_request(1003, 2, beyond, "b"), "b")
    assert answer.error_code == ErrorCode.POSITION_OUT_OF_RANGE
    old_epoch = FetchSnapshotRequest(2, 0, snapshot_id, 0, 100)
    answer = responded(leader.receive_request(1003, 2, old_epoch, "c"), "c")
    assert (answer.error_code, answer.leader_id) == (ErrorCode.FENCED_LEADER_EPOCH, 1)


def test_restart_loads_the_newest_snapshot_first() -> None:
    leader, log = committed_leader(4)
    snapshot_id = leader.create_snapshot(4, b"state")
    machine = make_machine(1, log=log, election=ElectionState(1, 1, 1))
    actions = machine.start(5000)
    assert actions.index(LoadSnapshot(snapshot_id)) >= 0
    assert machine.high_watermark == 4  # what the snapshot holds is committed
    assert not of_type(actions, HighWatermarkAdvanced)


def test_a_follower_whose_log_conflicts_with_the_snapshot_replaces_its_log() -> None:
    leader, leader_log = committed_leader(4)
    leader.create_snapshot(5, b"state")
    leader.delete_before_snapshot()
    stale = MemoryRaftLog()
    stale.append_as_leader([b"stale"] * 7, 0)  # epoch 0 entries: they conflict with epoch 1
    stale.flush(stale.end_offset)
    follower = make_machine(2, log=stale)
    follower.start(0)
    wire = Wire({1: (leader, leader_log), 2: (follower, stale)})
    wire.deliver(2, follow(follower, 1, 1, 1003), 1003)
    assert stale.start_offset == 5 and stale.read(5, 10) == leader_log.read(5, 10)
