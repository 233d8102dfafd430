"""Share groups (KIP-932) with librdkafka's share consumer against a real broker.

Each consumer polls in its own thread (or, to be killed, its own process);
every wait ends on what the consumers receive, bounded, never on a sleep.
The broker runs with a short acquisition lock and delivery limit so the lock
expiry and the archiving of a poison record happen within a few seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import AcknowledgeType, Message, Producer, ShareConsumer

from samsa.testing import BrokerProcess

from .test_bad_input import RawClient
from .test_groups_common import create_topic, wait_until

LOCK_MS = 3000
DELIVERY_LIMIT = 3
SHARE_SETTINGS = {
    "share.auto.offset.reset": "earliest",
    "group.share.record.lock.duration.ms": str(LOCK_MS),
    "group.share.delivery.count.limit": str(DELIVERY_LIMIT),
    "group.share.heartbeat.interval.ms": "300",
    "group.share.session.timeout.ms": "6000",
    "share.coordinator.state.topic.num.partitions": "4",
}

Received = tuple[int, int]  # partition, offset


@pytest.fixture(scope="module")
def share_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("share") / "data", SHARE_SETTINGS) as proc:
        yield proc


def share_consumer(bootstrap: str, group: str, **extra: object) -> ShareConsumer:
    return ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, **extra})


def produce(bootstrap: str, topic: str, values: list[tuple[int, bytes]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition, value in values:
        producer.produce(topic, value=value, partition=partition)
    assert producer.flush(15) == 0


class Polling:
    """A share consumer polled by its own thread (implicit acknowledgement)."""

    def __init__(self, consumer: ShareConsumer, topic: str) -> None:
        self.consumer = consumer
        self.received: list[Message] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        consumer.subscribe([topic])
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for message in self.consumer.poll(0.2):
                if message.error() is not None:
                    self.errors.append(str(message.error()))
                    continue
                with self._lock:
                    self.received.append(message)

    def delivered(self) -> list[Received]:
        with self._lock:
            return [(m.partition(), m.offset()) for m in self.received]

    def close(self) -> None:
        self._stop.set()
        self.thread.join(15)
        self.consumer.close()


def assigned_members(bootstrap: str, group: str) -> int:
    """How many members of a share group the broker has given partitions
    (ShareGroupDescribe); 0 while the group does not exist yet."""
    client = RawClient(bootstrap)
    try:
        (described,) = client.call(77, 1, {"group_ids": [group]})["groups"]
    finally:
        client.close()
    if described["error_code"]:
        return 0
    return sum(1 for m in described["members"] if m["assignment"]["topic_partitions"])


def test_five_share_consumers_on_two_partitions_process_each_record_once(
    share_broker: BrokerProcess, topic_name: str
) -> None:
    boot = share_broker.bootstrap
    create_topic(boot, topic_name, 2)
    total = 2000
    members = [Polling(share_consumer(boot, "five"), topic_name) for _ in range(5)]
    try:
        # Produced only once every member holds an assignment: records waiting
        # before the others joined could all go to the first one, and the test
        # would not show them shared.
        wait_until(lambda: assigned_members(boot, "five") == 5, 30, "five members assigned")
        produce(boot, topic_name, [(i % 2, f"r{i}".encode()) for i in range(total)])

        def everything() -> list[Received]:
            return [k for m in members for k in m.delivered()]

        wait_until(lambda: len(set(everything())) >= total, 60, "every record delivered")
        # One more record per partition, delivered after the acknowledgements of
        # all the earlier ones were sent: a lost acknowledgement would have the
        # earlier records redelivered before the markers.
        produce(boot, topic_name, [(0, b"end"), (1, b"end")])
        wait_until(lambda: len(set(everything())) >= total + 2, 60, "the end markers")
        got = Counter(everything())
        assert len(got) == total + 2
        assert [k for k, n in got.items() if n > 1] == []
        assert sum(1 for m in members if m.delivered()) >= 2, "the partitions were not shared"
        assert all(not m.errors for m in members), [m.errors for m in members]
    finally:
        for m in members:
            m.close()


VICTIM = """
import json, sys, time
from confluent_kafka import ShareConsumer
c = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2]})
c.subscribe([sys.argv[3]])
while True:
    got = [m for m in c.poll(1.0) if m.error() is None]
    if got:
        print(json.dumps([[m.partition(), m.offset()] for m in got]), flush=True)
        time.sleep(3600)
