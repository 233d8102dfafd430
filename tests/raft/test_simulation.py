"""The deterministic simulator: thousands of seeds, replay, and proof that its checks bite.

``SAMSA_RAFT_SIM_SEEDS=20000 .venv/bin/pytest tests/raft/test_simulation.py -k many_seeds``
runs more seeds; ``SAMSA_RAFT_SIM_SLOW=1`` adds long fault phases.  A failure names
its seed and the command that replays it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.raft.sim import Scenario, Simulation, SimulationFailure, run_seed

from samsa.raft import OffsetAndEpoch, RaftMachine, SnapshotId
from samsa.raft.roles import ProspectiveState, UnattachedState
from samsa.raft.roles.leader import LeaderState

SEEDS = int(os.environ.get("SAMSA_RAFT_SIM_SEEDS", "2000"))
FIRST_SEED = int(os.environ.get("SAMSA_RAFT_SIM_FIRST_SEED", "0"))
BATCH = 100
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "first", range(FIRST_SEED, FIRST_SEED + SEEDS, BATCH), ids=lambda s: f"seeds{s}-{s + BATCH - 1}"
)
def test_many_seeds(first: int) -> None:
    """Every seed: safety at every step, then convergence once the faults stop."""
    for seed in range(first, min(first + BATCH, FIRST_SEED + SEEDS)):
        run_seed(seed)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SAMSA_RAFT_SIM_SLOW"), reason="set SAMSA_RAFT_SIM_SLOW=1")
@pytest.mark.parametrize("first", range(0, 1000, BATCH))
def test_long_fault_phases(first: int) -> None:
    for seed in range(first, first + BATCH):
        run_seed(seed, fault_ms=8000)


def test_a_seed_replays_the_same_trace() -> None:
    first = Simulation(Scenario.from_seed(7), trace=True).run()
    second = Simulation(Scenario.from_seed(7), trace=True).run()
    assert first.trace and first.trace == second.trace
    other = Simulation(Scenario.from_seed(8), trace=True).run()
    assert other.trace != first.trace


def test_replay_does_not_depend_on_hash_seeds() -> None:
    outputs = []
    for hash_seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        result = subprocess.run(
            [sys.executable, "-m", "tests.raft.sim", "--seed", "11", "--trace"],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and "ok (" in outputs[0]


def test_failure_names_the_seed_and_the_replay_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LeaderState, "maybe_update_high_watermark", lambda self: False)
    with pytest.raises(SimulationFailure) as failure:
        run_seed(3)
    assert "seed 3" in str(failure.value)
    assert ".venv/bin/python -m tests.raft.sim --seed 3" in str(failure.value)


def calm(seed: int, voters: int) -> Scenario:
    """A scenario without random faults, for scripted ones."""
    base = Scenario.from_seed(seed)
    return Scenario(
        **{
            **base.__dict__,
            "voters": voters,
            "observers": 0,
            "loss": 0.0,
            "duplicate": 0.0,
            "crash_weight": 0,
            "partition_weight": 0,
            "pause_weight": 0,
            "crash_mid_actions": 0.0,
            "voter_change_every_ms": 10**9,
            "fault_ms": 3000,
        }
    )


def isolate_and_return(seed: int) -> tuple[Simulation, list[tuple[int, int | None]]]:
    """Five voters; node 5 is cut off from 500 ms to 2500 ms; returns each node's (epoch, leader)
    just before the cut and at the end."""
    simulation = Simulation(calm(seed, voters=5))
    seen: list[tuple[int, int | None]] = []

    def cut() -> None:
        seen.append(leader_view(simulation))
        simulation.groups = {5: 1}

    simulation.at(500, cut)
    simulation.at(2500, lambda: setattr(simulation, "groups", {}))
    simulation.run()
    seen.append(leader_view(simulation))
    return simulation, seen


def leader_view(simulation: Simulation) -> tuple[int, int | None]:
    machine = simulation.nodes[1].machine
    return machine.epoch, machine.leader_id


def test_pre_vote_keeps_a_returning_node_from_disrupting_the_quorum() -> None:
    for seed in range(5):
        simulation, (before, after) = isolate_and_return(seed)
        assert before == after, f"seed {seed}: the quorum changed epoch: {before} -> {after}"
        assert simulation.nodes[5].machine.epoch == before[0]


def test_without_pre_vote_the_returning_node_forces_an_election(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control for the test above: skip the pre-vote and the same scenario disrupts."""
    original = RaftMachine._to_prospective

    def straight_to_candidate(self: RaftMachine, now_ms: int) -> None:
        original(self, now_ms)
        if isinstance(self._state, ProspectiveState):
            self._to_candidate(now_ms)

    monkeypatch.setattr(RaftMachine, "_to_prospective", straight_to_candidate)
    disrupted = 0
    for seed in range(5):
        _, (before, after) = isolate_and_return(seed)
        disrupted += before[0] != after[0]
    assert disrupted


