"""Elections: vote granting, pre-vote (KIP-996), persistence order, restarts, hand-over."""

from __future__ import annotations

from tests.raft.helpers import elect, fetch, follow, make_machine, of_type, responded, sent

from samsa.raft import (
    BeginQuorumEpochRequest,
    ElectionState,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    LeaderChanged,
    MemoryRaftLog,
    PersistElectionState,
    Respond,
    Send,
    VoteRequest,
    VoteResponse,
)
from samsa.raft.errors import ErrorCode


def vote(
    candidate: int, epoch: int, last_epoch: int = 0, last_offset: int = 0, pre: bool = False
) -> VoteRequest:
    return VoteRequest(candidate, epoch, last_epoch, last_offset, pre)


def test_grants_a_vote_and_persists_it_before_answering() -> None:
    machine = make_machine(1)
    machine.start(0)
    actions = machine.receive_request(5, 2, vote(2, 3), "r")
    response = responded(actions, "r")
    assert response == VoteResponse(ErrorCode.NONE, None, 3, True)
    persisted = of_type(actions, PersistElectionState)
    assert persisted and persisted[-1].election == ElectionState(3, None, 2, None, (1, 2, 3))
    answer = next(a for a in actions if isinstance(a, Respond))
    assert actions.index(persisted[-1]) < actions.index(answer)
    assert machine.epoch == 3 and machine.role == "Unattached"


def test_votes_once_per_epoch() -> None:
    machine = make_machine(1)
    machine.start(0)
    machine.receive_request(5, 2, vote(2, 3), "a")
    rejected = responded(machine.receive_request(6, 3, vote(3, 3), "b"), "b")
    assert isinstance(rejected, VoteResponse) and not rejected.vote_granted
    again = responded(machine.receive_request(7, 2, vote(2, 3), "c"), "c")
    assert isinstance(again, VoteResponse) and again.vote_granted  # the same candidate, retried


def test_refuses_a_candidate_whose_log_is_behind() -> None:
    log = MemoryRaftLog()
    log.append_as_leader([b"x", b"y"], 2)
    machine = make_machine(1, log=log, election=ElectionState(2))
    machine.start(0)
    older_epoch = responded(
        machine.receive_request(1, 2, vote(2, 3, last_epoch=1, last_offset=9), "a"), "a"
    )
    shorter = responded(
        machine.receive_request(2, 3, vote(3, 4, last_epoch=2, last_offset=1), "b"), "b"
    )
    equal = responded(
        machine.receive_request(3, 2, vote(2, 5, last_epoch=2, last_offset=2), "c"), "c"
    )
    assert [r.vote_granted for r in (older_epoch, shorter, equal)] == [False, False, True]


def test_old_epoch_is_fenced_with_the_leader_hint() -> None:
    machine = make_machine(1)
    machine.start(0)
    follow(machine, 3, 5)
    response = responded(machine.receive_request(1, 2, vote(2, 4, pre=True), "r"), "r")
    assert response == VoteResponse(ErrorCode.FENCED_LEADER_EPOCH, 3, 5, False)


def test_malformed_vote_is_invalid() -> None:
    machine = make_machine(1)
    machine.start(0)
    response = responded(machine.receive_request(1, 2, vote(2, 3, last_epoch=3), "r"), "r")
    assert response.error_code == ErrorCode.INVALID_REQUEST


def test_static_quorum_refuses_votes_from_non_voters() -> None:
    machine = make_machine(1, (1, 2, 3))
    machine.start(0)
    response = responded(machine.receive_request(1, 9, vote(9, 3), "r"), "r")
    assert response.error_code == ErrorCode.INCONSISTENT_VOTER_SET
    assert machine.epoch == 0  # nothing changed
    begin = responded(machine.receive_request(1, 9, BeginQuorumEpochRequest(9, 3), "b"), "b")
    assert begin.error_code == ErrorCode.INCONSISTENT_VOTER_SET


def test_pre_vote_is_refused_while_the_leader_is_alive() -> None:
    machine = make_machine(1)
    machine.start(0)
    send = sent(follow(machine, 3, 5, now_ms=0), FetchRequest)[0][0]
    machine.receive_response(10, send.request_id, FetchResponse(ErrorCode.NONE, 3, 5, 0, 0))
    live = responded(machine.receive_request(20, 2, vote(2, 5, pre=True), "live"), "live")
    assert isinstance(live, VoteResponse) and not live.vote_granted and live.leader_id == 3
    # No fetch for a whole fetch timeout: the leader is presumed gone.
    stale = responded(machine.receive_request(10 + 200, 2, vote(2, 5, pre=True), "stale"), "stale")
    assert isinstance(stale, VoteResponse) and stale.vote_granted


def test_pre_vote_grant_is_not_binding() -> None:
    machine = make_machine(1)
    machine.start(0)
    actions = machine.receive_request(5, 2, vote(2, 0, pre=True), "r")
    assert responded(actions, "r") == VoteResponse(ErrorCode.NONE, None, 0, True)
    assert not of_type(actions, PersistElectionState)
    standard = responded(machine.receive_request(6, 3, vote(3, 1), "s"), "s")
    assert isinstance(standard, VoteResponse) and standard.vote_granted


def test_timeout_starts_a_pre_vote_without_bumping_the_epoch() -> None:
    machine = make_machine(1)
    machine.start(0)
    actions = machine.poll(1000)
    assert machine.role == "Prospective" and machine.epoch == 0
    requests = [request for _, request in sent(actions, VoteRequest)]
    assert {r.pre_vote for r in requests} == {True} and {r.replica_epoch for r in requests} == {0}
    assert not of_type(actions, PersistElectionState)