"""


def test_records_of_a_killed_consumer_go_to_another_after_the_lock_timeout(
    share_broker: BrokerProcess, topic_name: str
) -> None:
    boot = share_broker.bootstrap
    create_topic(boot, topic_name, 1)
    produce(boot, topic_name, [(0, f"r{i}".encode()) for i in range(50)])
    victim = subprocess.Popen(
        [sys.executable, "-c", VICTIM, boot, "killed", topic_name],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        assert victim.stdout is not None
        line = victim.stdout.readline()  # bounded by the test timeout
        held = {(p, o) for p, o in json.loads(line)}
        assert held
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
    finally:
        victim.kill()
    survivor = Polling(share_consumer(boot, "killed"), topic_name)
    try:
        wait_until(
            lambda: held <= set(survivor.delivered()),
            LOCK_MS / 1000 + 30,
            "the killed one's records",
        )
        redelivered = [m for m in survivor.received if (m.partition(), m.offset()) in held]
        assert all(m.delivery_count() >= 2 for m in redelivered)
        assert {o for _, o in survivor.delivered()} == set(range(50))
    finally:
        survivor.close()


def test_a_poison_record_is_archived_after_the_delivery_limit(
    share_broker: BrokerProcess, topic_name: str
) -> None:
    boot = share_broker.bootstrap
    create_topic(boot, topic_name, 1)
    produce(boot, topic_name, [(0, b"ok-1"), (0, b"poison"), (0, b"ok-2")])
    consumer = share_consumer(boot, "poison", **{"share.acknowledgement.mode": "explicit"})
    consumer.subscribe([topic_name])
    seen: Counter[bytes] = Counter()

    def poll_until(value: bytes, timeout: float) -> None:
        def step() -> bool:
            for m in consumer.poll(0.2):
                if m.error() is not None:
                    continue
                seen[m.value()] += 1
                kind = AcknowledgeType.RELEASE if m.value() == b"poison" else AcknowledgeType.ACCEPT
                consumer.acknowledge(m, kind)
            return seen[value] > 0 and seen[b"poison"] >= DELIVERY_LIMIT

        wait_until(step, timeout, f"{value!r} and the poison record {DELIVERY_LIMIT} times")

    try:
        poll_until(b"ok-2", 60)
        produce(boot, topic_name, [(0, b"after")])
        poll_until(b"after", 60)
        assert seen[b"poison"] == DELIVERY_LIMIT
        assert seen[b"ok-1"] == seen[b"ok-2"] == seen[b"after"] == 1
    finally:
        consumer.close()


def test_share_group_describe_and_bad_requests(
    share_broker: BrokerProcess, topic_name: str
) -> None:
    boot = share_broker.bootstrap
    create_topic(boot, topic_name, 2)
    client = RawClient(boot)
    joined = client.call(
        76,
        1,
        {
            "group_id": "described",
            "member_id": "m-1",
            "member_epoch": 0,
            "subscribed_topic_names": [topic_name],
        },
    )
    assert joined["error_code"] == 0 and joined["member_epoch"] == 1
    parts = joined["assignment"]["topic_partitions"][0]["partitions"]
    assert sorted(parts) == [0, 1]
    fenced = client.call(76, 1, {"group_id": "described", "member_id": "m-1", "member_epoch": 7})
    assert fenced["error_code"] == 110  # FENCED_MEMBER_EPOCH
    unknown = client.call(76, 1, {"group_id": "described", "member_id": "x", "member_epoch": 3})
    assert unknown["error_code"] == 25  # UNKNOWN_MEMBER_ID
    described = client.call(77, 1, {"group_ids": ["described", "nope"]})["groups"]
    assert described[0]["group_state"] == "Stable"
    assert described[0]["members"][0]["assignment"]["topic_partitions"][0]["topic_name"] == (
        topic_name
    )
    assert described[1]["error_code"] == 69  # GROUP_ID_NOT_FOUND
    no_session = client.call(
        79,
        1,
        {"group_id": "described", "member_id": "m-1", "share_session_epoch": 3, "topics": []},
    )
    assert no_session["error_code"] == 122  # SHARE_SESSION_NOT_FOUND
    left = client.call(76, 1, {"group_id": "described", "member_id": "m-1", "member_epoch": -1})
    assert left["error_code"] == 0 and left["member_epoch"] == -1


def test_share_group_offsets_describe_reset_and_delete(
    share_broker: BrokerProcess, topic_name: str
) -> None:
    boot = share_broker.bootstrap
    create_topic(boot, topic_name, 1)
    produce(boot, topic_name, [(0, f"r{i}".encode()) for i in range(10)])
    client = RawClient(boot)
    reader = Polling(share_consumer(boot, "offsets"), topic_name)
    try:
        wait_until(lambda: len(reader.delivered()) >= 10, 30, "the ten records")
        busy = client.call(
            91,
            0,
            {
                "group_id": "offsets",
                "topics": [
                    {
                        "topic_name": topic_name,
                        "partitions": [{"partition_index": 0, "start_offset": 0}],
                    }
                ],
            },
        )
        assert busy["error_code"] == 68  # NON_EMPTY_GROUP: its members read the current state
    finally:
        reader.close()  # acknowledges what it read and leaves

    def start_offset() -> int:
        body = {"groups": [{"group_id": "offsets", "topics": None}]}
        (group,) = client.call(90, 0, body)["groups"]
        (topic,) = group["topics"]
        assert topic["topic_name"] == topic_name
        return int(topic["partitions"][0]["start_offset"])

    wait_until(lambda: start_offset() == 10, 30, "the start offset past the ten records")
    reset = client.call(
        91,
        0,
        {
            "group_id": "offsets",
            "topics": [
                {
                    "topic_name": topic_name,
                    "partitions": [{"partition_index": 0, "start_offset": 6}],
                }
            ],
        },
    )
    assert reset["error_code"] == 0
    assert reset["responses"][0]["partitions"][0]["error_code"] == 0
    assert start_offset() == 6
    again = Polling(share_consumer(boot, "offsets"), topic_name)
    try:
        wait_until(lambda: len(again.delivered()) >= 4, 30, "the records after the reset")
        assert sorted(o for _, o in again.delivered()) == [6, 7, 8, 9]
    finally:
        again.close()
    deleted = client.call(92, 0, {"group_id": "offsets", "topics": [{"topic_name": topic_name}]})
    assert deleted["error_code"] == 0 and deleted["responses"][0]["error_code"] == 0
    body = {"groups": [{"group_id": "offsets", "topics": None}]}
    assert client.call(90, 0, body)["groups"][0]["topics"] == []
