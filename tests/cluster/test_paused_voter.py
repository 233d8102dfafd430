"""A voter whose event loop was held past the fetch timeout reads the leader's
answer, which came meanwhile, before it acts on the timeout.

SIGSTOP holds the loop as a long callback on a loaded machine does.  On
SIGCONT the fetch timer and the leader's answer are due together, and the
timer's wake-up ran first: the follower gave up on a live leader and asked the
other voters for pre-votes (at 11,000 partitions, where loops were held for
seconds, such false alarms added to the elections that kept moving the
controller).  Real fencing is not weakened: the paused node's broker, silent
past its session, is still fenced by the controller, whose own loop ran.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.helpers import active_controller, wait_until

from samsa.testing.cluster import FAST_SETTINGS, LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FETCH_TIMEOUT_MS = int(FAST_SETTINGS["controller.quorum.fetch.timeout.ms"])
SESSION_MS = int(FAST_SETTINGS["broker.session.timeout.ms"])
HELD_S = SESSION_MS / 1000 + 1.0  # past the fetch timeout and the broker session


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, controllers=3) as c:
        c.start()
        yield c


def elections_started(lines: list[str]) -> list[str]:
    return [line for line in lines if "-> Prospective" in line or "-> Candidate" in line]


def test_a_voter_held_past_the_fetch_timeout_keeps_following_its_live_leader(
    cluster: LocalCluster,
) -> None:
    leader = active_controller(cluster.bootstrap)
    controller_log = cluster.nodes[leader]
    fenced_before = len(controller_log.log_lines)
    paused = next(node_id for node_id in cluster.nodes if node_id != leader)
    node = cluster.nodes[paused]
    assert node.proc is not None
    seen = len(node.log_lines)
    node.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(HELD_S)
    finally:
        node.proc.send_signal(signal.SIGCONT)
    # The first wake-ups after the hold decide; an answer from the paused node's
    # loop to a new connection comes after them.
    wait_until(
        lambda: active_controller(cluster.client_address(paused)) == leader,
        10,
        "the paused voter answering with its leader",
    )
    assert elections_started(node.log_lines[seen:]) == []
    assert active_controller(cluster.bootstrap) == leader
    wait_until(
        lambda: any(
            f"fencing broker {paused}: no heartbeat" in line
            for line in controller_log.log_lines[fenced_before:]
        ),
        10,
        f"broker {paused}, silent past its session, fenced",
    )
