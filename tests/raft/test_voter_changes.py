"""KIP-853 voter changes: one at a time, caught-up voters only, effective when in the log."""

from __future__ import annotations

from tests.raft.helpers import Wire, elect, fetch, flush_all, follow, make_machine, responded, sent

from samsa.raft import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    Entry,
    FetchRequest,
    FetchResponse,
    MemoryRaftLog,
    RaftMachine,
    RemoveRaftVoterResponse,
    Voters,
    VoterSet,
)
from samsa.raft.errors import ErrorCode, KRaftErrorCode


def dynamic_leader() -> tuple[RaftMachine, MemoryRaftLog]:
    """Node 1 leads a bootstrapped quorum (1, 2, 3); its epoch is committed."""
    log = MemoryRaftLog()
    leader = make_machine(1, log=log, dynamic=True)
    leader.start(0)
    elect(leader, log)
    assert isinstance(log.read(1, 1)[0].payload, Voters)  # the bootstrap set, written down
    leader.receive_request(1001, 2, fetch(2, log.end_offset, 1, 1), "f")
    assert leader.high_watermark == log.end_offset
    return leader, log


def catch_up(leader: RaftMachine, log: MemoryRaftLog, node_id: int, now_ms: int) -> None:
    leader.receive_request(
        now_ms, node_id, fetch(node_id, log.end_offset, 1, 1), ("catch", node_id)
    )


def test_adding_a_caught_up_observer() -> None:
    leader, log = dynamic_leader()
    catch_up(leader, log, 4, 1002)
    actions = leader.add_voter(1003, 4, None, (), "add")
    assert leader.voter_set == VoterSet.of((1, 2, 3, 4))  # in force as soon as it is in the log
    entry = log.read(log.end_offset - 1, 1)[0]
    assert isinstance(entry.payload, Voters)
    assert not [a for a in actions if getattr(a, "reply_to", None) == "add"]
    flush_all(leader, log, 1004)
    leader.receive_request(1005, 2, fetch(2, log.end_offset, 1, 1), "f2")
    # The new set {1,2,3,4} needs three: 1 and 2 are not enough.
    assert leader.high_watermark <= entry.offset
    done = leader.receive_request(1006, 4, fetch(4, log.end_offset, 1, 1), "f4")
    assert responded(done, "add") == AddRaftVoterResponse(ErrorCode.NONE)


def test_observer_that_is_not_caught_up_is_refused() -> None:
    leader, _ = dynamic_leader()
    answer = responded(leader.add_voter(1002, 4, None, (), "add"), "add")
    assert (
        isinstance(answer, AddRaftVoterResponse)
        and answer.error_code == ErrorCode.REQUEST_TIMED_OUT
    )
    assert answer.error_message is not None and "caught up" in answer.error_message
    assert leader.voter_set == VoterSet.of((1, 2, 3))


def test_one_change_at_a_time() -> None:
    leader, log = dynamic_leader()
    catch_up(leader, log, 4, 1002)
    catch_up(leader, log, 5, 1002)
    leader.add_voter(1003, 4, None, (), "first")
    second = responded(leader.add_voter(1003, 5, None, (), "second"), "second")
    assert second.error_code == ErrorCode.REQUEST_TIMED_OUT
    removal = responded(leader.remove_voter(1003, 2, None, "removal"), "removal")
    assert removal.error_code == ErrorCode.REQUEST_TIMED_OUT


def test_duplicate_and_unknown_voters() -> None:
    leader, log = dynamic_leader()
    catch_up(leader, log, 2, 1002)
    duplicate = responded(leader.add_voter(1003, 2, None, (), "d"), "d")
    assert duplicate.error_code == KRaftErrorCode.DUPLICATE_VOTER
    unknown = responded(leader.remove_voter(1003, 7, None, "u"), "u")
    assert unknown.error_code == KRaftErrorCode.VOTER_NOT_FOUND


def test_static_quorum_cannot_change() -> None:
    log = MemoryRaftLog()
    leader = make_machine(1, log=log)
    leader.start(0)
    elect(leader, log)
    leader.receive_request(1001, 2, fetch(2, log.end_offset, 1, 1), "f")
    answer = responded(leader.remove_voter(1002, 3, None, "r"), "r")
    assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION


def test_not_before_the_leader_committed_its_epoch() -> None:
    log = MemoryRaftLog()
    leader = make_machine(1, log=log, dynamic=True)
    leader.start(0)
    elect(leader, log)
    answer = responded(leader.remove_voter(1001, 3, None, "r"), "r")
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT


