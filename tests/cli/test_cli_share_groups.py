"""``samsa share-groups`` against a real broker and librdkafka share consumers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.cli.main import main
from samsa.testing import BrokerProcess

TOPIC, GROUP = "cli-share", "cli-share-group"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    settings = {
        "share.auto.offset.reset": "earliest",
        "share.coordinator.state.topic.num.partitions": "2",
    }
    with BrokerProcess(tmp_path_factory.mktemp("cli-share") / "data", settings) as proc:
        yield proc


def read_all(bootstrap: str, count: int) -> ShareConsumer:
    """A share consumer that has received ``count`` records (and accepts them on close)."""
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    consumer.subscribe([TOPIC])
    got = 0
    deadline = threading.Event()
    timer = threading.Timer(30, deadline.set)
    timer.start()
    try:
        while got < count and not deadline.is_set():
            got += sum(1 for m in consumer.poll(0.2) if m.error() is None)
    finally:
        timer.cancel()
    assert got == count
    # librdkafka 2.16 does not accept the last poll's records on close() in
    # implicit mode (it closes the share session, which releases them); a
    # commit does, and returns once the broker has stored it.
    consumer.commit_sync(15)
    return consumer


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_describe_reset_and_delete(
    broker: BrokerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    boot = broker.bootstrap
    admin = AdminClient({"bootstrap.servers": boot})
    admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(15)
    producer = Producer({"bootstrap.servers": boot})
    for i in range(10):
        producer.produce(TOPIC, value=b"v%d" % i, partition=i % 2)
    assert producer.flush(15) == 0
    consumer = read_all(boot, 10)
    try:
        code, out, _ = run(capsys, "share-groups", "list", "--bootstrap", boot, "--output", "json")
        assert code == 0 and {"group": GROUP, "state": "Stable"} in json.loads(out)
        code, _, err = run(
            capsys, "share-groups", "reset-offsets", "--group", GROUP, "--topic", TOPIC,
            "--to-earliest", "--execute", "--bootstrap", boot,
        )  # fmt: skip
        assert code == 2 and "has 1 members" in err and "Traceback" not in err
    finally:
        consumer.close()

    def described() -> dict[str, Any]:
        code, out, _ = run(
            capsys, "share-groups", "describe", GROUP, "--bootstrap", boot, "--output", "json"
        )
        assert code == 0
        result: dict[str, Any] = json.loads(out)
        return result

    final = described()
    assert final["members"] == []
    rows = sorted((p["partition"], p["start_offset"], p["lag"]) for p in final["partitions"])
    assert rows == [(0, 5, 0), (1, 5, 0)]

    code, out, _ = run(
        capsys, "share-groups", "reset-offsets", "--group", GROUP, "--topic", f"{TOPIC}:1",
        "--to-offset", "2", "--execute", "--bootstrap", boot,
    )  # fmt: skip
    assert code == 0 and "NEW-START-OFFSET" in out
    starts = {p["partition"]: p["start_offset"] for p in described()["partitions"]}
    assert starts == {0: 5, 1: 2}

    code, out, _ = run(
        capsys, "share-groups", "delete-offsets", "--group", GROUP, "--topic", TOPIC,
        "--bootstrap", boot,
    )  # fmt: skip
    assert code == 0 and "Deleted" in out
    code, _, err = run(capsys, "share-groups", "describe", "nobody", "--bootstrap", boot)
    assert code == 2 and "does not exist" in err
