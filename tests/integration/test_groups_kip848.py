"""KIP-848 consumer groups (``group.protocol=consumer``) with librdkafka against a real broker.

Each consumer polls in its own thread, as an application would; assertions wait
on what the consumers observe (records, assignments), never on sleeps.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from samsa.errors import ErrorCode
from samsa.testing import BrokerProcess

from .conftest import KIP848_SETTINGS
from .test_bad_input import RawClient
from .test_groups_common import create_topic, wait_until


def _produce_one_each(bootstrap: str, topic: str, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(partitions):
        producer.produce(topic, b"x", partition=p)
    assert producer.flush(10) == 0


def _consumer(bootstrap: str, group: str, **extra: object) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **extra,
        }
    )


class Polling:
    """A consumer polled by its own thread; records what it received and when."""

    def __init__(self, consumer: Consumer, topics: list[str] | None = None) -> None:
        self.consumer = consumer
        self.received: list[tuple[float, str, int, int]] = []
        self.errors: list[KafkaError] = []
        self.assignment: set[tuple[str, int]] = set()
        self._stop = threading.Event()
        if topics is not None:
            consumer.subscribe(topics)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self.consumer.poll(0.05)
            self.assignment = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
            if msg is None:
                continue
            if msg.error():
                self.errors.append(msg.error())
                continue
            self.received.append((time.monotonic(), msg.topic(), msg.partition(), msg.offset()))

    def stop_polling(self) -> None:
        """Stop the poll thread: librdkafka 2.16 can leave a synchronous commit from
        another thread waiting while this one polls, so tests commit after this."""
        self._stop.set()
        self.thread.join(10)

    def close(self) -> None:
        self.stop_polling()
        self.consumer.close()


class Feeder:
    """Produces to every partition of a topic until stopped (a steady stream to read)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic, self.partitions = topic, partitions
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            for p in range(self.partitions):
                self.producer.produce(self.topic, value=str(n).encode(), partition=p)
            n += 1
            self.producer.poll(0)
            self._stop.wait(0.01)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(10)
        self.producer.flush(10)


def _balanced(members: list[Polling], partitions: int) -> bool:
    """Every partition held by exactly one member, each member holding its share."""
    held = [len(m.assignment) for m in members]
    owned = sorted(p for m in members for _, p in m.assignment)
    return owned == list(range(partitions)) and max(held) - min(held) <= 1


def test_running_member_keeps_receiving_while_five_join(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "kip848-steady", "kip848-steady-g"
    create_topic(bootstrap, topic, 6)
    feeder = Feeder(bootstrap, topic, 6)
    first = Polling(_consumer(bootstrap, group), [topic])
    others: list[Polling] = []
    try:
        wait_until(lambda: len(first.assignment) == 6, 30, "the first member owning all 6")
        for i in range(5):
            joined_at = time.monotonic()
            others.append(Polling(_consumer(bootstrap, group), [topic]))
            wait_until(
                lambda: _balanced([first, *others], 6), 30, f"member {i + 2} receiving its share"
            )
            got = len([r for r in first.received if r[0] > joined_at])
            wait_until(
                lambda got=got, at=joined_at: len([r for r in first.received if r[0] > at]) > got,
                10,
                "the first member still receiving after the join",
            )
        times = [r[0] for r in first.received]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        # Heartbeats every 300 ms: a revocation round trip costs a few of them, never
        # a stop-the-world rebalance of the whole group.
        assert max(gaps) < 3.0, f"longest gap in the first member's stream: {max(gaps):.2f}s"
        assert not first.errors
    finally:
        feeder.close()
        for m in [first, *others]:
            m.close()


def test_regex_subscription_picks_up_new_topic(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    create_topic(bootstrap, "kip848-rx-a", 2)
    member = Polling(_consumer(bootstrap, "kip848-rx-g"), ["^kip848-rx-.*"])
    try:
        wait_until(lambda: len(member.assignment) == 2, 30, "the existing topic assigned")
        create_topic(bootstrap, "kip848-rx-b", 3)
        wait_until(
            lambda: (
                {t for t, _ in member.assignment} == {"kip848-rx-a", "kip848-rx-b"}
                and len(member.assignment) == 5
            ),
            30,
            "the new topic assigned",
        )
    finally:
        member.close()


def test_invalid_regex_is_refused(kip848_broker: BrokerProcess) -> None:
    # librdkafka checks regexes itself, so this one is sent as a raw heartbeat.
    raw = RawClient(kip848_broker.bootstrap)
    body = {
        "group_id": "kip848-badrx-g",
        "member_id": "m-1",
        "member_epoch": 0,
        "rebalance_timeout_ms": 30000,
        "subscribed_topic_regex": "kip848-(unclosed",
        "topic_partitions": [],
    }
    try:
        # The first group request of a fresh broker may find its coordinator loading
        # (Kafka checks the regex in the coordinator too, so it answers that first).
        deadline = time.monotonic() + 20
        answer = raw.call(68, 1, body)
        while answer["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            assert time.monotonic() < deadline, answer
            time.sleep(0.05)
            answer = raw.call(68, 1, body)
    finally:
        raw.close()
    assert answer["error_code"] == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert "kip848-(unclosed" in answer["error_message"]


def test_static_member_rejoins_without_reassignment(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "kip848-static", "kip848-static-g"
    create_topic(bootstrap, topic, 4)
    a = Polling(_consumer(bootstrap, group, **{"group.instance.id": "a"}), [topic])
    b = Polling(_consumer(bootstrap, group, **{"group.instance.id": "b"}), [topic])
    try:
        wait_until(lambda: len(a.assignment) == 2 and len(b.assignment) == 2, 30, "a 2/2 split")
        before_a, before_b = set(a.assignment), set(b.assignment)
        epoch_before = _group_epoch(bootstrap, group)
        a.close()
        a = Polling(_consumer(bootstrap, group, **{"group.instance.id": "a"}), [topic])
        wait_until(lambda: a.assignment == before_a, 30, "a getting its partitions back")
        assert b.assignment == before_b
        assert _group_epoch(bootstrap, group) == epoch_before, "the rejoin rebalanced the group"
    finally:
        a.close()
        b.close()


def _describe(bootstrap: str, group: str) -> dict[str, Any]:
    """ConsumerGroupDescribe (librdkafka does not expose epochs)."""
    raw = RawClient(bootstrap)
    try:
        answer = raw.call(69, 0, {"group_ids": [group], "include_authorized_operations": False})
    finally:
        raw.close()
    (described,) = answer["groups"]
    assert described["error_code"] == 0, described
    return described


def _group_epoch(bootstrap: str, group: str) -> int:
    return int(_describe(bootstrap, group)["group_epoch"])


def _raw_commit(
    bootstrap: str, group: str, member_id: str, epoch: int, topic: str, offset: int
) -> int:
    """OffsetCommit v9 of partition 0 as a given member at a given epoch; its error code."""
    raw = RawClient(bootstrap)
    try:
        answer = raw.call(
            8,
            9,
            {
                "group_id": group,
                "generation_id_or_member_epoch": epoch,
                "member_id": member_id,
                "group_instance_id": None,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": 0,
                                "committed_offset": offset,
                                "committed_leader_epoch": -1,
                                "committed_metadata": None,
                            }
                        ],
                    }
                ],
            },
        )
    finally:
        raw.close()
    return int(answer["topics"][0]["partitions"][0]["error_code"])