# -- each check can fail: a deliberately broken rule is caught ---------------------------


def first_failure(seeds: range) -> SimulationFailure:
    for seed in seeds:
        try:
            run_seed(seed)
        except SimulationFailure as failure:
            return failure
    raise AssertionError(f"no seed in {seeds} caught the broken rule")


def test_catches_a_high_watermark_counting_older_epochs(monkeypatch: pytest.MonkeyPatch) -> None:
    def count_any_epoch(self: LeaderState) -> bool:
        offsets = sorted((s.end_offset or 0 for s in self.voter_states.values()), reverse=True)
        candidate = offsets[len(offsets) // 2] if offsets else 0
        if candidate <= 0 or (self.high_watermark is not None and candidate <= self.high_watermark):
            return False
        self.high_watermark = candidate
        return True

    monkeypatch.setattr(LeaderState, "maybe_update_high_watermark", count_any_epoch)
    assert "lacks" in str(first_failure(range(300)))


def test_catches_votes_granted_without_the_log_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OffsetAndEpoch, "is_at_least", lambda self, other: True)
    assert "lacks" in str(first_failure(range(300)))


def test_catches_two_votes_in_one_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    def grant_anyone(
        self: object, candidate: int, directory: object, up_to_date: bool, pre: bool
    ) -> bool:
        return up_to_date

    monkeypatch.setattr(UnattachedState, "can_grant_vote", grant_anyone)
    monkeypatch.setattr(ProspectiveState, "can_grant_vote", grant_anyone)
    assert "two leaders in epoch" in str(first_failure(range(300)))


def test_catches_a_leader_counting_unflushed_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    original: Callable[..., range] = RaftMachine._append_as_leader

    def count_before_flush(self: RaftMachine, now_ms: int, payloads: list[bytes]) -> range:
        offsets = original(self, now_ms, payloads)
        leader = self._state
        assert isinstance(leader, LeaderState)
        self._after_leader_progress(now_ms, leader.update_local(self._log.end_offset))
        return offsets

    monkeypatch.setattr(RaftMachine, "_append_as_leader", count_before_flush)
    assert "lacks" in str(first_failure(range(300)))


def test_catches_a_high_watermark_that_does_not_advance(monkeypatch: pytest.MonkeyPatch) -> None:
    from samsa.raft.actions import HighWatermarkAdvanced

    def report_again(self: RaftMachine, offset: int) -> None:
        if offset >= self._high_watermark:
            self._high_watermark = offset
            self._emit(HighWatermarkAdvanced(offset))

    monkeypatch.setattr(RaftMachine, "_advance_high_watermark", report_again)
    assert "high watermark went from" in str(first_failure(range(300)))


def test_catches_a_snapshot_named_after_the_wrong_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    original = RaftMachine.create_snapshot

    def off_by_one(self: RaftMachine, end_offset: int, data: bytes) -> SnapshotId:
        if end_offset - 1 <= self._log.start_offset:
            return original(self, end_offset, data)
        wrong = SnapshotId(end_offset - 1, self._log.read(end_offset - 2, 1)[0].epoch)
        self._log.create_snapshot(wrong, None, data)
        return wrong

    monkeypatch.setattr(RaftMachine, "create_snapshot", off_by_one)
    assert "snapshot" in str(first_failure(range(300)))


def test_catches_a_quorum_that_never_recovers(monkeypatch: pytest.MonkeyPatch) -> None:
    original = UnattachedState.can_grant_vote

    def refuse_pre_votes(
        self: UnattachedState, candidate: int, directory: object, up: bool, pre: bool
    ) -> bool:
        return False if pre else original(self, candidate, directory, up, pre)

    monkeypatch.setattr(UnattachedState, "can_grant_vote", refuse_pre_votes)
    assert "no convergence" in str(first_failure(range(300)))
