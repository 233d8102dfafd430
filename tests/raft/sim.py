"""A deterministic simulator for ``RaftMachine`` (Kafka's RaftEventSimulationTest, in small).

One seed decides everything: the cluster shape (voters, observers, static or
dynamic quorum), the network (loss, duplication, delay, hence reordering), the
faults (partitions that heal, crash-restarts that may lose unflushed entries,
crashes in the middle of an action list, pauses), client appends and voter
changes.  A single ``random.Random(seed)`` and a time-ordered event queue with a
sequence number for ties drive the run, so a seed replays the same event trace.

Checked at every step (``SafetyChecker``):

* at most one leader per epoch, across all time;
* a new leader's log holds every committed entry;
* entries below the high watermark a node reports are the committed entries
  (the first node to report an offset fixes the global committed log);
* each node's state machine applies exactly the committed entries, in order,
  and a snapshot it loads equals the committed state at the snapshot's offset;
* a node's high watermark never decreases within one incarnation, and a node
  never truncates below it.

After the faults stop and the network heals, every node (voters and observers)
must reach the same high watermark and state within a bounded simulated time.

Replay one seed with ``.venv/bin/python -m tests.raft.sim --seed N [--trace]``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samsa.raft import (
    Action,
    ElectionState,
    FlushLog,
    HighWatermarkAdvanced,
    LeaderChanged,
    LoadSnapshot,
    MemoryRaftLog,
    NotLeaderError,
    PersistElectionState,
    QuorumConfig,
    RaftMachine,
    Respond,
    Send,
    VoterSet,
)
from samsa.raft.records import Entry

__all__ = ["Scenario", "Simulation", "SimulationFailure", "run_seed"]


class SimulationFailure(AssertionError):
    """A safety or liveness check failed; the message names the seed and how to replay it."""


@dataclass(frozen=True)
class Scenario:
    """Everything a seed decides up front (the rest is drawn while running)."""

    seed: int
    voters: int
    observers: int
    dynamic: bool
    loss: float
    duplicate: float
    min_delay_ms: int
    max_delay_ms: int
    max_flush_ms: int
    fault_ms: int
    converge_ms: int
    chaos_every_ms: int
    crash_weight: int
    partition_weight: int
    pause_weight: int
    lose_unflushed: float
    crash_mid_actions: float
    append_every_ms: int
    voter_change_every_ms: int
    snapshot_every: int
    delete_prefix: float
    fetch_max_entries: int

    @classmethod
    def from_seed(cls, seed: int, *, fault_ms: int = 1500) -> Scenario:
        rng = random.Random(seed * 7919 + 1)
        voters = rng.choice((1, 2, 3, 3, 3, 4, 5, 5))
        return cls(
            seed=seed,
            voters=voters,
            observers=rng.choice((0, 1, 1, 2)),
            dynamic=rng.random() < 0.6,
            loss=rng.choice((0.0, 0.01, 0.05, 0.15)),
            duplicate=rng.choice((0.0, 0.02, 0.1)),
            min_delay_ms=rng.randint(0, 2),
            max_delay_ms=rng.randint(3, 25),
            max_flush_ms=rng.choice((0, 2, 10)),
            fault_ms=fault_ms,
            converge_ms=10000,
            chaos_every_ms=rng.randint(40, 200),
            crash_weight=rng.randint(0, 4),
            partition_weight=rng.randint(0, 4),
            pause_weight=rng.randint(0, 2),
            lose_unflushed=rng.choice((0.0, 0.5, 1.0)),
            crash_mid_actions=rng.choice((0.0, 0.0, 0.01)),
            append_every_ms=rng.randint(10, 60),
            voter_change_every_ms=rng.choice((150, 300, 10**9)),
            snapshot_every=rng.choice((3, 8, 20, 10**9)),
            delete_prefix=rng.choice((0.0, 0.5, 1.0)),
            fetch_max_entries=rng.choice((1, 2, 3, 5, 50)),
        )

    def quorum_config(self, static_voters: VoterSet | None) -> QuorumConfig:
        """Kafka's defaults scaled down 10x, so a run covers many elections."""
        return QuorumConfig(
            election_timeout_ms=100,
            fetch_timeout_ms=200,
            election_backoff_max_ms=100,
            request_timeout_ms=200,
            retry_backoff_ms=5,
            fetch_max_wait_ms=50,
            fetch_max_entries=self.fetch_max_entries,
            fetch_snapshot_max_bytes=64,
            static_voters=static_voters,
        )


