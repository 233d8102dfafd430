"""A group moved between the classic and the consumer protocol one member at a time,
while it consumes (issue 36, bug 3: KIP-848's online migration).

Three confluent-kafka consumers of a classic group are restarted one by one with
``group.protocol=consumer`` -- the first turns the group into a consumer group
in which the two others go on with the classic protocol -- and then back, one
by one, to ``classic``: when the last consumer-protocol member leaves, the group
is a classic group again.  A producer writes all along.  Each member commits
synchronously after every batch, so Kafka's at-least-once allows a record to be
read twice only when the commit of the batch that first read it failed (a
member told to rejoin mid-batch); the check (``consumption_problems``) finds
records lost, and records read twice without that excuse.

``group.consumer.migration.policy`` is honoured: ``disabled`` refuses the first
consumer-protocol member of a live classic group (GROUP_ID_NOT_FOUND), and
``upgrade`` keeps a group that lost its last consumer-protocol member a
consumer group.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.errors import ErrorCode
from samsa.testing import BrokerProcess

from .conftest import KIP848_SETTINGS
from .raw_client import RawClient

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

PARTITIONS = 6
CONSUMER_GROUP_DESCRIBE, LIST_GROUPS = 69, 16


@pytest.fixture(scope="module")
def migrating_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("migration") / "data", KIP848_SETTINGS) as proc:
        yield proc


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Writer(threading.Thread):
    """Writes one record every few ms, round robin over the partitions."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic = topic
        self.written = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.producer.produce(
                self.topic, b"%d" % self.written, partition=self.written % PARTITIONS
            )
            self.written += 1
            self.producer.poll(0)
            time.sleep(0.005)

    def stop(self) -> None:
        self._halt.set()
        self.join(10)
        assert self.producer.flush(20) == 0


class Member(threading.Thread):
    """A group member: consume a batch, commit it synchronously, remember the outcome."""

    def __init__(self, bootstrap: str, topic: str, group: str, name: str, protocol: str) -> None:
        super().__init__(name=name, daemon=True)
        classic = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 300}
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": name,
                "group.protocol": protocol,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 50,
                **(classic if protocol == "classic" else {}),
            }
        )
        self.topic = topic
        self.protocol = protocol
        self.reads: list[tuple[int, int, bool]] = []
        """(partition, offset, whether the commit of its batch succeeded)"""
        self.assigned: set[int] = set()
        self.crashed: BaseException | None = None
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        def assigned(_: Consumer, parts: list[TopicPartition]) -> None:
            self.assigned |= {p.partition for p in parts}

        def revoked(_: Consumer, parts: list[TopicPartition]) -> None:
            self.assigned -= {p.partition for p in parts}

        try:
            self.consumer.subscribe([self.topic], on_assign=assigned, on_revoke=revoked)
            while not self._halt.is_set():
                batch = [m for m in self.consumer.consume(100, 0.1) if m.error() is None]
                if not batch:
                    continue
                try:
                    self.consumer.commit(asynchronous=False)
                    committed = True
                except KafkaException:
                    committed = False
                with self._lock:
                    self.reads += [(m.partition(), m.offset(), committed) for m in batch]
        except BaseException as exc:
            self.crashed = exc

    def read(self) -> int:
        with self._lock:
            return len(self.reads)

    def stop(self) -> None:
        """Stop consuming and leave the group cleanly."""
        self._halt.set()
        self.join(30)
        self.consumer.close()
        if self.crashed is not None:
            raise AssertionError(f"{self.name} crashed") from self.crashed


def consumption_problems(members: list[Member], ends: dict[int, int]) -> list[str]:
    """Records lost (never read) and records read twice that at-least-once does not excuse."""
    reads: defaultdict[tuple[int, int], list[bool]] = defaultdict(list)
    for member in members:
        for partition, offset, committed in member.reads:
            reads[(partition, offset)].append(committed)
    problems = []
    for partition, end in ends.items():
        lost = [o for o in range(end) if (partition, o) not in reads]
        if lost:
            problems.append(f"partition {partition}: {len(lost)} lost, first {lost[:5]}")
    for (partition, offset), commits in sorted(reads.items()):
        if len(commits) > 1 and all(commits[:-1]):
            problems.append(f"{partition}@{offset} read {len(commits)} times after a commit")
    return problems


def group_shape(bootstrap: str, group: str) -> tuple[str, list[int]]:
    """("consumer", member types) or ("classic", []) as the broker lists the group."""
    raw = RawClient(bootstrap)
    try:
        listed = raw.call(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})
        types = {g["group_id"]: g["group_type"] for g in listed["groups"]}
        if types.get(group) != "consumer":
            return types.get(group, ""), []
        described = raw.call(
            CONSUMER_GROUP_DESCRIBE,
            1,
            {"group_ids": [group], "include_authorized_operations": False},
        )["groups"][0]
        return "consumer", sorted(m["member_type"] for m in described["members"])
    finally:
        raw.close()


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(20)


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "ends"})
    try:
        return {
            p: probe.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        }
    finally:
        probe.close()


