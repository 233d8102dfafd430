"""Fetch-based replication: leader checks, the high watermark, divergence, parked fetches."""

from __future__ import annotations

from tests.raft.helpers import (
    Wire,
    elect,
    fetch,
    flush_all,
    follow,
    make_machine,
    of_type,
    responded,
    sent,
)

from samsa.raft import (
    ElectionState,
    FetchRequest,
    FetchResponse,
    FlushLog,
    HighWatermarkAdvanced,
    MemoryRaftLog,
    OffsetAndEpoch,
    RaftMachine,
    Respond,
)
from samsa.raft.errors import ErrorCode
from samsa.raft.persistence.raft_log import (
    ValidationKind,
    truncation_offset,
    validate_offset_and_epoch,
)


def leader_with_log(
    entries_by_epoch: list[tuple[int, int]], epoch: int
) -> tuple[RaftMachine, MemoryRaftLog]:
    """A leader (node 1 of 3) whose log holds ``count`` entries per ``epoch`` before its own."""
    log = MemoryRaftLog()
    for entry_epoch, count in entries_by_epoch:
        log.append_as_leader([b"old"] * count, entry_epoch)
    log.flush(log.end_offset)
    machine = make_machine(1, log=log, election=ElectionState(epoch - 1))
    machine.start(0)
    elect(machine, log)
    assert machine.epoch == epoch
    return machine, log


def test_fetch_errors_carry_the_leader_hint() -> None:
    follower = make_machine(2)
    follower.start(0)
    follow(follower, 1, 5)
    old = responded(follower.receive_request(1, 3, fetch(3, 0, 0, 4), "old"), "old")
    assert (old.error_code, old.leader_id, old.leader_epoch) == (
        ErrorCode.FENCED_LEADER_EPOCH,
        1,
        5,
    )
    newer = responded(follower.receive_request(1, 3, fetch(3, 0, 0, 6), "new"), "new")
    assert newer.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    same = responded(follower.receive_request(1, 3, fetch(3, 0, 0, 5), "same"), "same")
    assert (same.error_code, same.leader_id, same.leader_epoch) == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        1,
        5,
    )
    bad = responded(follower.receive_request(1, 3, fetch(3, 0, 6, 5), "bad"), "bad")
    assert bad.error_code == ErrorCode.INVALID_REQUEST


def test_an_observer_learns_the_leader_from_any_voter() -> None:
    voter = make_machine(2)
    voter.start(0)
    follow(voter, 1, 5)
    observer = make_machine(9, (1, 2, 3))
    actions = observer.start(0)
    (send, request), *_ = sent(actions, FetchRequest)
    assert request.current_leader_epoch == 0 and send.destination_id in (1, 2, 3)
    answer = responded(voter.receive_request(1, 9, request, "r"), "r")
    observer.receive_response(2, send.request_id, answer)
    assert observer.role == "Follower" and observer.leader_id == 1 and observer.epoch == 5


def test_high_watermark_moves_only_with_an_entry_of_the_leaders_epoch() -> None:
    machine, _ = leader_with_log([(1, 3)], epoch=2)  # LeaderChange of epoch 2 at offset 3
    assert machine.high_watermark == 0
    # Follower 2 has the three entries of epoch 1, but not the LeaderChange.
    actions = machine.receive_request(1001, 2, fetch(2, 3, 1, 2), "f")
    assert not of_type(actions, HighWatermarkAdvanced)
    answer = responded(actions, "f")
    assert answer.high_watermark == -1 and [e.offset for e in answer.entries] == [3]
    actions = machine.receive_request(1002, 2, fetch(2, 4, 2, 2), "g")
    assert of_type(actions, HighWatermarkAdvanced) == [HighWatermarkAdvanced(4)]


def test_leader_counts_only_its_flushed_entries() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    elect(machine, log)  # LeaderChange at 0, flushed
    _, actions = machine.append(1001, [b"a", b"b"])
    assert of_type(actions, FlushLog) == [FlushLog(3)]
    actions = machine.receive_request(1002, 2, fetch(2, 3, 1, 1), "f2")
    machine.receive_request(1002, 3, fetch(3, 0, 0, 1), "f3")
    # 2 is at 3, the leader has flushed only up to 1, 3 has nothing: a majority has 1.
    assert of_type(actions, HighWatermarkAdvanced) == [HighWatermarkAdvanced(1)]
    assert flush_all(machine, log, 1003) == [HighWatermarkAdvanced(3)]


def test_high_watermark_needs_a_majority() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, (1, 2, 3, 4, 5), log=log)
    machine.start(0)
    elect(machine, log)
    machine.append(1001, [b"a"])
    flush_all(machine, log, 1001)
    assert not of_type(
        machine.receive_request(1002, 2, fetch(2, 2, 1, 1), "a"), HighWatermarkAdvanced
    )
    actions = machine.receive_request(1003, 3, fetch(3, 2, 1, 1), "b")
    assert of_type(actions, HighWatermarkAdvanced) == [HighWatermarkAdvanced(2)]


