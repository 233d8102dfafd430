"""A share group's acknowledgements survive the failover of its share coordinator
and of the partition leader (three combined nodes, replication factor 3).

A librdkafka share consumer accepts about half of a topic's records and
commits; then the broker leading the ``__share_group_state`` partition that
holds this share partition's state (its share coordinator) is SIGKILLed, and,
when the topic partition is led elsewhere, that leader too (after the first
node is back).  A new share consumer must then receive every record that was
not accepted and none that was: the new leader read the state the old one
had written through the share coordinator, from a replica of that state.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from tests.cluster.helpers import create_topic, node_metadata, wait_until

from samsa.coordinator.share.state import SHARE_STATE_TOPIC, state_partition
from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "jobs"
GROUP = "workers"
RECORDS = 200
STATE_PARTITIONS = 4
SETTINGS = {
    "share.auto.offset.reset": "earliest",
    "group.share.record.lock.duration.ms": "3000",
    "group.share.heartbeat.interval.ms": "500",
    "group.share.session.timeout.ms": "6000",
    "share.coordinator.state.topic.num.partitions": str(STATE_PARTITIONS),
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, controllers=3, settings=SETTINGS) as c:
        c.start()
        try:
            yield c
        finally:
            for node_id, node in c.nodes.items():
                (tmp_path / f"node-{node_id}.log").write_text(node.log_text())


def leader_of(cluster: LocalCluster, topic: str, partition: int) -> int | None:
    """The partition's leader as a live node sees it (None: unknown or offline)."""
    for node_id in cluster.running():
        try:
            answer = node_metadata(cluster, node_id, [topic])
        except OSError:
            continue
        for t in answer["topics"]:
            for p in t["partitions"]:
                if p["partition_index"] == partition and p["leader_id"] in cluster.running():
                    return int(p["leader_id"])
    return None


def topic_id(cluster: LocalCluster) -> bytes:
    answer = node_metadata(cluster, cluster.running()[0], [TOPIC])
    return bytes(answer["topics"][0]["topic_id"])


def consumer(bootstrap: str, **extra: str) -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP, **extra})
    c.subscribe([TOPIC])
    return c


@pytest.mark.timeout(300)
def test_acknowledged_records_are_not_redelivered_after_coordinator_and_leader_failover(
    cluster: LocalCluster,
) -> None:
    create_topic(cluster.bootstrap, TOPIC, 1, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(TOPIC, value=f"r{i}".encode(), partition=0)
    assert producer.flush(30) == 0

    first = consumer(cluster.bootstrap, **{"share.acknowledgement.mode": "explicit"})
    accepted: set[int] = set()

    def accept_half() -> bool:
        for m in first.poll(0.5):
            if m.error() is not None:
                continue
            if len(accepted) < RECORDS // 2:
                first.acknowledge(m, AcknowledgeType.ACCEPT)
                accepted.add(m.offset())
            else:
                first.acknowledge(m, AcknowledgeType.RELEASE)
        return len(accepted) >= RECORDS // 2

    wait_until(accept_half, 60, "half of the records accepted")
    first.commit_sync(30)
    first.close()

    state_index = state_partition(GROUP, topic_id(cluster), 0, STATE_PARTITIONS)
    coordinator = wait_until(
        lambda: leader_of(cluster, SHARE_STATE_TOPIC, state_index), 30, "the share coordinator"
    )
    data_leader = wait_until(lambda: leader_of(cluster, TOPIC, 0), 30, "the partition leader")
    cluster.kill(coordinator)
    wait_until(
        lambda: leader_of(cluster, SHARE_STATE_TOPIC, state_index) not in (None, coordinator),
        60,
        "a new share coordinator",
    )
    if data_leader != coordinator:
        cluster.start([coordinator])
        cluster.kill(data_leader)
    wait_until(
        lambda: leader_of(cluster, TOPIC, 0) not in (None, data_leader),
        60,
        "a new partition leader",
    )

    live = cluster.bootstrap_of(cluster.running())
    second = consumer(live)
    seen: list[int] = []
    try:

        def rest_delivered() -> bool:
            seen.extend(m.offset() for m in second.poll(0.5) if m.error() is None)
            return set(seen) >= set(range(RECORDS)) - accepted

        wait_until(rest_delivered, 90, "the records that were not accepted")
        redelivered = accepted & set(seen)
        assert not redelivered, f"accepted records delivered again: {sorted(redelivered)[:10]}"
    finally:
        second.close()