def test_three_consumers_move_to_the_consumer_protocol_and_back_while_consuming(
    migrating_broker: BrokerProcess,
) -> None:
    bootstrap = migrating_broker.bootstrap
    topic = f"migrate-{uuid.uuid4().hex[:8]}"
    group = f"g-{topic}"
    create_topic(bootstrap, topic)
    writer = Writer(bootstrap, topic)
    writer.start()
    everyone: list[Member] = []

    def start(name: str, protocol: str) -> Member:
        member = Member(bootstrap, topic, group, name, protocol)
        member.start()
        everyone.append(member)
        return member

    def settled(running: list[Member]) -> bool:
        """Every partition held by exactly one running member, each holding some and
        reading again."""
        held = [set(m.assigned) for m in running]
        if not all(held) or sorted(p for h in held for p in h) != list(range(PARTITIONS)):
            return False
        marks = [m.read() for m in running]
        time.sleep(0.3)
        return all(m.read() > mark for m, mark in zip(running, marks, strict=True))

    try:
        running = [start(f"classic-{i}", "classic") for i in range(3)]
        wait_for(lambda: settled(running), 60, "three classic members consuming")
        assert group_shape(bootstrap, group) == ("classic", [])
        for protocol, kind in (("consumer", 1), ("classic", 0)):
            for i in range(3):
                running[i].stop()
                running[i] = start(f"{protocol}-{i}", protocol)
                wait_for(lambda: settled(running), 60, f"{running[i].name} consuming")
                shape = group_shape(bootstrap, group)
                if protocol == "consumer":
                    # The first consumer-protocol member upgraded the group; the
                    # classic members go on inside it until they restart.
                    assert shape == ("consumer", sorted([kind] * (i + 1) + [0] * (2 - i)))
                elif i < 2:
                    assert shape == ("consumer", sorted([1] * (2 - i) + [0] * (i + 1)))
                else:
                    # The last consumer-protocol member left: a classic group again.
                    assert shape == ("classic", [])
    finally:
        writer.stop()
    ends = end_offsets(bootstrap, topic)
    wait_for(
        lambda: all(
            any((p, ends[p] - 1) in {(r[0], r[1]) for r in m.reads} for m in running)
            for p in range(PARTITIONS)
            if ends[p]
        ),
        60,
        "the last records read",
    )
    for member in running:
        member.stop()
    assert sum(ends.values()) == writer.written > 300  # written all along the moves
    assert consumption_problems(everyone, ends) == []


def test_the_migration_policy_decides_which_way_a_group_may_go(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    for policy in ("disabled", "upgrade"):
        broker = BrokerProcess(
            tmp_path_factory.mktemp(f"policy-{policy}") / "data",
            {**KIP848_SETTINGS, "group.consumer.migration.policy": policy},
        )
        broker.start()
        try:
            check_policy(broker.bootstrap, policy)
        finally:
            broker.stop()
            broker.kill()


def check_policy(bootstrap: str, policy: str) -> None:
    topic = f"policy-{uuid.uuid4().hex[:8]}"
    group = f"g-{topic}"
    create_topic(bootstrap, topic)
    classic = Member(bootstrap, topic, group, "classic-0", "classic")
    classic.start()
    try:
        wait_for(lambda: classic.assigned, 30, "the classic member's assignment")
        raw = RawClient(bootstrap)
        try:
            joined = raw.call(
                68,
                1,
                {
                    "group_id": group,
                    "member_id": uuid.uuid4().hex,
                    "member_epoch": 0,
                    "rebalance_timeout_ms": 30000,
                    "subscribed_topic_names": [topic],
                    "topic_partitions": [],
                },
            )
            if policy == "disabled":
                assert joined["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND, joined
                assert group_shape(bootstrap, group) == ("classic", [])
                return
            assert joined["error_code"] == 0, joined
            assert group_shape(bootstrap, group) == ("consumer", [0, 1])
            left = raw.call(
                68,
                1,
                {"group_id": group, "member_id": joined["member_id"], "member_epoch": -1},
            )
            assert left["error_code"] == 0, left
        finally:
            raw.close()
        # Upgrade only: the classic member stays in a consumer group, and consumes.
        assert group_shape(bootstrap, group) == ("consumer", [0])
        wait_for(lambda: classic.assigned == set(range(PARTITIONS)), 30, "every partition back")
    finally:
        classic.stop()