def test_non_leader_refuses_with_not_leader() -> None:
    follower = make_machine(2, dynamic=True)
    follower.start(0)
    follow(follower, 1, 3)
    request = AddRaftVoterRequest(4, None)
    answer = responded(follower.receive_request(1, 9, request, "a"), "a")
    assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_removing_the_leader_makes_it_resign_once_committed() -> None:
    leader, log = dynamic_leader()
    leader.remove_voter(1002, 1, None, "r")
    assert leader.voter_set == VoterSet.of((2, 3)) and leader.role == "Leader"
    flush_all(leader, log, 1003)
    leader.receive_request(1004, 2, fetch(2, log.end_offset, 1, 1), "f2")
    assert leader.role == "Leader"  # {2, 3} needs both: not committed yet
    actions = leader.receive_request(1005, 3, fetch(3, log.end_offset, 1, 1), "f3")
    assert responded(actions, "r") == RemoveRaftVoterResponse(ErrorCode.NONE)
    assert leader.role == "Resigned"


def test_a_follower_uses_a_new_voter_set_at_once_and_reverts_it_on_truncation() -> None:
    log = MemoryRaftLog()
    follower = make_machine(2, log=log, dynamic=True)
    follower.start(0)
    send = sent(follow(follower, 1, 1), FetchRequest)[0][0]
    change = Entry(0, 1, Voters(VoterSet.of((1, 2, 3, 4))))
    follower.receive_response(
        1, send.request_id, FetchResponse(ErrorCode.NONE, 1, 1, -1, 0, (change,))
    )
    assert follower.voter_set == VoterSet.of((1, 2, 3, 4))
    next_fetch = sent(flush_all(follower, log, 2), FetchRequest)
    assert next_fetch
    from samsa.raft import OffsetAndEpoch

    diverging = FetchResponse(ErrorCode.NONE, 1, 1, -1, 0, diverging_epoch=OffsetAndEpoch(0, 0))
    follower.receive_response(3, next_fetch[0][0].request_id, diverging)
    assert log.end_offset == 0 and follower.voter_set == VoterSet.of((1, 2, 3))


def test_a_new_voter_joins_a_running_quorum() -> None:
    logs = {i: MemoryRaftLog() for i in (1, 2, 3, 4)}
    machines = {i: make_machine(i, log=logs[i], dynamic=True, seed=i) for i in (1, 2, 3)}
    # No bootstrap voter set: an observer that finds the quorum through bootstrap servers.
    machines[4] = make_machine(4, log=logs[4], dynamic=True, seed=4, bootstrap_servers=3)
    wire = Wire({i: (machines[i], logs[i]) for i in machines}, bootstrap=(1, 2, 3))
    wire.start(0)
    wire.deliver(1, machines[1].poll(1000), 1000)
    assert machines[1].role == "Leader"
    wire.poll(1001)  # observer 4 asks the voters, finds the leader, catches up
    assert machines[4].role == "Follower" and not machines[4].is_voter
    wire.deliver(1, machines[1].add_voter(1002, 4, None, (), "add"), 1002)
    wire.poll(1003)
    assert responded(wire.seen[1], "add") == AddRaftVoterResponse(ErrorCode.NONE)
    assert all(m.voter_set == VoterSet.of((1, 2, 3, 4)) for m in machines.values())
    assert machines[4].is_voter


def test_a_log_that_starts_with_a_voters_entry_bootstraps_the_quorum() -> None:
    log = MemoryRaftLog()
    log.append_as_leader([Voters(VoterSet.of((1, 2, 3)))], 0)
    log.flush(1)
    machine = make_machine(1, log=log, dynamic=True, bootstrap_voters=VoterSet())
    assert machine.voter_set == VoterSet.of((1, 2, 3)) and machine.kraft_version == 1
    machine.start(0)
    elect(machine, log)
    written = [entry.payload for entry in log.read(1, 10)]
    assert not any(isinstance(payload, Voters) for payload in written)  # not written twice


def test_leader_endpoints_are_learnt_from_the_leader() -> None:
    from samsa.raft import BeginQuorumEpochRequest, Endpoint

    follower = make_machine(2, dynamic=True)
    follower.start(0)
    endpoint = Endpoint("CONTROLLER", "node9", 9093)
    follower.receive_request(1, 9, BeginQuorumEpochRequest(9, 4, 2, None, (endpoint,)), "b")
    assert follower.leader_id == 9 and follower.endpoints(9) == (endpoint,)
