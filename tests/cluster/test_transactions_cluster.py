"""Transactions on three nodes: markers cross brokers, coordinator and leaders die.

A topic of six partitions (replication factor 3) is led by all three nodes,
so every commit or abort sends WriteTxnMarkers from the coordinator to the
other leaders.  Then the coordinator's broker (the leader of the
transactional id's ``__transaction_state`` partition) is killed with a
transaction left open: a new producer instance on the survivors finds the new
coordinator, which loaded the state from its replica, fences the old epoch
and aborts the open transaction; its own transactions commit.  A
read_committed consumer sees exactly the committed records, once each.  In the
second test a partition leader dies between the writes and the commit: its
marker is retried until the new leader takes it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cluster.helpers import call, create_topic, node_metadata, wait_until

from samsa.testing.cluster import LocalCluster

ck = pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "payments"
PARTITIONS = 6
FIND_COORDINATOR = 10


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path,
        controllers=3,
        settings={
            "transaction.state.log.num.partitions": "4",
            "transaction.state.log.replication.factor": "3",
        },
    ) as c:
        c.start()
        yield c


def producer(bootstrap: str, transactional_id: str) -> Any:
    p = ck.Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "linger.ms": 1,
            "socket.timeout.ms": 5000,
            "reconnect.backoff.max.ms": 500,
        }
    )
    p.init_transactions(60)
    return p


def transaction(p: Any, values: list[bytes], *, commit: bool) -> None:
    p.begin_transaction()
    for i, value in enumerate(values):
        p.produce(TOPIC, value=value, partition=i % PARTITIONS)
    p.flush(20)
    if commit:
        p.commit_transaction(60)
    else:
        p.abort_transaction(60)


def committed_values(bootstrap: str, expected: int, timeout: float = 60) -> list[bytes]:
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{uuid.uuid4().hex[:6]}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.assign([ck.TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    settle: float | None = None
    try:
        while time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
            if len(values) >= expected:
                settle = settle or time.monotonic() + 2  # anything more would be a bug
                if time.monotonic() > settle:
                    break
    finally:
        c.close()
    return values


def coordinator_of(cluster: LocalCluster, transactional_id: str, not_on: int = -1) -> int:
    """The coordinator the running nodes name (waiting while they still name ``not_on``)."""

    def ask() -> int | None:
        for node in cluster.running():
            answer = call(
                f"127.0.0.1:{cluster.client_ports[node]}",
                FIND_COORDINATOR,
                3,
                {"key": transactional_id, "key_type": 1},
            )
            if answer["error_code"] == 0 and answer["node_id"] != not_on:
                return int(answer["node_id"])
        return None

    return wait_until(ask, 30, f"the coordinator of {transactional_id}")


def test_markers_cross_brokers_and_the_coordinator_fails_over(cluster: LocalCluster) -> None:
    create_topic(cluster.bootstrap, TOPIC, PARTITIONS, 3)
    transactional_id = "payments-writer"
    first = producer(cluster.bootstrap, transactional_id)
    expected: list[bytes] = []
    for n in range(4):
        values = [b"t%d-%d" % (n, i) for i in range(PARTITIONS)]
        commit = n != 2
        transaction(first, values, commit=commit)
        if commit:
            expected += values
    assert sorted(committed_values(cluster.bootstrap, len(expected))) == sorted(expected)

    first.begin_transaction()
    for i in range(PARTITIONS):
        first.produce(TOPIC, value=b"left-open-%d" % i, partition=i)
    first.flush(20)
    victim = coordinator_of(cluster, transactional_id)
    cluster.kill(victim)
    survivors = cluster.bootstrap_of(n for n in cluster.running())
    coordinator_of(cluster, transactional_id, not_on=victim)  # the leadership moved

    second = producer(survivors, transactional_id)  # fences `first`, aborts its transaction
    values = [b"after-%d" % i for i in range(PARTITIONS)]
    transaction(second, values, commit=True)
    expected += values
    seen = committed_values(survivors, len(expected))
    assert sorted(seen) == sorted(expected), "no aborted or open record, every commit once"


def leader_of(cluster: LocalCluster, asking: int, partition: int, not_on: int = -1) -> int:
    """The leader of a partition of TOPIC as node ``asking`` sees it (waiting while it
    still names ``not_on``)."""

    def ask() -> int | None:
        for t in node_metadata(cluster, asking, [TOPIC])["topics"]:
            for p in t["partitions"]:
                leader = p["leader_id"]
                if p["partition_index"] == partition and leader >= 0 and leader != not_on:
                    return int(leader)
        return None

    return wait_until(ask, 30, f"a leader of {TOPIC}-{partition}")


def test_markers_reach_a_partition_whose_leader_was_killed(cluster: LocalCluster) -> None:
    """The records of an open transaction are replicated (acks=all); the leader of
    one of its partitions dies before the commit; the coordinator retries that
    partition's COMMIT marker until the new leader takes it, and read_committed
    readers see the whole transaction."""
    create_topic(cluster.bootstrap, TOPIC, PARTITIONS, 3)
    transactional_id = "leader-kill"
    coordinator = coordinator_of(cluster, transactional_id)
    p = producer(cluster.bootstrap, transactional_id)
    values = [b"v-%d" % i for i in range(PARTITIONS)]
    p.begin_transaction()
    for i, value in enumerate(values):
        p.produce(TOPIC, value=value, partition=i)
    p.flush(20)
    victim_partition = next(
        i for i in range(PARTITIONS) if leader_of(cluster, coordinator, i) != coordinator
    )
    victim = leader_of(cluster, coordinator, victim_partition)
    cluster.kill(victim)
    p.commit_transaction(60)
    leader_of(cluster, coordinator, victim_partition, not_on=victim)
    survivors = cluster.bootstrap_of(n for n in cluster.running())
    assert sorted(committed_values(survivors, len(values))) == sorted(values)