def test_follower_high_watermark_is_capped_by_its_own_log() -> None:
    log = MemoryRaftLog()
    follower = make_machine(2, log=log)
    follower.start(0)
    send = sent(follow(follower, 1, 1), FetchRequest)[0][0]
    from samsa.raft import Entry, LeaderChange

    entries = (Entry(0, 1, LeaderChange(1, (1, 2, 3))), Entry(1, 1, b"a"))
    actions = follower.receive_response(
        5, send.request_id, FetchResponse(ErrorCode.NONE, 1, 1, 9, 0, entries)
    )
    assert of_type(actions, HighWatermarkAdvanced) == [HighWatermarkAdvanced(2)]
    assert of_type(actions, FlushLog) == [FlushLog(2)]
    # It fetches again only once its log is flushed.
    assert not sent(follower.poll(6), FetchRequest)
    again = flush_all(follower, log, 7)
    assert sent(again, FetchRequest)[0][1].fetch_offset == 2


def test_diverging_follower_truncates_to_the_common_prefix() -> None:
    leader, leader_log = leader_with_log(
        [(1, 3), (3, 2)], epoch=4
    )  # epochs 1:[0,3) 3:[3,5) 4:[5,6)
    follower_log = MemoryRaftLog()
    follower_log.append_as_leader([b"old"] * 3, 1)
    follower_log.append_as_leader([b"stale"] * 4, 2)  # epoch 2 never reached the leader
    follower_log.flush(follower_log.end_offset)
    follower = make_machine(2, log=follower_log, election=ElectionState(2))
    wire = Wire({1: (leader, leader_log), 2: (follower, follower_log)})
    follower.start(1000)
    wire.deliver(2, follow(follower, 1, 4, 1000), 1000)
    assert follower.leader_id == 1 and follower.epoch == 4
    assert [(e.offset, e.epoch) for e in follower_log.read(0, 100)] == [
        (e.offset, e.epoch) for e in leader_log.read(0, 100)
    ]
    assert follower.high_watermark == leader_log.end_offset


def test_validation_and_truncation_rules() -> None:
    log = MemoryRaftLog()
    log.append_as_leader([b"a"] * 3, 1)
    log.append_as_leader([b"b"] * 2, 3)
    assert validate_offset_and_epoch(log, 5, 3).kind is ValidationKind.VALID
    assert validate_offset_and_epoch(log, 2, 1).kind is ValidationKind.VALID
    assert validate_offset_and_epoch(log, 0, 0).kind is ValidationKind.VALID
    diverging = validate_offset_and_epoch(log, 7, 2)
    assert (
        diverging.kind is ValidationKind.DIVERGING
        and diverging.offset_and_epoch == OffsetAndEpoch(3, 1)
    )
    too_long = validate_offset_and_epoch(log, 6, 3)
    assert too_long.offset_and_epoch == OffsetAndEpoch(5, 3)
    other = MemoryRaftLog()
    other.append_as_leader([b"a"] * 3, 1)
    other.append_as_leader([b"c"] * 4, 2)
    assert truncation_offset(other, OffsetAndEpoch(3, 1)) == 3
    assert truncation_offset(other, OffsetAndEpoch(5, 3)) == 5


def test_fetch_is_answered_at_once_when_the_follower_lags_the_high_watermark() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    elect(machine, log)
    machine.receive_request(1001, 2, fetch(2, 1, 1, 1, max_wait_ms=50, high_watermark=1), "a")
    # 3 has every entry but thinks nothing is committed: it hears about it at once.
    answer = responded(
        machine.receive_request(1002, 3, fetch(3, 1, 1, 1, max_wait_ms=50), "b"), "b"
    )
    assert answer.high_watermark == 1 and answer.entries == ()


def test_fetch_at_the_end_is_parked_until_there_is_data() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    elect(machine, log)
    parked = machine.receive_request(
        1001, 2, fetch(2, 1, 1, 1, max_wait_ms=50, high_watermark=1), "p"
    )
    assert not of_type(parked, Respond)
    _, actions = machine.append(1010, [b"x"])
    answer = responded(actions, "p")
    assert [e.payload for e in answer.entries] == [b"x"]
    machine.receive_request(1020, 3, fetch(3, 2, 1, 1, max_wait_ms=50, high_watermark=2), "q")
    assert machine.next_deadline() == 1070
    timed_out = responded(machine.poll(1070), "q")
    assert timed_out.entries == () and timed_out.error_code == ErrorCode.NONE


def test_parked_fetches_get_an_error_when_leadership_ends() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    elect(machine, log)
    machine.receive_request(1001, 2, fetch(2, 1, 1, 1, max_wait_ms=50, high_watermark=1), "p")
    answer = responded(machine.resign(1002), "p")
    assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_three_nodes_replicate_and_commit() -> None:
    logs = {i: MemoryRaftLog() for i in (1, 2, 3)}
    machines = {i: make_machine(i, log=logs[i], seed=i) for i in (1, 2, 3)}
    wire = Wire({i: (machines[i], logs[i]) for i in (1, 2, 3)})
    wire.start(0)
    wire.deliver(1, machines[1].poll(1000), 1000)
    assert machines[1].role == "Leader"
    _, actions = machines[1].append(1001, [b"a", b"b", b"c"])
    wire.deliver(1, actions, 1001)
    wire.poll(1002)
    assert {m.high_watermark for m in machines.values()} == {4}
    assert all(logs[i].read(1, 10) == logs[1].read(1, 10) for i in (2, 3))
    info = machines[1].describe_quorum(1003)
    assert info.error_code == ErrorCode.NONE and info.high_watermark == 4
    assert [(r.replica_id, r.log_end_offset) for r in info.current_voters] == [
        (1, 4),
        (2, 4),
        (3, 4),
    ]
    assert machines[2].describe_quorum(1003).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
