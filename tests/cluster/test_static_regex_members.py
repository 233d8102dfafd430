"""librdkafka's test 0102 (static members with a regex subscription) on three nodes,
ten runs in a row (issue 36, bug 4).

Two confluent-kafka consumers with ``group.instance.id`` subscribe to
``^<topic>.*`` with ``topic.metadata.refresh.interval.ms`` at 2 s, as 0102 does,
and go through its steps: both assigned at once; one restarted (same instance
id) without disturbing the other; a new matching topic (both revoke, both
assigned); an unsubscribe and a re-subscribe.  Each member's rebalance
callbacks must be exactly the expected ones, as 0102's ``rebalance_cb`` asserts,
and nothing may happen in a quiet period past one metadata refresh.

It failed 2 runs out of 3 on three nodes: each broker started its group
coordinator only at the first group request it received, so the first JoinGroup
of a group led there was answered COORDINATOR_LOAD_IN_PROGRESS; one member
backed off while the other formed the group alone, and when the first came
back the other got a revoke it did not expect.  Brokers now load the
``__consumer_offsets`` partitions they lead as soon as the topic exists, as
Kafka's coordinator does on election, and FindCoordinator names the coordinator
from the metadata whatever the state of the answering node's own coordinator.
Each run also checks that every node lists a topic promptly after CreateTopics
returns, since a member's first metadata may come from any node.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from tests.cluster.helpers import call, node_metadata, wait_until

from samsa.testing.cluster import LocalCluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.serial,
    pytest.mark.timeout(300),
]

RUNS = 10
PROPAGATION_S = 1.0
"""How soon after CreateTopics returns every node must list the topic."""


FIND_COORDINATOR = 10
KAFKA_INITIAL_DELAY = {"group.initial.rebalance.delay.ms": "3000"}
"""Kafka's default, which 0102 counts on: its two members start together and must
both be in the first generation, but librdkafka may postpone a member's first
join to its next metadata refresh (2 s here) when no broker connection is up yet.
The test settings' 0 (samsa.testing) would let the other form the group alone."""


def find_coordinator(cluster: LocalCluster, node_id: int, group: str) -> dict[str, Any]:
    body = {"key_type": 0, "coordinator_keys": [group]}
    answer = call(cluster.client_address(node_id), FIND_COORDINATOR, 4, body)
    entry: dict[str, Any] = answer["coordinators"][0]
    return entry


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three fresh nodes whose ``__consumer_offsets`` was created through node 1,
    as by a first client: the other nodes got no group request yet."""
    with LocalCluster(
        Path(tmp_path_factory.mktemp("static-regex")), settings=KAFKA_INITIAL_DELAY
    ) as nodes:
        nodes.start()
        wait_until(
            lambda: find_coordinator(nodes, 1, "first-client")["error_code"] == 0,
            30,
            "node 1 to answer FindCoordinator",
        )
        yield nodes


def test_every_node_loads_its_coordinator_as_soon_as_the_offsets_topic_exists(
    cluster: LocalCluster,
) -> None:
    """Not at its first group request: members meeting LOAD_IN_PROGRESS there
    back off for different times, and the first to come back forms the group alone."""
    for node_id, node in cluster.nodes.items():
        assert node.wait_for_log("group coordinator loaded", 10), f"node {node_id}"
    for node_id in cluster.nodes:
        # Answered from the metadata by every node, at the first ask.
        entry = find_coordinator(cluster, node_id, f"group-asked-{node_id}")
        assert entry["error_code"] == 0 and entry["node_id"] in cluster.nodes, entry


class Member:
    """One static consumer; records its rebalance callbacks as 0102's rebalance_cb."""

    def __init__(self, name: str, config: dict[str, Any]) -> None:
        self.name = name
        self.events: list[tuple[str, list[tuple[str, int]]]] = []
        self.consumer = Consumer(config)

    def subscribe(self, pattern: str) -> None:
        self.consumer.subscribe([pattern], on_assign=self._assigned, on_revoke=self._revoked)

    def _assigned(self, consumer: Consumer, parts: list[TopicPartition]) -> None:
        self.events.append(("assign", sorted((p.topic, p.partition) for p in parts)))
        consumer.assign(parts)

    def _revoked(self, consumer: Consumer, parts: list[TopicPartition]) -> None:
        self.events.append(("revoke", sorted((p.topic, p.partition) for p in parts)))
        consumer.unassign()