@dataclass
class SimNode:
    """One process: its machine (rebuilt on restart), its disk, its state machine."""

    node_id: int
    log: MemoryRaftLog
    machine: RaftMachine
    disk_election: ElectionState | None = None
    alive: bool = True
    incarnation: int = 0
    paused_until: int = 0
    poll_at: int | None = None
    # The state machine above Raft: a dict built from committed payloads.
    state: dict[str, str] = field(default_factory=dict)
    applied: int = 0
    last_snapshot: int = 0
    reported_hw: int = 0
    last_poll_ms: int = -1
    polls_at_same_ms: int = 0


@dataclass(frozen=True)
class ReplyTo:
    """The opaque token a request carries so its response finds its way back."""

    node_id: int
    incarnation: int
    request_id: int


@dataclass(frozen=True)
class ClientReply:
    operation: str
    voter_id: int


def apply_payload(state: dict[str, str], payload: object) -> None:
    if isinstance(payload, bytes):
        key, _, value = payload.decode().partition("=")
        state[key] = value


def encode_state(state: dict[str, str]) -> bytes:
    return json.dumps(state, sort_keys=True).encode()


class SafetyChecker:
    """The global view: committed entries, leaders per epoch (see the module doc)."""

    def __init__(self, fail: Callable[[str], None]) -> None:
        self.fail = fail
        self.committed: list[Entry] = []
        # The epoch in which each committed entry was first known committed: the
        # epoch of the leader that computed the high watermark covering it.
        self.commit_epoch: list[int] = []
        self.leaders: dict[int, int] = {}
        self.state_at: dict[int, dict[str, str]] = {0: {}}

    def check_entries(self, node: SimNode, start: int, end: int) -> None:
        """The node's entries in [start, end) must be the committed ones (appending new ones)."""
        log = node.log
        start = max(start, log.start_offset)
        if start >= end:
            return
        if log.end_offset < end:
            self.fail(
                f"node {node.node_id} reports high watermark {end} beyond its log end {log.end_offset}"
            )
        committed = self.committed
        for entry in log.read(start, end - start):
            offset = entry.offset
            if offset < len(committed):
                if committed[offset] != entry:
                    self.fail(
                        f"node {node.node_id} has {entry} at committed offset {offset}, "
                        f"committed is {committed[offset]}"
                    )
            elif offset == len(committed):
                committed.append(entry)
                self.commit_epoch.append(node.machine.epoch)
            else:
                self.fail(f"gap in the committed log before {offset}")

    def on_high_watermark(self, node: SimNode, hw: int) -> None:
        if hw <= node.reported_hw:
            self.fail(f"node {node.node_id} high watermark went from {node.reported_hw} to {hw}")
        if len(self.committed) < node.log.start_offset and hw > len(self.committed):
            self.fail(f"node {node.node_id} committed up to {hw} from a snapshot nobody committed")
        self.check_entries(node, node.reported_hw, hw)
        node.reported_hw = hw

    def on_leader(self, node: SimNode, epoch: int) -> None:
        """Election safety, and Leader Completeness: entries committed in earlier epochs."""
        previous = self.leaders.setdefault(epoch, node.node_id)
        if previous != node.node_id:
            self.fail(f"two leaders in epoch {epoch}: {previous} and {node.node_id}")
        log = node.log
        for offset, entry in enumerate(self.committed):
            if self.commit_epoch[offset] >= epoch or offset < log.start_offset:
                continue
            if offset >= log.end_offset or log.read(offset, 1)[0] != entry:
                self.fail(
                    f"leader {node.node_id} of epoch {epoch} lacks {entry}, committed in epoch "
                    f"{self.commit_epoch[offset]} (its log ends at {log.end_offset})"
                )

    def state_at_offset(self, offset: int) -> dict[str, str]:
        if offset > len(self.committed):
            self.fail(f"state asked at {offset}, only {len(self.committed)} entries are committed")
        best = max(o for o in self.state_at if o <= offset)
        state = dict(self.state_at[best])
        for entry in self.committed[best:offset]:
            apply_payload(state, entry.payload)
        self.state_at[offset] = dict(state)
        return state


