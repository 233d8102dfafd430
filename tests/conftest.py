from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

pytest_plugins = ["samsa.testing", "samsa.testing.kafka_reference", "samsa.testing.kafka"]

SERIAL_DIRS = (
    "tests/spark/",
    "tests/integration/test_share_groups.py",
    "tests/cluster/test_fetch_sessions_cluster.py",
)
"""Run after the parallel part (``-m serial`` in scripts/test.sh), alone: Spark's
streaming queries on 2 cores beside another xdist worker ran past pytest-timeout,
and a timeout that interrupts py4j mid-answer breaks the shared session for
every Spark test after it; five share consumers were not all joined before one
had taken every record, and a 1,000-partition cluster's metadata was read
before its leaders settled (each failed once beside a second worker)."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects on the marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SERIAL_DIRS):
            item.add_marker(pytest.mark.serial)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own, for a node run in the test
    process (``asyncio.run_coroutine_threadsafe(..., loop)``) while the test
    talks to it with real clients over sockets."""
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(10)
    running.close()
