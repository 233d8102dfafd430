"""Small helpers to drive one ``RaftMachine`` by hand in unit tests."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any, TypeVar

from samsa.raft import (
    Action,
    BeginQuorumEpochRequest,
    ElectionState,
    FetchRequest,
    FlushLog,
    MemoryRaftLog,
    QuorumConfig,
    RaftMachine,
    Respond,
    Send,
    VoteRequest,
    VoteResponse,
    VoterSet,
)
from samsa.raft.errors import ErrorCode

T = TypeVar("T")

CONFIG = QuorumConfig(
    election_timeout_ms=100,
    fetch_timeout_ms=200,
    election_backoff_max_ms=100,
    request_timeout_ms=200,
    retry_backoff_ms=5,
    fetch_max_wait_ms=50,
)


def make_machine(
    node_id: int = 1,
    voters: Sequence[int] = (1, 2, 3),
    *,
    log: MemoryRaftLog | None = None,
    dynamic: bool = False,
    election: ElectionState | None = None,
    seed: int = 0,
    config: QuorumConfig = CONFIG,
    bootstrap_voters: VoterSet | None = None,
    bootstrap_servers: int = 0,
) -> RaftMachine:
    """A machine of a static quorum of ``voters`` (or a dynamic one bootstrapped with them)."""
    voter_set = VoterSet.of(voters)
    if dynamic:
        servers = tuple(f"node{i}:9093" for i in range(bootstrap_servers))
        config = dataclasses.replace(config, static_voters=None, bootstrap_servers=servers)
        if bootstrap_voters is None and node_id in voter_set.ids:
            bootstrap_voters = voter_set
    else:
        config = dataclasses.replace(config, static_voters=voter_set)
    return RaftMachine(
        node_id=node_id,
        config=config,
        log=log if log is not None else MemoryRaftLog(),
        random_source=random.Random(seed),
        election_state=election,
        bootstrap_voters=bootstrap_voters,
    )


def of_type(actions: Sequence[Action], kind: type[T]) -> list[T]:
    return [a for a in actions if isinstance(a, kind)]


def sent(actions: Sequence[Action], message_type: type[T]) -> list[tuple[Send, T]]:
    """``(send, message)`` pairs for messages of ``message_type``."""
    return [(a, a.message) for a in of_type(actions, Send) if isinstance(a.message, message_type)]


def responded(actions: Sequence[Action], reply_to: object) -> Any:
    """The response sent for ``reply_to`` (exactly one)."""
    answers = [a.message for a in of_type(actions, Respond) if a.reply_to == reply_to]
    assert len(answers) == 1, actions
    return answers[0]


def flush_all(machine: RaftMachine, log: MemoryRaftLog, now_ms: int) -> list[Action]:
    log.flush(log.end_offset)
    return machine.flushed(now_ms, log.end_offset)


def elect(machine: RaftMachine, log: MemoryRaftLog, now_ms: int = 1000) -> list[Action]:
    """Make a started voter the leader: time out, win the pre-vote, win the vote, flush."""
    all_actions = machine.poll(now_ms)
    assert machine.role == "Prospective", machine.role
    for send in of_type(list(all_actions), Send):
        if machine.role != "Prospective":
            break
        granted = VoteResponse(ErrorCode.NONE, None, machine.epoch, True)
        all_actions += machine.receive_response(now_ms, send.request_id, granted)
    assert machine.role == "Candidate", machine.role
    votes = [s for s, request in sent(all_actions, VoteRequest) if not request.pre_vote]
    for send in votes:
        if machine.role != "Candidate":
            break
        granted = VoteResponse(ErrorCode.NONE, None, machine.epoch, True)
        all_actions += machine.receive_response(now_ms, send.request_id, granted)
    assert machine.role == "Leader", machine.role
    all_actions += flush_all(machine, log, now_ms)
    return all_actions


def follow(machine: RaftMachine, leader_id: int, epoch: int, now_ms: int = 0) -> list[Action]:
    """Make ``machine`` a follower of ``leader_id`` in ``epoch`` (BeginQuorumEpoch)."""
    actions = machine.receive_request(
        now_ms, leader_id, BeginQuorumEpochRequest(leader_id, epoch), ("begin", leader_id, epoch)
    )
    assert machine.role == "Follower" and machine.leader_id == leader_id
    return actions


def fetch(
    replica_id: int,
    fetch_offset: int,
    last_fetched_epoch: int,
    epoch: int,
    max_wait_ms: int = 0,
    high_watermark: int = -1,
) -> FetchRequest:
    return FetchRequest(
        replica_id,
        fetch_offset,
        last_fetched_epoch,
        epoch,
        max_wait_ms,
        1 << 20,
        high_watermark=high_watermark,
    )


class Wire:
    """Synchronous in-memory network for a few machines (h11's ConnectionPair, for Raft).

    ``deliver`` runs the actions one machine returned: sends go to their target at
    once, answers come back, flushes complete at once, until nothing is in flight.
    ``drop`` lists node ids whose traffic is lost.
    """

    def __init__(
        self, nodes: dict[int, tuple[RaftMachine, MemoryRaftLog]], bootstrap: Sequence[int] = ()
    ) -> None:
        self.nodes = nodes
        self.bootstrap = list(bootstrap)  # node ids behind bootstrap ids -2, -3, ...
        self.drop: set[int] = set()
        self.trace: list[str] = []
        self.seen: dict[int, list[Action]] = {node_id: [] for node_id in nodes}

    def start(self, now_ms: int = 0) -> None:
        for node_id, (machine, _) in sorted(self.nodes.items()):
            self.deliver(node_id, machine.start(now_ms), now_ms)

    def poll(self, now_ms: int) -> None:
        for node_id, (machine, _) in sorted(self.nodes.items()):
            self.deliver(node_id, machine.poll(now_ms), now_ms)

    def deliver(self, node_id: int, actions: list[Action], now_ms: int) -> None:
        queue = [(node_id, action) for action in actions]
        while queue:
            source, action = queue.pop(0)
            self.seen[source].append(action)
            machine, log = self.nodes[source]
            if isinstance(action, Send):
                target = action.destination_id
                if target < 0:
                    target = self.bootstrap[-2 - target]
                if target in self.drop or source in self.drop or target not in self.nodes:
                    continue
                self.trace.append(f"{source}->{target} {type(action.message).__name__}")
                reply = (source, action.request_id)
                queue += [
                    (target, a)
                    for a in self.nodes[target][0].receive_request(
                        now_ms, source, action.message, reply
                    )
                ]
            elif (
                isinstance(action, Respond)
                and isinstance(action.reply_to, tuple)
                and len(action.reply_to) == 2
            ):
                origin, request_id = action.reply_to
                if origin in self.drop or source in self.drop or origin not in self.nodes:
                    continue
                self.trace.append(f"{source}->{origin} {type(action.message).__name__}")
                queue += [
                    (origin, a)
                    for a in self.nodes[origin][0].receive_response(
                        now_ms, request_id, action.message
                    )
                ]
            elif isinstance(action, FlushLog):
                log.flush(action.up_to_offset)
                queue += [(source, a) for a in machine.flushed(now_ms, action.up_to_offset)]