def test_majority_of_pre_votes_makes_a_candidate_then_a_leader() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    actions = elect(machine, log)
    assert machine.epoch == 1
    candidate_state = [a.election for a in of_type(actions, PersistElectionState)]
    assert ElectionState(1, None, 1, None, (1, 2, 3)) in candidate_state
    assert candidate_state[-1].leader_id == 1
    begins = {s.destination_id for s, _ in sent(actions, BeginQuorumEpochRequest)}
    assert begins == {2, 3}
    assert LeaderChanged(1, 1) in actions


def test_lost_pre_vote_returns_to_the_known_leader() -> None:
    machine = make_machine(1)
    machine.start(0)
    follow(machine, 3, 5)
    actions = machine.poll(300)  # fetch timeout: pre-vote
    assert machine.role == "Prospective" and machine.epoch == 5
    for send, _ in sent(actions, VoteRequest):
        machine.receive_response(301, send.request_id, VoteResponse(ErrorCode.NONE, 3, 5, False))
    assert machine.role == "Follower" and machine.leader_id == 3 and machine.epoch == 5


def test_candidate_backs_off_after_rejection_then_tries_again() -> None:
    machine = make_machine(1)
    machine.start(0)
    actions = machine.poll(1000)
    for send, _ in sent(actions, VoteRequest):
        actions += machine.receive_response(
            1000, send.request_id, VoteResponse(ErrorCode.NONE, None, 0, True)
        )
    assert machine.role == "Candidate"
    for send, request in sent(actions, VoteRequest):
        if not request.pre_vote and machine.role == "Candidate":
            machine.receive_response(
                1001, send.request_id, VoteResponse(ErrorCode.NONE, None, 1, False)
            )
    # Rejected by a majority: a random backoff of at most election.backoff.max.ms (maybe 0).
    if machine.role == "Candidate":
        deadline = machine.next_deadline()
        assert deadline is not None and deadline <= 1001 + 100
        machine.poll(deadline)
    assert machine.role == "Prospective" and machine.epoch == 1


def test_restarted_leader_resigns_in_its_epoch() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log, election=ElectionState(4, 1, 1))
    actions = machine.start(0)
    assert machine.role == "Resigned" and machine.epoch == 4
    ends = sent(actions, EndQuorumEpochRequest)
    assert {s.destination_id for s, _ in ends} == {2, 3}
    assert of_type(actions, LeaderChanged)[-1] == LeaderChanged(None, 4)
    # It never votes in the epoch it led.
    refused = responded(machine.receive_request(1, 2, vote(2, 4, pre=True), "r"), "r")
    assert isinstance(refused, VoteResponse) and not refused.vote_granted


def test_restart_keeps_the_vote_and_the_leader() -> None:
    voted = make_machine(1, election=ElectionState(4, None, 2))
    voted.start(0)
    assert voted.role == "Unattached" and voted.epoch == 4
    refused = responded(voted.receive_request(1, 3, vote(3, 4), "r"), "r")
    assert isinstance(refused, VoteResponse) and not refused.vote_granted
    follower = make_machine(1, election=ElectionState(4, 3, None))
    follower.start(0)
    assert follower.role == "Follower" and follower.leader_id == 3
    candidate = make_machine(1, election=ElectionState(4, None, 1))
    candidate.start(0)
    assert candidate.role == "Candidate" and candidate.epoch == 4


def test_epoch_from_the_log_wins_over_an_older_state_file() -> None:
    log = MemoryRaftLog()
    log.append_as_leader([b"x"], 7)
    machine = make_machine(1, log=log, election=ElectionState(3, 2))
    actions = machine.start(0)
    assert machine.epoch == 7 and machine.role == "Unattached"
    assert of_type(actions, PersistElectionState)[-1].election.epoch == 7


def test_resigning_leader_names_successors_by_progress() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    elect(machine, log)
    machine.receive_request(1001, 3, fetch(3, 1, 1, 1), "f3")
    machine.receive_request(1001, 2, fetch(2, 0, 0, 1), "f2")
    actions = machine.resign(1002)
    assert machine.role == "Resigned"
    requests = [r for _, r in sent(actions, EndQuorumEpochRequest)]
    assert requests and requests[0].preferred_successors == (3, 2)
    for send, _ in sent(actions, EndQuorumEpochRequest):
        machine.receive_response(
            1003, send.request_id, EndQuorumEpochResponse(ErrorCode.NONE, None, 1)
        )
    assert not sent(machine.poll(1010), EndQuorumEpochRequest)


def test_preferred_successor_starts_its_election_at_once() -> None:
    first = make_machine(2)
    first.start(0)
    follow(first, 1, 3)
    actions = first.receive_request(10, 1, EndQuorumEpochRequest(1, 3, (2, 3)), "e")
    assert first.role == "Prospective" and sent(actions, VoteRequest)
    second = make_machine(3)
    second.start(0)
    follow(second, 1, 3)
    second.receive_request(10, 1, EndQuorumEpochRequest(1, 3, (2, 3)), "e")
    deadline = second.next_deadline()
    assert deadline is not None and 10 < deadline < 10 + 200


def test_leader_without_fetches_from_a_majority_resigns() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, log=log)
    machine.start(0)
    elect(machine, log, now_ms=1000)
    machine.receive_request(1100, 2, fetch(2, 0, 0, 1), "f")
    machine.poll(1000 + 299)
    assert machine.role == "Leader"  # a fetch from 2 (plus itself) is a majority of 3
    machine.poll(1100 + 300)
    assert machine.role == "Resigned"


def test_send_actions_carry_unique_request_ids() -> None:
    machine = make_machine(1, (1, 2, 3, 4, 5))
    machine.start(0)
    actions = machine.poll(1000)
    ids = [a.request_id for a in of_type(actions, Send)]
    assert len(ids) == 4 and len(set(ids)) == 4