class Simulation:
    """Runs one scenario; ``run()`` raises ``SimulationFailure`` on any violation."""

    def __init__(self, scenario: Scenario, *, trace: bool = False) -> None:
        self.scenario = scenario
        self.rng = random.Random(scenario.seed)
        self.now = 0
        self._queue: list[tuple[int, int, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = 0
        self.trace: list[str] | None = [] if trace else None
        self.checker = SafetyChecker(self.fail)
        self.faults_active = True
        self.groups: dict[int, int] = {}
        self.appended = 0
        self.client_results: list[tuple[str, int, int]] = []
        self.steps = 0
        self.deadline_ms = 0
        voter_ids = list(range(1, scenario.voters + 1))
        observer_ids = list(range(scenario.voters + 1, scenario.voters + scenario.observers + 1))
        self.initial_voters = VoterSet.of(voter_ids)
        self.bootstrap_ids = voter_ids
        static = None if scenario.dynamic else self.initial_voters
        self.config = scenario.quorum_config(static)
        if not scenario.dynamic:
            observer_config = self.config
        else:
            observer_config = QuorumConfig(
                **{
                    **{f: getattr(self.config, f) for f in self.config.__dataclass_fields__},
                    "bootstrap_servers": tuple(f"node{n}:9093" for n in voter_ids),
                }
            )
        self.observer_config = observer_config
        self.nodes: dict[int, SimNode] = {}
        for node_id in voter_ids + observer_ids:
            log = MemoryRaftLog()
            self.nodes[node_id] = SimNode(node_id, log, self._new_machine(node_id, log, None, 0))

    # -- building ----------------------------------------------------------------------

    def _new_machine(
        self, node_id: int, log: MemoryRaftLog, election: ElectionState | None, incarnation: int
    ) -> RaftMachine:
        is_initial_voter = node_id in self.initial_voters.ids
        config = self.config if is_initial_voter else self.observer_config
        bootstrap = self.initial_voters if self.scenario.dynamic and is_initial_voter else None
        return RaftMachine(
            node_id=node_id,
            config=config,
            log=log,
            random_source=random.Random(
                self.scenario.seed * 1_000_003 + node_id * 1009 + incarnation
            ),
            election_state=election,
            bootstrap_voters=bootstrap,
        )

    def fail(self, message: str) -> None:
        raise SimulationFailure(
            f"seed {self.scenario.seed} at {self.now} ms: {message}\n"
            f"replay: .venv/bin/python -m tests.raft.sim --seed {self.scenario.seed} --trace"
        )

    def _note(self, text: str) -> None:
        if self.trace is not None:
            self.trace.append(f"{self.now:>6} {text}")

    # -- event queue -------------------------------------------------------------------

    def at(self, time_ms: int, handler: Callable[..., None], *args: Any) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (time_ms, self._seq, handler, args))

    def run(self) -> Simulation:
        scenario = self.scenario
        for node in self.nodes.values():
            self._call(node, lambda n: n.machine.start(self.now), "start")
        self.at(scenario.chaos_every_ms, self._chaos)
        self.at(scenario.append_every_ms, self._client_append)
        self.at(scenario.voter_change_every_ms, self._voter_change)
        self.at(scenario.fault_ms, self._heal_everything)
        self.deadline_ms = scenario.fault_ms + scenario.converge_ms
        next_convergence_check = scenario.fault_ms
        try:
            while self._queue:
                time_ms, _, handler, args = heapq.heappop(self._queue)
                if time_ms > self.deadline_ms:
                    break
                self.now = time_ms
                self.steps += 1
                handler(*args)
                if not self.faults_active and self.now >= next_convergence_check:
                    next_convergence_check = self.now + 20
                    if self._converged():
                        return self
        except SimulationFailure:
            raise
        except Exception as exc:  # a machine invariant broke, or the machine crashed
            self.fail(f"{type(exc).__name__}: {exc}")
        if not self.faults_active and self._converged():
            return self
        self.fail(
            f"no convergence {self.deadline_ms - scenario.fault_ms} ms after healing: {self._describe()}"
        )
        return self

    # -- node calls --------------------------------------------------------------------

    def _call(
        self,
        node: SimNode,
        call: Callable[[SimNode], list[Action]],
        what: str,
        incarnation: int | None = None,
    ) -> None:
        """Run one machine call on a live node and execute its actions in order.

        A paused node gets the call when it resumes, unless it crashed meanwhile.
        """
        if not node.alive or (incarnation is not None and incarnation != node.incarnation):
            return
        if node.paused_until > self.now:
            self.at(node.paused_until, self._call, node, call, what, node.incarnation)
            return
        incarnation_now = node.incarnation
        actions = call(node)
        self._note(
            f"n{node.node_id} {what} -> {len(actions)} ({node.machine.role} e{node.machine.epoch})"
        )
        self._execute(node, actions)
        if node.alive and node.incarnation == incarnation_now:
            self._check_node(node)

    def _check_node(self, node: SimNode) -> None:
        """Per-step invariants of the node that just ran."""
        machine = node.machine
        if machine.high_watermark > node.log.end_offset:
            self.fail(f"node {node.node_id} high watermark {machine.high_watermark} beyond its log")
        if machine.high_watermark != node.reported_hw and node.reported_hw != 0:
            self.fail(
                f"node {node.node_id} reported {node.reported_hw}, knows {machine.high_watermark}"
            )
        if node.applied < node.reported_hw:
            self.fail(f"node {node.node_id} applied {node.applied} of {node.reported_hw} committed")

    def _execute(self, node: SimNode, actions: list[Action]) -> None:
        scenario = self.scenario
        incarnation = node.incarnation
        for action in actions:
            if self._crash_mid_actions():
                self._crash(node)
                return
            if isinstance(action, Send):
                self._send(node, action)
            elif isinstance(action, Respond):
                self._respond(node, action)
            elif isinstance(action, PersistElectionState):
                node.disk_election = action.election
            elif isinstance(action, FlushLog):
                delay = self.rng.randint(0, scenario.max_flush_ms)
                self.at(self.now + delay, self._flush_done, node, incarnation, action.up_to_offset)
            elif isinstance(action, HighWatermarkAdvanced):
                self.checker.on_high_watermark(node, action.offset)
                self._apply(node)
            elif isinstance(action, LeaderChanged):
                self._leader_changed(node, action)
            elif isinstance(action, LoadSnapshot):
                self._load_snapshot(node, action)
            else:
                self.fail(f"unknown action {action!r}")
        self._schedule_poll(node)

    def _crash_mid_actions(self) -> bool:
        """Whether to crash the node before its next action (a seeded draw)."""
        chance = self.scenario.crash_mid_actions
        return bool(self.faults_active and chance and self.rng.random() < chance)

    def _leader_changed(self, node: SimNode, action: LeaderChanged) -> None:
        if action.leader_id == node.node_id and node.machine.is_leader:
            self.checker.on_leader(node, action.epoch)

    def _schedule_poll(self, node: SimNode) -> None:
        deadline = node.machine.next_deadline()
        if deadline is None:
            return
        deadline = max(deadline, self.now)
        if node.poll_at is not None and node.poll_at <= deadline and node.poll_at >= self.now:
            return
        node.poll_at = deadline
        self.at(deadline, self._poll, node, node.incarnation)

    def _poll(self, node: SimNode, incarnation: int) -> None:
        if incarnation != node.incarnation or not node.alive:
            return
        if self.now == node.last_poll_ms:
            node.polls_at_same_ms += 1
            if node.polls_at_same_ms > 50:
                self.fail(f"node {node.node_id} asks to be polled again and again at {self.now} ms")
        else:
            node.last_poll_ms, node.polls_at_same_ms = self.now, 0
        if node.paused_until > self.now:
            self.at(node.paused_until, self._poll, node, incarnation)
            return
        if node.poll_at is not None and node.poll_at > self.now:
            return
        node.poll_at = None
        self._call(node, lambda n: n.machine.poll(self.now), "poll")

    def _flush_done(self, node: SimNode, incarnation: int, offset: int) -> None:
        if incarnation != node.incarnation or not node.alive:
            return
        node.log.flush(offset)
        self._call(node, lambda n: n.machine.flushed(self.now, offset), f"flushed {offset}")

    # -- the state machine above Raft --------------------------------------------------

    def _apply(self, node: SimNode) -> None:
        hw = node.reported_hw
        if node.applied < node.log.start_offset:
            self.fail(
                f"node {node.node_id} must load a snapshot before applying from {node.applied}"
            )
        committed = self.checker.committed
        while node.applied < hw:
            for entry in node.log.read(node.applied, hw - node.applied):
                if committed[entry.offset] != entry:
                    self.fail(
                        f"node {node.node_id} applies {entry}, committed is {committed[entry.offset]}"
                    )
                apply_payload(node.state, entry.payload)
                node.applied = entry.offset + 1
        if node.applied - node.last_snapshot >= self.scenario.snapshot_every:
            node.machine.create_snapshot(node.applied, encode_state(node.state))
            node.last_snapshot = node.applied
            if self.rng.random() < self.scenario.delete_prefix:
                node.machine.delete_before_snapshot()

    def _load_snapshot(self, node: SimNode, action: LoadSnapshot) -> None:
        snapshot = node.log.load_snapshot(action.snapshot_id)
        if snapshot is None:
            self.fail(f"node {node.node_id} told to load missing snapshot {action.snapshot_id}")
            return
        state = json.loads(snapshot.data)
        expected = self.checker.state_at_offset(action.snapshot_id.offset)
        if state != expected:
            self.fail(
                f"node {node.node_id} snapshot {action.snapshot_id} holds {state}, committed {expected}"
            )
        node.state = state
        node.applied = node.last_snapshot = action.snapshot_id.offset

    # -- network -----------------------------------------------------------------------

    def _connected(self, a: int, b: int) -> bool:
        return self.groups.get(a, 0) == self.groups.get(b, 0)

    def _delay(self) -> int:
        return self.rng.randint(self.scenario.min_delay_ms, self.scenario.max_delay_ms)

    def _lost(self) -> bool:
        return self.faults_active and self.rng.random() < self.scenario.loss

    def _send(self, node: SimNode, action: Send) -> None:
        destination = action.destination_id
        if destination < 0:
            destination = self.bootstrap_ids[-2 - destination]
        reply = ReplyTo(node.node_id, node.incarnation, action.request_id)
        if destination not in self.nodes or self._lost():
            return
        copies = 2 if self.faults_active and self.rng.random() < self.scenario.duplicate else 1
        for _ in range(copies):
            self.at(
                self.now + self._delay(),
                self._deliver_request,
                destination,
                node.node_id,
                reply,
                action,
            )

    def _deliver_request(self, destination: int, source: int, reply: ReplyTo, action: Send) -> None:
        node = self.nodes[destination]
        if not node.alive or not self._connected(source, destination):
            if node.alive is False and self.rng.random() < 0.5:
                self.at(self.now + self._delay(), self._fail_request, reply)
            return
        self._call(
            node,
            lambda n: n.machine.receive_request(self.now, source, action.message, reply),
            f"<- {type(action.message).__name__} from n{source}",
        )

    def _fail_request(self, reply: ReplyTo) -> None:
        node = self.nodes[reply.node_id]
        if node.incarnation == reply.incarnation:
            self._call(
                node,
                lambda n: n.machine.request_failed(self.now, reply.request_id),
                "request failed",
            )

    def _respond(self, node: SimNode, action: Respond) -> None:
        reply = action.reply_to
        if isinstance(reply, ClientReply):
            self.client_results.append(
                (reply.operation, reply.voter_id, int(action.message.error_code))
            )
            return
        assert isinstance(reply, ReplyTo)
        if self._lost() or not self._connected(node.node_id, reply.node_id):
            return
        copies = 2 if self.faults_active and self.rng.random() < self.scenario.duplicate else 1
        for _ in range(copies):
            self.at(self.now + self._delay(), self._deliver_response, node.node_id, reply, action)

    def _deliver_response(self, source: int, reply: ReplyTo, action: Respond) -> None:
        node = self.nodes[reply.node_id]
        if node.incarnation != reply.incarnation or not self._connected(source, reply.node_id):
            return
        self._call(
            node,
            lambda n: n.machine.receive_response(self.now, reply.request_id, action.message),
            f"<- {type(action.message).__name__} from n{source}",
        )

    # -- faults ------------------------------------------------------------------------

    def _chaos(self) -> None:
        if not self.faults_active:
            return
        scenario = self.scenario
        self.at(self.now + scenario.chaos_every_ms, self._chaos)
        weights = (scenario.crash_weight, scenario.partition_weight, scenario.pause_weight, 3)
        choice = self.rng.choices(("crash", "partition", "pause", "calm"), weights)[0]
        node = self.nodes[self.rng.choice(sorted(self.nodes))]
        if choice == "crash" and node.alive:
            self._crash(node)
        elif choice == "partition":
            if self.groups and self.rng.random() < 0.5:
                self.groups = {}
                self._note("heal partition")
            else:
                ids = sorted(self.nodes)
                if self.rng.random() < 0.5:
                    self.groups = {node.node_id: 1}
                else:
                    self.groups = {n: self.rng.randint(0, 1) for n in ids}
                self._note(f"partition {self.groups}")
        elif choice == "pause" and node.alive:
            node.paused_until = self.now + self.rng.randint(50, 400)
            self._note(f"pause n{node.node_id} until {node.paused_until}")

    def _crash(self, node: SimNode) -> None:
        node.alive = False
        node.incarnation += 1
        node.poll_at = None
        node.paused_until = 0
        lose = self.rng.random() < self.scenario.lose_unflushed
        node.log.crash(lose_unflushed=lose)
        self._note(f"crash n{node.node_id} (lose unflushed: {lose})")
        self.at(self.now + self.rng.randint(20, 300), self._restart, node, node.incarnation)

    def _restart(self, node: SimNode, incarnation: int) -> None:
        if node.alive or node.incarnation != incarnation:
            return
        node.alive = True
        node.machine = self._new_machine(
            node.node_id, node.log, node.disk_election, node.incarnation
        )
        node.state, node.applied, node.last_snapshot, node.reported_hw = {}, 0, 0, 0
        self._note(f"restart n{node.node_id}")
        self._start_restarted(node)

    def _start_restarted(self, node: SimNode) -> None:
        """Start the restarted node's fresh Raft machine (the cluster simulator
        starts the node's processes around it)."""
        self._call(node, lambda n: n.machine.start(self.now), "start")

    def _heal_everything(self) -> None:
        """Stop the faults; the quorum must converge within a bound that grows with the
        backlog a lagging replica may have to fetch (fetch_max_entries per round trip)."""
        self.faults_active = False
        self.groups = {}
        scenario = self.scenario
        backlog = max(node.log.end_offset for node in self.nodes.values())
        round_trip_ms = 2 * scenario.max_delay_ms + scenario.max_flush_ms + 5
        self.deadline_ms = (
            self.now + scenario.converge_ms + backlog // scenario.fetch_max_entries * round_trip_ms
        )
        self._note("heal everything")
        for node in self.nodes.values():
            node.paused_until = 0
            if not node.alive:
                self._restart(node, node.incarnation)
            else:
                self._schedule_poll(node)

    # -- clients -----------------------------------------------------------------------

    def _leaders(self) -> list[SimNode]:
        return [n for n in self.nodes.values() if n.alive and n.machine.is_leader]

    def _client_append(self) -> None:
        if not self.faults_active:
            return
        self.at(self.now + self.scenario.append_every_ms, self._client_append)
        candidates = self._leaders() or [self.nodes[self.rng.choice(sorted(self.nodes))]]
        node = candidates[self.rng.randrange(len(candidates))]
        if not node.alive or node.paused_until > self.now:
            return
        payloads = []
        for _ in range(self.rng.randint(1, 3)):
            self.appended += 1
            payloads.append(f"k{self.rng.randint(0, 9)}=v{self.appended}".encode())

        def append(n: SimNode) -> list[Action]:
            try:
                return n.machine.append(self.now, payloads)[1]
            except NotLeaderError:
                return []

        self._call(node, append, f"append {len(payloads)}")

    def _voter_change(self) -> None:
        if not self.faults_active or not self.scenario.dynamic:
            return
        self.at(self.now + self.scenario.voter_change_every_ms, self._voter_change)
        leaders = self._leaders()
        if not leaders:
            return
        leader = leaders[0]
        voters = leader.machine.voter_set
        non_voters = [n for n in sorted(self.nodes) if not voters.is_voter(n)]
        if non_voters and (len(voters) < 3 or self.rng.random() < 0.5):
            voter_id = self.rng.choice(non_voters)
            self._call(
                leader,
                lambda n: n.machine.add_voter(
                    self.now, voter_id, None, (), ClientReply("add", voter_id)
                ),
                f"add voter {voter_id}",
            )
        elif len(voters) > 1:
            voter_id = self.rng.choice(voters.ids)
            self._call(
                leader,
                lambda n: n.machine.remove_voter(
                    self.now, voter_id, None, ClientReply("remove", voter_id)
                ),
                f"remove voter {voter_id}",
            )

    # -- convergence -------------------------------------------------------------------

    def _converged(self) -> bool:
        leaders = self._leaders()
        if len(leaders) != 1:
            return False
        leader = leaders[0]
        end = leader.log.end_offset
        if leader.machine.high_watermark != end:
            return False
        for node in self.nodes.values():
            if not node.alive or node.machine.high_watermark != end or node.applied != end:
                return False
        expected = self.checker.state_at_offset(end)
        for node in self.nodes.values():
            if node.state != expected:
                self.fail(
                    f"node {node.node_id} converged to {node.state}, committed state is {expected}"
                )
        return True

    def _describe(self) -> str:
        parts = []
        for node in self.nodes.values():
            m = node.machine
            parts.append(
                f"n{node.node_id}[{'up' if node.alive else 'down'} {m.role} e{m.epoch} "
                f"leader={m.leader_id} hw={m.high_watermark} end={node.log.end_offset} "
                f"applied={node.applied} voters={m.voter_set}]"
            )
        return " ".join(parts)


def run_seed(seed: int, *, trace: bool = False, fault_ms: int = 1500) -> Simulation:
    """Run one seed; raises ``SimulationFailure`` if any check fails."""
    return Simulation(Scenario.from_seed(seed, fault_ms=fault_ms), trace=trace).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Replay Raft simulator seeds.")
    parser.add_argument("--seed", type=int, required=True, help="first seed")
    parser.add_argument("--count", type=int, default=1, help="how many seeds from --seed")
    parser.add_argument("--fault-ms", type=int, default=1500, help="simulated ms with faults")
    parser.add_argument("--trace", action="store_true", help="print the event trace")
    args = parser.parse_args(argv)
    failures = 0
    for seed in range(args.seed, args.seed + args.count):
        simulation = Simulation(Scenario.from_seed(seed, fault_ms=args.fault_ms), trace=args.trace)
        try:
            simulation.run()
            status = f"ok ({simulation.steps} steps, {len(simulation.checker.committed)} committed)"
        except SimulationFailure as failure:
            failures += 1
            status = f"FAILED: {failure}"
        if args.trace and simulation.trace is not None:
            print("\n".join(simulation.trace))
        print(f"seed {seed}: {simulation.scenario}\n  {status}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
