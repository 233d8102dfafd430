"""A random schedule of network and process faults, replayable from its seed.

Three nodes in network namespaces; both idempotent acks=all producers, the
reader and a librdkafka consumer group (two members committing what they
consume) run in the root namespace all along, while a schedule drawn from a
seed applies, one after another and each healed before the next: a partition
leader or the active controller cut from the quorum (not from the clients), a
one-way link, a bridge node, random loss, a slow node (netem's delay, jitter,
loss and duplication, done in user space by ``packet_delay``: this kernel has
no netem), SIGKILL + restart and SIGSTOP + SIGCONT of a node.  Afterwards the checker proves every acknowledged record is
present exactly once and in order and nothing read was later truncated; the
group's committed offsets never went backwards; every node answers the same
metadata (leaders, epochs, ISR, replicas of every partition).

The seed is printed and named in every failure; ``SAMSA_NEMESIS_SEED=N``
replays a schedule, ``SAMSA_NEMESIS_FAULTS=N`` sets its length (default 6).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from tests.cluster.fault_run import TOPIC, Run, finish_and_check
from tests.cluster.group_members import CommittedOffsets, Member
from tests.cluster.helpers import active_controller, node_metadata, wait_until
from tests.netfaults.conftest import NODES
from tests.netfaults.network import HostNetwork

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GROUP = "nemesis-group"
SEED = int(os.environ.get("SAMSA_NEMESIS_SEED", random.randrange(1 << 32)))
FAULTS = int(os.environ.get("SAMSA_NEMESIS_FAULTS", "6"))


class Nemesis:
    """Draws and applies faults; each leaves the cluster whole and acknowledging."""

    def __init__(self, run: Run, net: HostNetwork, rng: random.Random) -> None:
        self.run, self.net, self.rng = run, net, rng

    def _leader(self) -> int:
        view = self.run.agreed_view()
        assert view is not None
        return view[self.rng.randrange(len(view))].leader

    def _controller(self) -> int:
        return active_controller(self.run.bootstrap)

    def _recover(self, victim: int | None, what: str) -> None:
        if victim is not None:
            self.run.down.discard(victim)
        self.run.wait_healthy(f"{what} healed")
        self.run.wait_progress(f"{what} healed")

    def _left_out(
        self, victim: int, inject: Callable[[], None], undo: Callable[[], None], how: str
    ) -> None:
        inject()
        self.run.down.add(victim)
        try:
            self.run.wait_left_out(victim, how)
            self.run.wait_progress(f"node {victim} {how}")
        finally:
            undo()
        self._recover(victim, f"node {victim} {how}")

    def isolate(self, victim: int, what: str) -> str:
        others = [n for n in NODES if n != victim]
        self._left_out(victim, lambda: self.net.isolate(victim, others), self.net.heal, what)
        return f"{what} {victim} isolated from the quorum"

    def one_way(self) -> str:
        victim = self._leader()

        def inject() -> None:
            for other in NODES:
                if other != victim:
                    self.net.drop_from(victim, other)

        self._left_out(victim, inject, self.net.heal, "unheard (one-way)")
        return f"one-way loss from leader {victim}"

    def bridge(self) -> str:
        a, bridge, b = self.rng.sample(NODES, 3)
        self.net.cut(a, b)
        try:
            self.run.wait_progress(f"{a} and {b} cut apart, {bridge} bridging")
        finally:
            self.net.heal()
        self._recover(None, "bridge")
        return f"bridge: {a}-{b} cut, {bridge} sees both"

    def loss(self) -> str:
        victim = self.rng.choice(NODES)
        percent = self.rng.choice([5, 10, 20])
        self.net.lose(victim, percent)
        try:
            self.run.wait_progress(f"node {victim} losing {percent}%", timeout=90)
        finally:
            self.net.heal()
        self._recover(None, "loss")
        return f"{percent}% loss on node {victim}"

    def slow(self) -> str:
        """One node or all of them slowed (each what it sends), for three rounds
        of acknowledgements on every partition."""
        victims = self.rng.choice([[self.rng.choice(NODES)], NODES])
        delay = self.rng.choice([20, 50, 100])
        loss, duplicate = self.rng.choice([0, 2]), self.rng.choice([0, 5])
        where = f"node {victims[0]}" if len(victims) == 1 else "every node"
        done = len(self.net.injected)
        try:
            for victim in victims:
                self.net.slow(victim, delay, delay // 2, loss, duplicate)
            for _ in range(3):
                self.run.wait_progress(f"{where} slowed by {delay} ms", timeout=90)
        finally:
            self.net.heal()
        self._recover(None, "slow network")
        counted = "; ".join(self.net.injected[done:])
        return (
            f"{where} slowed: {delay}+/-{delay // 2} ms, {loss}% loss, "
            f"{duplicate}% duplicated ({counted})"
        )

    def kill(self) -> str:
        victim = self.rng.choice(NODES)
        self.run.cluster.kill(victim)
        self.run.down.add(victim)
        self.run.wait_left_out(victim, "killed")
        self.run.wait_progress(f"node {victim} killed")
        self.run.cluster.start([victim])
        self._recover(victim, f"node {victim} killed")
        return f"SIGKILL + restart of node {victim}"

    def pause(self) -> str:
        victim = self.rng.choice(NODES)
        self._left_out(
            victim,
            lambda: self.run.cluster.pause(victim),
            lambda: self.run.cluster.resume(victim),
            "paused",
        )
        return f"SIGSTOP + SIGCONT of node {victim}"

    def schedule(self, count: int) -> list[Callable[[], str]]:
        kinds: list[Callable[[], str]] = [
            lambda: self.isolate(self._leader(), "leader"),
            lambda: self.isolate(self._controller(), "controller"),
            self.one_way,
            self.bridge,
            self.loss,
            self.slow,
            self.kill,
            self.pause,
        ]
        return [self.rng.choice(kinds) for _ in range(count)]


def metadata_images_agree(run: Run) -> bool:
    """Every node answers the same leaders, epochs, ISR and replicas for every
    partition of every topic."""

    def image(node: int) -> list[tuple[Any, ...]]:
        return sorted(
            (
                t["name"],
                p["partition_index"],
                p["leader_id"],
                p["leader_epoch"],
                tuple(sorted(p["isr_nodes"])),
                tuple(p["replica_nodes"]),
            )
            for t in node_metadata(run.cluster, node)["topics"]
            for p in t["partitions"]
        )

    first = image(NODES[0])
    return bool(first) and all(image(n) == first for n in NODES[1:])


@pytest.mark.timeout(900)
def test_nemesis(
    run: Run, host_network: HostNetwork, record_property: Callable[[str, Any], None]
) -> None:
    print(f"nemesis seed {SEED} ({FAULTS} faults); replay: SAMSA_NEMESIS_SEED={SEED}")
    record_property("nemesis_seed", SEED)
    rng = random.Random(SEED)
    members = [Member(name, run.bootstrap, TOPIC, GROUP) for name in ("m1", "m2")]
    committed = CommittedOffsets(TOPIC, GROUP)
    for member in members:
        member.start()
    try:
        wait_until(lambda: all(m.progress()[1] >= 3 for m in members), 60, "the group committing")
        nemesis = Nemesis(run, host_network, rng)
        for step, fault in enumerate(nemesis.schedule(FAULTS)):
            committed.sample(run.bootstrap)
            start = time.monotonic()
            try:
                described = fault()
            except BaseException as exc:
                raise AssertionError(f"seed {SEED}, fault {step + 1} failed: {exc}") from exc
            run.figures.faults.append(f"{described} ({time.monotonic() - start:.1f}s)")
            committed.sample(run.bootstrap)
        wait_until(lambda: metadata_images_agree(run), 30, "every node's metadata equal")
    finally:
        for member in members:
            member.stop()
    committed.sample(run.bootstrap)
    assert committed.steps_back() == [], f"seed {SEED}: {committed.steps_back()}"
    finish_and_check(run, record_property)
    print(f"nemesis seed {SEED}: {len(committed.samples)} offset samples, none back")
