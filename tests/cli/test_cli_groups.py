"""``samsa groups list|describe`` against a real broker and a real confluent-kafka group."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.cli.main import build_parser, main
from samsa.testing import BrokerProcess

TOPIC, GROUP = "cli-groups", "cli-group"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("cli-groups") / "data") as proc:
        yield proc


@pytest.fixture(scope="module")
def member(broker: BrokerProcess) -> Iterator[Consumer]:
    """One live member owning all 3 partitions; 10 records each; offset 4 committed on p1."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 3, 1)])[TOPIC].result(15)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(30):
        producer.produce(TOPIC, value=b"v%d" % i, partition=i % 3)
    assert producer.flush(15) == 0

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": GROUP,
            "client.id": "cli-test-client",
            "session.timeout.ms": 6000,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([TOPIC])
    deadline = time.monotonic() + 20
    while len(consumer.assignment()) < 3 and time.monotonic() < deadline:
        consumer.poll(0.05)
    assert len(consumer.assignment()) == 3
    consumer.commit(offsets=[TopicPartition(TOPIC, 1, 4)], asynchronous=False)
    try:
        yield consumer
    finally:
        consumer.close()


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def test_list_shows_group_state_and_protocol_type(
    broker: BrokerProcess, member: Consumer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["groups", "list", "--bootstrap", broker.bootstrap]) == 0
    out = rows(capsys.readouterr().out)
    assert out[0] == ["GROUP", "TYPE", "STATE", "PROTOCOL-TYPE"]
    assert [GROUP, "classic", "Stable", "consumer"] in out[1:]


def test_consumer_protocol_group_shows_type_epochs_and_target(
    broker: BrokerProcess, member: Consumer, capsys: pytest.CaptureFixture[str]
) -> None:
    group = "cli-kip848-group"
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": "cli-kip848-client",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([TOPIC])
    try:
        deadline = time.monotonic() + 20
        while len(consumer.assignment()) < 3 and time.monotonic() < deadline:
            consumer.poll(0.05)
        assert len(consumer.assignment()) == 3
        assert main(["groups", "list", "--bootstrap", broker.bootstrap]) == 0
        assert [group, "consumer", "Stable", "consumer"] in rows(capsys.readouterr().out)
        assert main(["groups", "describe", group, "--bootstrap", broker.bootstrap]) == 0
        text = capsys.readouterr().out
        assert f"GROUP {group}  TYPE consumer  STATE Stable  GROUP-EPOCH 1" in text
        (member_row,) = [r for r in rows(text) if r[0] == consumer.memberid()]
        assert member_row[1:] == [
            "-", "1", "cli-kip848-client", "/127.0.0.1", f"{TOPIC}:0,1,2", f"{TOPIC}:0,1,2"
        ]  # fmt: skip
    finally:
        consumer.close()


def test_describe_shows_members_offsets_and_lag(
    broker: BrokerProcess, member: Consumer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["groups", "describe", GROUP, "--bootstrap", broker.bootstrap]) == 0
    text = capsys.readouterr().out
    assert f"GROUP {GROUP}  STATE Stable" in text
    out = rows(text)
    member_id = member.memberid()
    member_row = next(r for r in out if r[0] == member_id)
    assert member_row[1:] == ["-", "cli-test-client", "/127.0.0.1", f"{TOPIC}:0,1,2"]
    partitions = {int(r[1]): r[2:] for r in out if r[0] == TOPIC}
    assert partitions == {
        0: ["-", "10", "-", member_id],
        1: ["4", "10", "6", member_id],
        2: ["-", "10", "-", member_id],
    }


def test_describe_unknown_group_is_a_one_line_error(
    broker: BrokerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["groups", "describe", "no-such-group", "--bootstrap", broker.bootstrap]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "samsa groups: group 'no-such-group' does not exist"


def test_unreachable_broker_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A port nobody listens on: bind a broker, note its port, stop it.
    dead = BrokerProcess(tmp_path / "data")
    address = dead.start()
    assert dead.stop() == 0
    started = time.monotonic()
    assert main(["groups", "list", "--bootstrap", address, "--timeout", "1"]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert err.startswith(f"samsa groups: cannot reach {address}")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_default_bootstrap() -> None:
    args = build_parser().parse_args(["groups", "list"])
    assert args.bootstrap == "127.0.0.1:9092"
