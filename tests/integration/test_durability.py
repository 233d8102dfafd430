"""Restarts, crashes and torn tails: acknowledged data survives, corrupt tails are cut."""

from __future__ import annotations

import time
from pathlib import Path

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


def test_restart_keeps_every_record(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        _create(broker.bootstrap, "durable")
        _produce(broker.bootstrap, "durable", 500)
        assert broker.stop() == 0, "clean shutdown must exit 0"
        broker.start()
        values = _read(broker.bootstrap, "durable", 500)
        assert values == [b"value-%06d" % i for i in range(500)]
        _produce(broker.bootstrap, "durable", 10, start=500)
        assert len(_read(broker.bootstrap, "durable", 510)) == 510
    finally:
        broker.kill()


def test_sigkill_and_torn_tail_are_recovered(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        _create(broker.bootstrap, "torn")
        _produce(broker.bootstrap, "torn", 300)
        broker.kill()
        segment = sorted((tmp_path / "data" / "torn-0").glob("*.log"))[-1]
        intact = segment.stat().st_size
        with open(segment, "r+b") as fh:  # tear the tail: half a batch of garbage
            fh.seek(intact)
            fh.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"\xde\xad" * 40)
        broker.start()
        assert "[torn-0] recovery truncated" in broker.log_text(), (
            "recovery must say what it dropped"
        )
        values = _read(broker.bootstrap, "torn", 300)
        assert values == [b"value-%06d" % i for i in range(300)]
        _produce(broker.bootstrap, "torn", 5, start=300)
        assert len(_read(broker.bootstrap, "torn", 305)) == 305
    finally:
        broker.kill()


def test_corrupt_last_batch_is_dropped(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        _create(broker.bootstrap, "crc")
        _produce(broker.bootstrap, "crc", 100)
        _produce(broker.bootstrap, "crc", 1, start=100)  # one more batch, the one we corrupt
        broker.kill()
        segment = sorted((tmp_path / "data" / "crc-0").glob("*.log"))[-1]
        data = bytearray(segment.read_bytes())
        data[-3] ^= 0xFF  # flip a byte inside the last batch's records: its CRC no longer matches
        segment.write_bytes(bytes(data))
        broker.start()
        values = _read(broker.bootstrap, "crc", 100)
        assert values == [b"value-%06d" % i for i in range(100)]
    finally:
        broker.kill()
