"""A broker's session stays valid while its heartbeat waits behind a long write.

The controller's writes go one at a time until Raft commits them; at 11,000
partitions one commit (fencing a broker, an ISR change of thousands of
partitions) took seconds.  A broker sends one heartbeat at a time, so the
heartbeat waiting behind that commit was the last the controller heard from
it: the session expired and the poll queued behind the same commit fenced a
broker that was alive and connected.  The write here is the lock held, as a
long commit holds it, with the event loop free; the node runs in this process
so that the controller's sessions can be watched while it is held.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from samsa.config import BrokerConfig
from samsa.server.broker_lifecycle import BrokerState
from samsa.server.node import Node
from samsa.testing import TEST_SETTINGS
from samsa.testing_cluster import free_ports, wait_until

pytestmark = pytest.mark.integration

INTERVAL_MS = 200
SESSION_MS = 800
HELD_S = 2.5  # a commit of thousands of partition changes on a loaded machine

T = TypeVar("T")


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(10)
    running.close()


def test_a_heartbeat_behind_a_long_write_keeps_its_broker_unfenced(
    tmp_path: Path, loop: asyncio.AbstractEventLoop
) -> None:
    def run(coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(60)

    [port] = free_ports(1)
    config = BrokerConfig(
        {
            **TEST_SETTINGS,
            "log.dirs": str(tmp_path / "data"),
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "broker.heartbeat.interval.ms": str(INTERVAL_MS),
            "broker.session.timeout.ms": str(SESSION_MS),
        }
    )
    node = Node(config)
    run(node.start())
    try:
        lifecycle = node.broker.lifecycle
        wait_until(lifecycle.unfenced.is_set, 20, "the broker unfenced")
        controller = node.controller
        assert controller is not None
        sessions = controller.controller.cluster.heartbeats

        async def hold_the_writes() -> list[int]:
            """Session ages (ms) seen every 50 ms while the write lock is held."""
            ages: list[int] = []
            async with controller._write_lock:
                until = time.monotonic() + HELD_S
                while time.monotonic() < until:
                    await asyncio.sleep(0.05)
                    now = controller._clock()
                    ages.append(now - sessions.sessions[1].last_contact_ms)
            return ages

        ages = run(hold_the_writes())
        assert max(ages) <= SESSION_MS, f"session aged to {max(ages)} ms behind the write"
        released = time.monotonic()
        wait_until(
            lambda: lifecycle.last_heartbeat_answer > released + INTERVAL_MS / 1000,
            10,
            "a heartbeat answered after the write",
        )
        assert lifecycle.state is BrokerState.RUNNING
        assert not controller.controller.cluster.image.brokers[1].fenced
    finally:
        run(node.stop())
