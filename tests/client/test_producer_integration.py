"""Samsa producer -> real broker (tansu peer) -> confluent-kafka consumer."""

from __future__ import annotations

from typing import Any

import pytest

from samsa.client import Producer
from samsa.client.errors import RecordTooLargeError
from samsa.client.producer.partitioner import murmur2, to_positive

pytestmark = pytest.mark.integration


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Any]:
    """Read every record of ``topic`` via confluent-kafka (assign, from the start)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "samsa-verify",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[Any] = []
    empty = 0
    while len(out) < expected and empty < 20:
        msgs = c.consume(1000, 0.5)
        empty = 0 if msgs else empty + 1
        out.extend(m for m in msgs if m.error() is None)
    c.close()
    return out


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_round_trips_keys_values_headers(
    bootstrap: str, topic_factory: Any, codec: str
) -> None:
    topic = topic_factory(3)
    with Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 2}) as p:
        futures = [
            p.send(
                topic,
                b"value-%d" % i * (1 + i % 5),
                key=b"key-%d" % (i % 17),
                headers=[("h", b"%d" % i), ("empty", None)],
            )
            for i in range(300)
        ]
        p.flush(30)
        metas = [f.result(10) for f in futures]
    got = consume_all(bootstrap, topic, 3, 300)
    assert len(got) == 300
    by_value = {(m.key(), m.value()): m for m in got}
    for i, md in enumerate(metas):
        key = b"key-%d" % (i % 17)
        m = by_value[(key, b"value-%d" % i * (1 + i % 5))]
        assert md.partition == m.partition() == to_positive(murmur2(key)) % 3
        assert md.offset == m.offset()
        assert dict(m.headers()) == {"h": b"%d" % i, "empty": None}


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_acks_levels(bootstrap: str, topic_factory: Any, acks: Any) -> None:
    topic = topic_factory(1)
    cfg = {"bootstrap.servers": bootstrap, "acks": acks, "enable.idempotence": acks == "all"}
    with Producer(cfg) as p:
        futures = [p.send(topic, b"a%d" % i) for i in range(100)]
        p.flush(30)
        offsets = [f.result(10).offset for f in futures]
    if acks == 0:
        assert offsets == [-1] * 100
    else:
        assert offsets == list(range(100))
    assert [m.value() for m in consume_all(bootstrap, topic, 1, 100)] == [
        b"a%d" % i for i in range(100)
    ]


def test_idempotent_producer_gets_a_producer_id_and_orders_records(
    bootstrap: str, topic_factory: Any
) -> None:
    topic = topic_factory(2)
    delivered: list[Any] = []
    with Producer({"bootstrap.servers": bootstrap, "batch.size": 200, "linger.ms": 0}) as p:
        for i in range(500):
            p.send(
                topic,
                b"%05d" % i,
                partition=i % 2,
                on_delivery=lambda md, err: delivered.append((md, err)),
            )
    assert len(delivered) == 500 and all(err is None for _, err in delivered)
    got = consume_all(bootstrap, topic, 2, 500)
    for part in (0, 1):
        values = [m.value() for m in got if m.partition() == part]
        assert values == [b"%05d" % i for i in range(part, 500, 2)]


def test_oversized_record_fails_alone(bootstrap: str, topic_factory: Any) -> None:
    topic = topic_factory(1)
    with Producer({"bootstrap.servers": bootstrap, "max.request.size": 10000}) as p:
        ok1 = p.send(topic, b"small")
        big = p.send(topic, b"x" * 20000)
        ok2 = p.send(topic, b"small2")
        p.flush(30)
        with pytest.raises(RecordTooLargeError):
            big.result(5)
        assert ok1.result(5).offset == 0 and ok2.result(5).offset == 1


def test_partitions_for_and_serializers(bootstrap: str, topic_factory: Any) -> None:
    topic = topic_factory(4)
    cfg = {
        "bootstrap.servers": bootstrap,
        "key.serializer": lambda k: k.encode(),
        "value.serializer": lambda v: str(v).encode(),
    }
    with Producer(cfg) as p:
        assert [pi.partition for pi in p.partitions_for(topic)] == [0, 1, 2, 3]
        md = p.send(topic, 42, key="answer").result(10)
    assert md.partition == to_positive(murmur2(b"answer")) % 4


def test_our_partitioner_agrees_with_librdkafka_murmur2(bootstrap: str, topic_factory: Any) -> None:
    from confluent_kafka import Producer as CProducer

    topic = topic_factory(7)
    placed: dict[bytes, int] = {}
    cp = CProducer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    keys = [b"user-%d" % i for i in range(200)]

    def record(err: Any, msg: Any) -> None:
        assert err is None
        placed[msg.key()] = msg.partition()

    for k in keys:
        cp.produce(topic, b"v", key=k, on_delivery=record)
    cp.flush(30)
    assert len(placed) == 200
    for k in keys:
        assert placed[k] == to_positive(murmur2(k)) % 7


def test_close_resolves_every_future(bootstrap: str, topic_factory: Any) -> None:
    topic = topic_factory(1)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1000})
    futures = [p.send(topic, b"c%d" % i) for i in range(50)]
    p.close(10)
    assert all(f.done() for f in futures)
    assert [f.result(0).offset for f in futures] == list(range(50))


def test_a_batch_the_broker_refuses_does_not_wedge_its_partition(
    samsa_session_broker: Any,
) -> None:
    """The refused batch had sequence numbers; without an epoch bump every later batch
    of the partition was refused OUT_OF_ORDER_SEQUENCE_NUMBER until it expired."""
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = "refused-batch"
    admin = AdminClient({"bootstrap.servers": samsa_session_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"max.message.bytes": "2000"})])[
        topic
    ].result(15)
    config = {
        "bootstrap.servers": samsa_session_broker.bootstrap,
        "enable.idempotence": True,
        "request.timeout.ms": 10000,
        "delivery.timeout.ms": 20000,
    }
    with Producer(config) as p:
        first = p.send(topic, b"a" * 10, partition=0)
        p.flush(10)
        refused = p.send(topic, b"b" * 5000, partition=0)
        p.flush(10)
        after = p.send(topic, b"c" * 10, partition=0)
        p.flush(10)
        with pytest.raises(RecordTooLargeError):
            refused.result(0)
        assert first.result(0).offset == 0
        assert after.result(0).offset == 1
