"""The Samsa consumer with ``group.protocol=consumer`` against a real broker.

Each consumer polls on its own thread (a Samsa Consumer is used from one
thread, as Kafka's); waits end on what the consumers observe.
"""

from __future__ import annotations

import itertools
import re
import threading
import time

from confluent_kafka import Producer

from samsa.client import Consumer
from samsa.testing import BrokerProcess

from .test_groups_common import create_topic, wait_until


class Member:
    """A Samsa consumer-protocol consumer on its own thread."""

    def __init__(
        self, bootstrap: str, group: str, subscription: list[str] | re.Pattern[str], **extra: object
    ) -> None:
        self.config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            **extra,
        }
        self.subscription = subscription
        self.received: list[tuple[float, str, int, int]] = []
        self.assignment: set[tuple[str, int]] = set()
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        consumer = Consumer(self.config)
        try:
            consumer.subscribe(self.subscription)
            while not self._stop.is_set():
                for r in consumer.poll(0.05):
                    self.received.append((time.monotonic(), r.topic, r.partition, r.offset))
                self.assignment = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        except BaseException as exc:  # surfaced by close()
            self.failure = exc
        finally:
            consumer.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the consumer did not close"
        assert self.failure is None, self.failure


def _balanced(members: list[Member], partitions: int) -> bool:
    held = [len(m.assignment) for m in members]
    owned = sorted(p for m in members for _, p in m.assignment)
    return owned == list(range(partitions)) and max(held) - min(held) <= 1


def test_members_join_one_by_one_without_stopping_the_first(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "samsa-kip848-steady", "samsa-kip848-steady-g"
    create_topic(bootstrap, topic, 4)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    stop = threading.Event()

    def feed() -> None:
        for n in itertools.count():
            if stop.is_set():
                return
            for p in range(4):
                producer.produce(topic, str(n).encode(), partition=p)
            producer.poll(0)
            stop.wait(0.01)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    first = Member(bootstrap, group, [topic])
    others: list[Member] = []
    try:
        wait_until(lambda: len(first.assignment) == 4, 30, "the first member owning everything")
        for i in range(3):
            others.append(Member(bootstrap, group, [topic]))
            wait_until(lambda: _balanced([first, *others], 4), 30, f"member {i + 2} in")
        before = len(first.received)
        wait_until(lambda: len(first.received) > before, 10, "the first member still reading")
        times = [r[0] for r in first.received]
        gap = max(b - a for a, b in itertools.pairwise(times))
        assert gap < 3.0, f"longest gap in the first member's stream: {gap:.2f}s"
        leaving = others.pop()
        leaving.close()
        wait_until(lambda: _balanced([first, *others], 4), 30, "the leaver's partition moved")
    finally:
        stop.set()
        feeder.join(10)
        producer.flush(10)
        for m in [first, *others]:
            m.close()


def test_commits_survive_and_a_new_member_resumes_from_them(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "samsa-kip848-commit", "samsa-kip848-commit-g"
    create_topic(bootstrap, topic, 2)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        producer.produce(topic, str(i).encode(), partition=i % 2)
    assert producer.flush(10) == 0
    first = Member(bootstrap, group, [topic], **{"enable.auto.commit": True})
    wait_until(lambda: len(first.received) == 10, 30, "all ten records read")
    first.close()  # the final auto-commit carries the member epoch
    for i in range(4):
        producer.produce(topic, b"late", partition=i % 2)
    assert producer.flush(10) == 0
    second = Member(bootstrap, group, [topic])
    try:
        wait_until(lambda: len(second.received) == 4, 30, "only the four new records")
        assert sorted(r[3] for r in second.received) == [5, 5, 6, 6]
    finally:
        second.close()


def test_regex_subscription_is_evaluated_by_the_broker(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    create_topic(bootstrap, "samsa-kip848-rx-a", 1)
    member = Member(bootstrap, "samsa-kip848-rx-g", re.compile("samsa-kip848-rx-.*"))
    try:
        wait_until(lambda: member.assignment == {("samsa-kip848-rx-a", 0)}, 30, "topic a")
        create_topic(bootstrap, "samsa-kip848-rx-b", 1)
        wait_until(
            lambda: member.assignment == {("samsa-kip848-rx-a", 0), ("samsa-kip848-rx-b", 0)},
            30,
            "topic b picked up",
        )
    finally:
        member.close()


def test_static_member_returns_to_the_same_partitions(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "samsa-kip848-static", "samsa-kip848-static-g"
    create_topic(bootstrap, topic, 4)
    a = Member(bootstrap, group, [topic], **{"group.instance.id": "a"})
    b = Member(bootstrap, group, [topic], **{"group.instance.id": "b"})
    try:
        wait_until(lambda: _balanced([a, b], 4), 30, "a 2/2 split")
        held_a, held_b = set(a.assignment), set(b.assignment)
        a.close()
        a = Member(bootstrap, group, [topic], **{"group.instance.id": "a"})
        wait_until(lambda: a.assignment == held_a, 30, "a back on its partitions")
        assert b.assignment == held_b
    finally:
        a.close()
        b.close()


def test_a_new_subscribe_reaches_the_broker(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    create_topic(bootstrap, "samsa-kip848-resub-a", 1)
    create_topic(bootstrap, "samsa-kip848-resub-b", 2)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "samsa-kip848-resub-g",
            "group.protocol": "consumer",
        }
    )
    try:

        def holds(topics: set[str], count: int) -> bool:
            consumer.poll(0.05)
            held = consumer.assignment()
            return {tp.topic for tp in held} == topics and len(held) == count

        consumer.subscribe(["samsa-kip848-resub-a"])
        wait_until(lambda: holds({"samsa-kip848-resub-a"}, 1), 30, "topic a assigned")
        consumer.subscribe(["samsa-kip848-resub-b"])
        wait_until(lambda: holds({"samsa-kip848-resub-b"}, 2), 30, "topic b instead of a")
    finally:
        consumer.close()
