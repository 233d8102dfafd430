"""A node whose event loop was held past the broker session does not fence the
broker whose heartbeats waited, unread, behind the hold.

SIGSTOP holds every loop of a combined node at once, the hardest case: on
SIGCONT the controller's poll and the broker's next heartbeat fall due
together, and the poll runs before the heartbeat is read.  Fencing there moved
every leadership (a new leader epoch for every partition) -- at 10,000
partitions that work held the loops again, and the next poll fenced again.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

from .test_bad_input import RawClient

SESSION_MS = 1000
HELD_S = 2.5  # the fault's length: longer than the session, as a GC pause or a busy loop


@pytest.fixture
def node(tmp_path: Path) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(
        tmp_path / "data",
        {"broker.heartbeat.interval.ms": "200", "broker.session.timeout.ms": str(SESSION_MS)},
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.kill()


def _leader_epoch(bootstrap: str, topic: str) -> int:
    client = RawClient(bootstrap)
    try:
        body = client.call(3, 9, {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    finally:
        client.close()
    return int(body["topics"][0]["partitions"][0]["leader_epoch"])


def _produce_one(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    producer.produce(topic, b"after the hold")
    assert producer.flush(30) == 0


def test_a_held_loop_does_not_fence_the_broker_whose_heartbeats_waited(
    node: BrokerProcess,
) -> None:
    admin = AdminClient({"bootstrap.servers": node.bootstrap})
    admin.create_topics([NewTopic("held", 1, 1)])["held"].result(10)
    _produce_one(node.bootstrap, "held")
    epoch = _leader_epoch(node.bootstrap, "held")
    assert node.proc is not None
    node.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(HELD_S)
    finally:
        node.proc.send_signal(signal.SIGCONT)
    # The first poll after the hold runs before anything the hold queued is read;
    # a produce acknowledged after it proves that poll and the heartbeat are past.
    _produce_one(node.bootstrap, "held")
    assert _leader_epoch(node.bootstrap, "held") == epoch
    fenced = [
        line
        for line in node.log_lines
        if "INFO samsa.controller" in line and ": fencing broker" in line
    ]
    assert fenced == []