def step(
    what: str, expected: dict[str, list[str]], members: list[Member], quiet: float = 0
) -> None:
    """Poll every member until each saw as many callbacks as expected (and ``quiet``
    seconds more); then each must have seen exactly the expected ones."""
    marks = {m.name: len(m.events) for m in members}

    def seen(m: Member) -> list[str]:
        return [kind for kind, _ in m.events[marks[m.name] :]]

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(
        len(seen(m)) < len(expected.get(m.name, [])) for m in members
    ):
        for m in members:
            m.consumer.poll(0.05)
    settle = time.monotonic() + quiet
    while time.monotonic() < settle:
        for m in members:
            m.consumer.poll(0.05)
    got = {m.name: seen(m) for m in members}
    assert got == {m.name: expected.get(m.name, []) for m in members}, (
        what,
        {m.name: m.events[marks[m.name] :] for m in members},
    )


def create_and_check_everywhere(cluster: LocalCluster, name: str, partitions: int) -> None:
    """CreateTopics, then every node lists the topic with all its leaders promptly."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 3)])[name].result(30)
    created = time.monotonic()

    def listed_on(node_id: int) -> bool:
        for topic in node_metadata(cluster, node_id)["topics"]:
            if topic["name"] == name and not topic["error_code"]:
                return len(topic["partitions"]) == partitions and all(
                    p["leader_id"] >= 0 for p in topic["partitions"]
                )
        return False

    for node_id in cluster.nodes:
        wait_until(lambda n=node_id: listed_on(n), PROPAGATION_S, f"{name} on node {node_id}")
    assert time.monotonic() - created < PROPAGATION_S


def one_run(cluster: LocalCluster) -> None:
    topic = f"t0102-{uuid.uuid4().hex[:10]}"
    create_and_check_everywhere(cluster, topic, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(100):
        producer.produce(topic, b"%d" % i)
    assert producer.flush(10) == 0
    config = {
        "bootstrap.servers": cluster.bootstrap,
        "group.id": topic,
        "max.poll.interval.ms": 9000,
        "session.timeout.ms": 6000,
        "auto.offset.reset": "earliest",
        # 0102: "higher than cluster metadata propagation time".
        "topic.metadata.refresh.interval.ms": 2000,
        "metadata.max.age.ms": 5000,
        "enable.partition.eof": True,
    }
    pattern = f"^{topic}.*"
    # As 0102: both created, the second waits until it sees the topic, both subscribe.
    c0 = Member("c0", {**config, "group.instance.id": "consumer1"})
    c1 = Member("c1", {**config, "group.instance.id": "consumer2"})
    try:
        wait_until(lambda: topic in c1.consumer.list_topics(topic, timeout=5).topics, 5, topic)
        c0.subscribe(pattern)
        c1.subscribe(pattern)
        step("both assigned", {"c0": ["assign"], "c1": ["assign"]}, [c0, c1])

        # Restart: the static member comes back without a rebalance of the other.
        c1.consumer.close()
        assert [kind for kind, _ in c1.events[-1:]] == ["revoke"]
        started = time.monotonic()
        c1 = Member("c1", {**config, "group.instance.id": "consumer2"})
        c1.subscribe(pattern)
        step("restarted", {"c1": ["assign"]}, [c0, c1])
        assert time.monotonic() - started < 6.0  # before session.timeout.ms

        # A new topic matching the pattern: one rebalance, both members.
        create_and_check_everywhere(cluster, f"{topic}new", 1)
        step(
            "subscription expansion",
            {"c0": ["revoke", "assign"], "c1": ["revoke", "assign"]},
            [c0, c1],
        )

        c1.consumer.unsubscribe()
        step("unsubscribe", {"c0": ["revoke", "assign"], "c1": ["revoke"]}, [c0, c1])
        c1.subscribe(pattern)
        step(
            "subscribe again",
            {"c0": ["revoke", "assign"], "c1": ["assign"]},
            [c0, c1],
            quiet=2.5,  # past a metadata refresh: nothing more may happen
        )
    finally:
        c0.consumer.close()
        c1.consumer.close()


def test_static_members_with_a_regex_subscription_ten_runs_out_of_ten(
    cluster: LocalCluster,
) -> None:
    for run in range(RUNS):
        try:
            one_run(cluster)
        except AssertionError as failure:
            raise AssertionError(f"run {run + 1} of {RUNS}: {failure}") from failure
