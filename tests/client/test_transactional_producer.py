"""Samsa's transactional Producer against a real broker, read by both clients' read_committed.

The Java client's API: init_transactions, begin_transaction,
send_offsets_to_transaction, commit_transaction, abort_transaction; a newer
instance with the same transactional.id fences the older one, whose next
transactional call raises ProducerFencedError.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from samsa.client import Consumer, Producer
from samsa.client.producer.transactions import ProducerFencedError
from samsa.errors import KafkaError
from samsa.testing import BrokerProcess

ck = pytest.importorskip("confluent_kafka")
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    broker = BrokerProcess(Path(tmp_path_factory.mktemp("txn-client")) / "data")
    broker.start()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()
        broker.kill()


def new_topic(bootstrap: str, partitions: int = 2) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"ctx-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the result
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
    return name


def samsa_read_committed(bootstrap: str, topic: str, partitions: int, want: int) -> list[bytes]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )
    try:
        c.assign([(topic, p) for p in range(partitions)])
        out: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(out) < want and time.monotonic() < deadline:
            out += [r.value for r in c.poll(0.2)]
        return out
    finally:
        c.close()


def confluent_read_committed(bootstrap: str, topic: str, partitions: int, want: int) -> list[bytes]:
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([ck.TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[bytes] = []
    deadline = time.monotonic() + 20
    try:
        while len(out) < want and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                out.append(msg.value())
    finally:
        c.close()
    return out


def test_commit_and_abort_across_partitions(bootstrap: str) -> None:
    topic = new_topic(bootstrap)
    with Producer({"bootstrap.servers": bootstrap, "transactional.id": f"s-{topic}"}) as p:
        p.init_transactions(20)
        p.begin_transaction()
        for i in range(4):
            p.send(topic, b"c%d" % i, partition=i % 2)
        p.commit_transaction(20)
        p.begin_transaction()
        for i in range(4):
            p.send(topic, b"a%d" % i, partition=i % 2)
        p.flush(10)
        p.abort_transaction(20)
        p.begin_transaction()
        p.send(topic, b"c4", partition=0)
        p.commit_transaction(20)
    expected = [b"c0", b"c1", b"c2", b"c3", b"c4"]
    assert sorted(samsa_read_committed(bootstrap, topic, 2, 5)) == expected
    assert sorted(confluent_read_committed(bootstrap, topic, 2, 5)) == expected


def test_offsets_commit_with_the_transaction(bootstrap: str) -> None:
    source, sink = new_topic(bootstrap, 1), new_topic(bootstrap, 1)
    with Producer({"bootstrap.servers": bootstrap}) as seed:
        for i in range(3):
            seed.send(source, b"in%d" % i)
    group = f"grp-{source}"
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([source])
    taken = []
    deadline = time.monotonic() + 20
    while len(taken) < 3 and time.monotonic() < deadline:
        taken += consumer.poll(0.2)
    assert len(taken) == 3
    with Producer({"bootstrap.servers": bootstrap, "transactional.id": f"s-{sink}"}) as p:
        p.init_transactions(20)
        p.begin_transaction()
        for record in taken:
            p.send(sink, b"out-" + record.value)
        p.send_offsets_to_transaction({(source, 0): 3}, consumer.group_metadata(), 20)
        p.commit_transaction(20)
    committed = consumer.committed([(source, 0)])
    consumer.close()
    assert [o.offset for o in committed.values() if o is not None] == [3]
    assert samsa_read_committed(bootstrap, sink, 1, 3) == [b"out-in0", b"out-in1", b"out-in2"]


def test_a_newer_instance_fences_the_older(bootstrap: str) -> None:
    topic = new_topic(bootstrap, 1)
    transactional_id = f"s-{topic}"
    old = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    new = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    try:
        old.init_transactions(20)
        old.begin_transaction()
        old.send(topic, b"zombie")
        old.flush(10)
        new.init_transactions(20)  # aborts the old instance's transaction
        new.begin_transaction()
        new.send(topic, b"fresh")
        new.commit_transaction(20)
        with pytest.raises(ProducerFencedError):
            old.send(topic, b"late")
            old.commit_transaction(10)
        with pytest.raises(ProducerFencedError):  # fatal: every later call says so
            old.begin_transaction()
    finally:
        old.close(5)
        new.close(5)
    assert samsa_read_committed(bootstrap, topic, 1, 1) == [b"fresh"]


def test_misuse_is_refused_with_a_clear_error(bootstrap: str) -> None:
    topic = new_topic(bootstrap, 1)
    with Producer({"bootstrap.servers": bootstrap, "transactional.id": f"s-{topic}"}) as p:
        with pytest.raises(KafkaError, match="begin"):
            p.begin_transaction()  # before init_transactions
        p.init_transactions(20)
        with pytest.raises(KafkaError, match="begin_transaction"):
            p.send(topic, b"outside a transaction")
    with (
        Producer({"bootstrap.servers": bootstrap}) as plain,
        pytest.raises(KafkaError, match=r"transactional\.id"),
    ):
        plain.init_transactions(5)
