"""Group consumers on both brokers: split, rebalance on close, commits read back."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from test_consumer import consume_n, create_topic, produce

from conftest import BrokerAddress
from samsa.client.consumer import Consumer, OffsetAndMetadata, TopicPartition

pytestmark = pytest.mark.integration


def group_conf(broker: BrokerAddress, group: str, strategy: str) -> dict[str, object]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,  # tansu parks joins for about half of it
        "heartbeat.interval.ms": 500,
        "partition.assignment.strategy": strategy,
    }


def poll_until(consumers: list[Consumer], done: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "condition not reached in time"
        for c in consumers:
            c.poll(0.2)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
def test_two_members_split_and_one_takes_over_on_close(
    broker: BrokerAddress, strategy: str
) -> None:
    topic = f"grp-{strategy}"
    create_topic(broker, topic, 4)
    everything = {TopicPartition(topic, p) for p in range(4)}
    assigned: list[list[TopicPartition]] = []
    revoked: list[list[TopicPartition]] = []
    c1 = Consumer(group_conf(broker, f"g-{strategy}", strategy))
    c2 = Consumer(group_conf(broker, f"g-{strategy}", strategy))
    try:
        c1.subscribe([topic], on_assign=lambda c, ps: assigned.append(ps))
        poll_until([c1], lambda: c1.assignment() == everything)
        c2.subscribe([topic], on_revoke=lambda c, ps: revoked.append(ps))
        poll_until(
            [c1, c2],
            lambda: (
                len(c1.assignment()) == 2
                and len(c2.assignment()) == 2
                and c1.assignment() | c2.assignment() == everything
            ),
        )
        c1.close()
        poll_until([c2], lambda: c2.assignment() == everything)
    finally:
        c1.close()
        c2.close()
    assert assigned and assigned[0]


def test_commit_is_read_back_by_a_new_consumer(broker: BrokerAddress) -> None:
    topic = "commits"
    create_topic(broker, topic, 1)
    produce(broker, topic, [{"value": b"%d" % i} for i in range(50)])
    tp = TopicPartition(topic, 0)
    conf = group_conf(broker, "g-commit", "range") | {"enable.auto.commit": False}
    with Consumer(conf) as c:
        c.subscribe([topic])
        got = consume_n(c, 20)
        c.commit({tp: got[19].offset + 1})
        assert c.committed([tp]) == {tp: OffsetAndMetadata(20)}
    with Consumer(conf) as c:
        c.subscribe([topic])
        got = consume_n(c, 1)
        assert got[0].offset == 20


def test_auto_commit_on_close(broker: BrokerAddress) -> None:
    topic = "autocommit"
    create_topic(broker, topic, 1)
    produce(broker, topic, [{"value": b"x"} for _ in range(10)])
    tp = TopicPartition(topic, 0)
    conf = group_conf(broker, "g-auto", "range")
    with Consumer(conf) as c:
        c.subscribe([topic])
        assert len(consume_n(c, 10)) == 10
    with Consumer(conf) as c:
        assert c.committed([tp])[tp] == OffsetAndMetadata(10)


def test_commit_with_assign_and_group_id(broker: BrokerAddress) -> None:
    topic = "simplecommit"
    create_topic(broker, topic, 1)
    produce(broker, topic, [{"value": b"x"} for _ in range(5)])
    tp = TopicPartition(topic, 0)
    conf = group_conf(broker, "g-simple", "range") | {"enable.auto.commit": False}
    with Consumer(conf) as c:
        c.assign([tp])
        consume_n(c, 5)
        c.commit()
        assert c.committed([tp])[tp] == OffsetAndMetadata(5)
