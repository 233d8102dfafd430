"""The default ``samsa broker``: a quorum of one elects itself at once and sends nothing."""

from __future__ import annotations

import pytest
from tests.raft.helpers import flush_all, make_machine, of_type

from samsa.raft import (
    FlushLog,
    HighWatermarkAdvanced,
    LeaderChange,
    LeaderChanged,
    MemoryRaftLog,
    NotLeaderError,
    PersistElectionState,
    Send,
)


def test_lone_voter_leads_on_start_without_messages() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, (1,), log=log)
    actions = machine.start(0)
    assert machine.role == "Leader" and machine.epoch == 1
    assert not of_type(actions, Send)
    assert of_type(actions, LeaderChanged)[-1] == LeaderChanged(1, 1)
    # The vote for itself and its leadership are persisted before it announces itself.
    persisted = of_type(actions, PersistElectionState)
    assert persisted[-1].election.leader_id == 1 and persisted[-1].election.epoch == 1
    assert actions.index(persisted[-1]) < actions.index(of_type(actions, LeaderChanged)[-1])
    assert isinstance(log.read(0, 1)[0].payload, LeaderChange)
    assert of_type(actions, FlushLog) == [FlushLog(1)]


def test_lone_voter_commits_each_append_once_flushed() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, (1,), log=log)
    machine.start(0)
    assert flush_all(machine, log, 0) == [HighWatermarkAdvanced(1)]
    last, actions = machine.append(5, [b"a", b"b"])
    assert last == 2 and actions == [FlushLog(3)]
    assert machine.high_watermark == 1  # not flushed yet: not committed
    assert flush_all(machine, log, 6) == [HighWatermarkAdvanced(3)]
    assert [e.payload for e in log.read(1, 10)] == [b"a", b"b"]


def test_lone_voter_restarts_as_leader_of_a_new_epoch() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, (1,), log=log)
    actions = machine.start(0)
    flush_all(machine, log, 0)
    machine.append(1, [b"x"])
    flush_all(machine, log, 1)
    stored = of_type(actions, PersistElectionState)[-1].election
    log.crash()
    again = make_machine(1, (1,), log=log, election=stored)
    restart_actions = again.start(10)
    assert again.role == "Leader" and again.epoch > 1
    assert not of_type(restart_actions, Send)
    flush_all(again, log, 10)
    assert again.high_watermark == log.end_offset == 3


def test_single_node_is_quiet_until_something_happens() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, (1,), log=log)
    machine.start(0)
    flush_all(machine, log, 0)
    assert machine.next_deadline() is None
    assert machine.poll(10_000) == []


def test_append_on_a_follower_raises_not_leader_with_a_hint() -> None:
    machine = make_machine(2, (1, 2, 3))
    machine.start(0)
    from tests.raft.helpers import follow

    follow(machine, 1, 4)
    with pytest.raises(NotLeaderError) as raised:
        machine.append(1, [b"x"])
    assert raised.value.leader_id == 1 and raised.value.epoch == 4


def test_append_takes_only_bytes() -> None:
    log = MemoryRaftLog()
    machine = make_machine(1, (1,), log=log)
    machine.start(0)
    with pytest.raises(TypeError):
        machine.append(1, [LeaderChange(1, (1,))])
