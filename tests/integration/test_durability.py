"""Restarts, crashes and torn tails: acknowledged data survives, corrupt tails are cut."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess


def _create(bootstrap: str, topic: str) -> None:
    client = AdminClient({"bootstrap.servers": bootstrap})
    client.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


def _produce(bootstrap: str, topic: str, count: int, start: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, "acks": "all"})
    for i in range(start, start + count):
        producer.produce(topic, key=b"k%d" % i, value=b"value-%06d" % i)
    assert producer.flush(20) == 0


def _read(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "durability", "enable.partition.eof": True}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            if len(values) >= expected:
                break
            continue
        values.append(msg.value())
    consumer.close()
    return values


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A broker of this test alone: these tests stop, kill and restart it."""
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        yield broker
    finally:
        broker.kill()


def _values(count: int) -> list[bytes]:
    return [b"value-%06d" % i for i in range(count)]


def _last_segment(broker: BrokerProcess, topic: str) -> Path:
    return sorted((broker.data_dir / f"{topic}-0").glob("*.log"))[-1]


def test_restart_keeps_every_record(own_broker: BrokerProcess) -> None:
    _create(own_broker.bootstrap, "durable")
    _produce(own_broker.bootstrap, "durable", 500)
    assert own_broker.stop() == 0, "clean shutdown must exit 0"
    own_broker.start()
    assert _read(own_broker.bootstrap, "durable", 500) == _values(500)
    _produce(own_broker.bootstrap, "durable", 10, start=500)
    assert _read(own_broker.bootstrap, "durable", 510) == _values(510)


def test_sigkill_and_torn_tail_are_recovered(own_broker: BrokerProcess) -> None:
    _create(own_broker.bootstrap, "torn")
    _produce(own_broker.bootstrap, "torn", 300)
    own_broker.kill()
    with open(_last_segment(own_broker, "torn"), "ab") as fh:  # a torn tail: half a batch
        fh.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"\xde\xad" * 40)
    own_broker.start()
    assert own_broker.wait_for_log("[torn-0] recovery truncated"), (
        "recovery must say what it dropped"
    )
    assert _read(own_broker.bootstrap, "torn", 300) == _values(300)
    _produce(own_broker.bootstrap, "torn", 5, start=300)
    assert _read(own_broker.bootstrap, "torn", 305) == _values(305)


def test_corrupt_last_batch_is_dropped(own_broker: BrokerProcess) -> None:
    _create(own_broker.bootstrap, "crc")
    _produce(own_broker.bootstrap, "crc", 100)
    _produce(own_broker.bootstrap, "crc", 1, start=100)  # one more batch, the one we corrupt
    own_broker.kill()
    segment = _last_segment(own_broker, "crc")
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF  # flip a byte inside the last batch's records: its CRC no longer matches
    segment.write_bytes(bytes(data))
    own_broker.start()
    assert _read(own_broker.bootstrap, "crc", 100) == _values(100)
