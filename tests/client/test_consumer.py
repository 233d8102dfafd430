"""Samsa Consumer on both brokers (tansu and Samsa), with confluent-kafka producing (interop)."""

from __future__ import annotations

import time

import pytest

from conftest import BrokerAddress
from samsa.client.consumer import Consumer, ConsumerRecord, TopicPartition
from samsa.errors import ConfigError

confluent_kafka = pytest.importorskip("confluent_kafka")
pytestmark = pytest.mark.integration


def create_topic(broker: BrokerAddress, name: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(10)


def produce(broker: BrokerAddress, topic: str, records: list[dict], **conf: object) -> None:
    p = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, **conf})
    for r in records:
        p.produce(topic, **r)
    assert p.flush(10) == 0


def consume_n(c: Consumer, n: int, timeout_s: float = 15.0) -> list[ConsumerRecord]:
    out: list[ConsumerRecord] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < n and time.monotonic() < deadline:
        out += c.poll(0.5)
    return out


def test_bad_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown consumer config"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "group_id": "x"})
    with pytest.raises(ConfigError, match=r"auto\.offset\.reset"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "auto.offset.reset": "first"})
    with pytest.raises(ConfigError, match="heartbeat"):
        Consumer(
            {
                "bootstrap.servers": "127.0.0.1:1",
                "heartbeat.interval.ms": 5000,
                "session.timeout.ms": 4000,
            }
        )


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_assign_reads_every_codec_with_keys_headers_and_nulls(
    broker: BrokerAddress, codec: str
) -> None:
    topic = f"codec-{codec}"
    create_topic(broker, topic, 2)
    records = [
        {
            "value": None if i % 10 == 0 else b"value-%d" % i,
            "key": None if i % 7 == 0 else b"key-%d" % i,
            "headers": [("h", b"%d" % i), ("empty", None)] if i % 3 == 0 else None,
            "partition": i % 2,
        }
        for i in range(500)
    ]
    produce(broker, topic, records, **{"compression.type": codec})
    with Consumer({"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest"}) as c:
        c.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        got = consume_n(c, 500)
    assert len(got) == 500
    by_partition: dict[int, list[ConsumerRecord]] = {0: [], 1: []}
    for r in got:
        by_partition[r.partition].append(r)
    for partition, recs in by_partition.items():
        assert [r.offset for r in recs] == list(range(250))
        for r in recs:
            i = r.offset * 2 + partition
            src = records[i]
            assert (r.key, r.value) == (src["key"], src["value"])
            assert r.headers == tuple(src["headers"] or ())
            assert r.topic == topic and r.timestamp > 0


def test_seek_position_and_offset_queries(broker: BrokerAddress) -> None:
    topic = "seeks"
    create_topic(broker, topic, 1)
    produce(broker, topic, [{"value": b"%d" % i} for i in range(100)])
    tp = TopicPartition(topic, 0)
    with Consumer({"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest"}) as c:
        c.assign([tp])
        assert c.position(tp) == 0
        assert c.beginning_offsets([tp]) == {tp: 0}
        c.seek(tp, 42)
        first = consume_n(c, 1)[0]
        assert (first.offset, first.value) == (42, b"42")
        c.seek_to_beginning([tp])
        assert consume_n(c, 1)[0].offset == 0
        found = c.offsets_for_times({tp: 0})[tp]
        assert found is not None and found.offset == 0


def test_latest_reset_sees_only_new_records(broker: BrokerAddress) -> None:
    topic = "latest"
    create_topic(broker, topic, 1)
    produce(broker, topic, [{"value": b"old"}])
    tp = TopicPartition(topic, 0)
    with Consumer({"bootstrap.servers": broker.bootstrap}) as c:
        c.assign([tp])
        assert c.position(tp) == 1
        produce(broker, topic, [{"value": b"new"}])
        got = consume_n(c, 1)
        assert [r.value for r in got] == [b"new"]


def test_pause_and_resume(broker: BrokerAddress) -> None:
    topic = "pausing"
    create_topic(broker, topic, 2)
    produce(broker, topic, [{"value": b"x", "partition": i % 2} for i in range(20)])
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    with Consumer({"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest"}) as c:
        c.assign([p0, p1])
        c.pause([p1])
        got = consume_n(c, 10)
        assert {r.partition for r in got} == {0}
        c.resume([p1])
        got = consume_n(c, 10)
        assert {r.partition for r in got} == {1}


def test_deserializers_apply(broker: BrokerAddress) -> None:
    topic = "deser"
    create_topic(broker, topic, 1)
    produce(broker, topic, [{"value": b"12", "key": b"k"}])
    conf = {
        "bootstrap.servers": broker.bootstrap,
        "auto.offset.reset": "earliest",
        "key.deserializer": lambda b: b.decode(),
        "value.deserializer": lambda b: int(b),
    }
    with Consumer(conf) as c:
        c.assign([(topic, 0)])
        (r,) = consume_n(c, 1)
        assert (r.key, r.value) == ("k", 12)
