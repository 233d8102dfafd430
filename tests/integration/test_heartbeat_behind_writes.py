"""A broker's session stays valid while its heartbeat waits behind a long write.

The controller's writes go one at a time until Raft commits them; at 11,000
partitions one commit (fencing a broker, an ISR change of thousands of
partitions) took seconds.  A broker sends one heartbeat at a time, so the
heartbeat waiting behind that commit was the last the controller heard from
it: the session expired and the poll queued behind the same commit fenced a
broker that was alive and connected.  The write here is the lock held, as a
long commit holds it, with the event loop free; the nodes run in this process
so that the controller's sessions can be watched while it is held.

A remote broker's heartbeat could be held back further: a controller answers
one request per connection at a time, so a heartbeat sent on the connection of
an AlterPartition waiting behind the commit was not even read.  Heartbeats
have connections of their own, as Kafka's BrokerLifecycleManager has.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from samsa.config.broker_config import BrokerConfig
from samsa.server.controller_server import ALTER_PARTITION, ControllerServer
from samsa.server.metadata.broker_lifecycle import BrokerState
from samsa.server.metadata.meta_properties import random_cluster_id
from samsa.server.node import Node
from samsa.testing import TEST_SETTINGS
from samsa.testing.cluster import free_ports, wait_until

pytestmark = pytest.mark.integration

INTERVAL_MS = 200
SESSION_MS = 800
HELD_S = 2.5  # a commit of thousands of partition changes on a loaded machine
ATTEMPT_MS = 400  # controller.quorum.request.timeout.ms: 5 of them are shorter than the hold

T = TypeVar("T")


def node_config(tmp_path: Path, node_id: int, settings: dict[str, str]) -> BrokerConfig:
    return BrokerConfig(
        {
            **TEST_SETTINGS,
            "node.id": str(node_id),
            "log.dirs": str(tmp_path / f"node-{node_id}"),
            "broker.heartbeat.interval.ms": str(INTERVAL_MS),
            "broker.session.timeout.ms": str(SESSION_MS),
            **settings,
        }
    )


Run = Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.fixture
def run(loop: asyncio.AbstractEventLoop) -> Run:
    """Run a coroutine on the nodes' loop and wait for its result."""

    def run_there(coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(60)

    return run_there


@pytest.fixture
def one_node(tmp_path: Path, run: Run) -> Iterator[Node]:
    """A single node (broker and controller), its broker unfenced."""
    [port] = free_ports(1)
    node = Node(node_config(tmp_path, 1, {"listeners": f"PLAINTEXT://127.0.0.1:{port}"}))
    run(node.start())
    try:
        wait_until(node.broker.lifecycle.unfenced.is_set, 20, "the broker unfenced")
        yield node
    finally:
        run(node.stop())


async def session_ages_while_writes_wait(controller: ControllerServer, broker_id: int) -> list[int]:
    """Ages (ms) of ``broker_id``'s session, every 50 ms while the write lock is held."""
    sessions = controller.controller.cluster.heartbeats
    ages: list[int] = []
    async with controller._write_lock:
        until = time.monotonic() + HELD_S
        while time.monotonic() < until:
            await asyncio.sleep(0.05)
            ages.append(controller._clock() - sessions.sessions[broker_id].last_contact_ms)
    return ages


def assert_still_unfenced(controller: ControllerServer, broker: Node, broker_id: int) -> None:
    lifecycle = broker.broker.lifecycle
    released = time.monotonic()
    wait_until(
        lambda: lifecycle.last_heartbeat_answer > released + INTERVAL_MS / 1000,
        10,
        "a heartbeat answered after the write",
    )
    assert lifecycle.state is BrokerState.RUNNING
    assert not controller.controller.cluster.image.brokers[broker_id].fenced


def test_a_heartbeat_behind_a_long_write_keeps_its_broker_unfenced(
    one_node: Node, run: Run
) -> None:
    controller = one_node.controller
    assert controller is not None
    ages = run(session_ages_while_writes_wait(controller, 1))
    assert max(ages) <= SESSION_MS, f"session aged to {max(ages)} ms behind the write"
    assert_still_unfenced(controller, one_node, 1)


def test_the_time_the_controllers_loop_was_held_is_not_a_brokers_silence(
    one_node: Node, run: Run
) -> None:
    """The loop held (a long callback) while the poll waits behind a write: on
    release the poll must not count the hold against the heartbeats that came
    meanwhile, unread (the poll forgave only its own late wake-ups before)."""
    controller = one_node.controller
    assert controller is not None
    sessions = controller.controller.cluster.heartbeats

    async def session_age_after_holding_the_loop() -> int:
        async with controller._write_lock:
            time.sleep(HELD_S)  # the loop held: the point of the test
            return controller._clock() - sessions.sessions[1].last_contact_ms

    age = run(session_age_after_holding_the_loop())
    assert age <= SESSION_MS, f"the hold counted: session aged to {age} ms"
    assert_still_unfenced(controller, one_node, 1)


def test_a_remote_heartbeat_is_not_queued_behind_an_isr_change_sent_once(
    tmp_path: Path, run: Run
) -> None:
    """Also: the ISR change waiting behind the writes is not sent again when an
    attempt runs long (a resend of thousands of partition changes doubled the
    controller's work while it was behind, and dropped the connection), and it
    waits longer than other forwarded requests for its answer."""

    port_1, controller_port, port_2 = free_ports(3)
    common = {
        "cluster.id": random_cluster_id(),
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.request.timeout.ms": str(ATTEMPT_MS),
    }
    combined = Node(
        node_config(
            tmp_path,
            1,
            {
                **common,
                "process.roles": "broker,controller",
                "listeners": f"PLAINTEXT://127.0.0.1:{port_1},"
                f"CONTROLLER://127.0.0.1:{controller_port}",
            },
        )
    )
    broker = Node(
        node_config(
            tmp_path,
            2,
            {**common, "process.roles": "broker", "listeners": f"PLAINTEXT://127.0.0.1:{port_2}"},
        )
    )
    run(combined.start())
    try:
        run(broker.start())
        try:
            wait_until(broker.broker.lifecycle.unfenced.is_set, 20, "broker 2 unfenced")
            controller = combined.controller
            assert controller is not None
            isr_changes: list[dict[str, Any]] = []
            handle_isr_change = controller.controller.alter_partition

            def counted(body: dict[str, Any]) -> Any:
                isr_changes.append(body)
                return handle_isr_change(body)

            controller.controller.alter_partition = counted  # type: ignore[method-assign]

            async def an_isr_change_waiting_behind_the_writes() -> tuple[list[int], Any]:
                epoch = broker.broker.lifecycle.broker_epoch
                body = {"broker_id": 2, "broker_epoch": epoch, "topics": []}
                waiting = asyncio.ensure_future(broker.broker.forward(ALTER_PARTITION, 3, body))
                try:
                    ages = await session_ages_while_writes_wait(controller, 2)
                finally:
                    answer = await waiting
                return ages, answer

            ages, answer = run(an_isr_change_waiting_behind_the_writes())
            assert answer["error_code"] == 0
            assert max(ages) <= SESSION_MS, f"session aged to {max(ages)} ms behind the write"
            assert_still_unfenced(controller, broker, 2)
            assert len(isr_changes) == 1
        finally:
            run(broker.stop())
    finally:
        run(combined.stop())