def test_stale_commit_is_fenced(kip848_broker: BrokerProcess) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "kip848-commit", "kip848-commit-g"
    create_topic(bootstrap, topic, 2)
    _produce_one_each(bootstrap, topic, 2)
    member = Polling(_consumer(bootstrap, group), [topic])
    try:
        wait_until(lambda: len(member.received) == 2, 30, "both records read")
        member.stop_polling()
        member.consumer.commit(
            offsets=[TopicPartition(topic, 0, 1), TopicPartition(topic, 1, 1)], asynchronous=False
        )
        outsider = _consumer(bootstrap, group)
        try:
            # Not a member of the group: the coordinator refuses (UNKNOWN_MEMBER_ID).
            with pytest.raises(KafkaException):
                outsider.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
        finally:
            outsider.close()
        (described,) = _describe(bootstrap, group)["members"]
        member_id, epoch = described["member_id"], described["member_epoch"]
        assert _raw_commit(bootstrap, group, member_id, epoch - 1, topic, 9) == (
            ErrorCode.STALE_MEMBER_EPOCH
        )
        assert _raw_commit(bootstrap, group, "not-a-member", epoch, topic, 9) == (
            ErrorCode.UNKNOWN_MEMBER_ID
        )
        committed = member.consumer.committed([TopicPartition(topic, 0)], timeout=15)
        assert committed[0].offset == 1, "a refused commit changed the committed offset"
        assert _raw_commit(bootstrap, group, member_id, epoch, topic, 2) == ErrorCode.NONE
    finally:
        member.close()


def test_group_survives_broker_restart(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", KIP848_SETTINGS)
    broker.start()
    try:
        topic, group = "kip848-restart", "kip848-restart-g"
        create_topic(broker.bootstrap, topic, 4)
        _produce_one_each(broker.bootstrap, topic, 4)
        member = Polling(_consumer(broker.bootstrap, group, **{"group.instance.id": "m"}), [topic])
        try:
            wait_until(lambda: len(member.received) == 4, 30, "the member reading everything")
            member.stop_polling()
            member.consumer.commit(
                offsets=[TopicPartition(topic, p, 1) for p in range(4)], asynchronous=False
            )
        finally:
            member.close()
        broker.restart()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        listed = admin.list_consumer_groups().result(15)
        kinds = {g.group_id: g for g in listed.valid}
        assert group in kinds
        assert str(kinds[group].type).endswith("CONSUMER")
        again = Polling(_consumer(broker.bootstrap, group, **{"group.instance.id": "m"}), [topic])
        try:
            wait_until(lambda: len(again.assignment) == 4, 30, "the member back after restart")
            # librdkafka 2.16 can block committed() for good while another thread
            # polls the same consumer: ask only once the poller has stopped.
            again.stop_polling()
            committed = again.consumer.committed(
                [TopicPartition(topic, p) for p in range(4)], timeout=15
            )
            assert [tp.offset for tp in committed] == [1, 1, 1, 1]
        finally:
            again.close()
    finally:
        broker.stop()
        broker.kill()


def test_empty_classic_group_upgrades_and_resumes_from_its_offsets(
    kip848_broker: BrokerProcess,
) -> None:
    bootstrap = kip848_broker.bootstrap
    topic, group = "kip848-upgrade", "kip848-upgrade-g"
    create_topic(bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(6):
        producer.produce(topic, str(i).encode(), partition=0)
    assert producer.flush(10) == 0
    classic = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": 6000,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    classic.subscribe([topic])
    try:
        deadline = time.monotonic() + 30
        while not classic.assignment() and time.monotonic() < deadline:
            classic.poll(0.05)
        classic.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    finally:
        classic.close()  # leaves: the classic group is now empty
    upgraded = Polling(_consumer(bootstrap, group), [topic])
    try:
        wait_until(lambda: len(upgraded.received) >= 2, 30, "the upgraded group reading")
        assert [r[3] for r in upgraded.received[:2]] == [4, 5]
        described = _describe(bootstrap, group)
        assert described["group_state"] in ("Stable", "Reconciling")
    finally:
        upgraded.close()
