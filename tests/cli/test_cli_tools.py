"""The real ``samsa`` executable against a real broker: output and exit codes.

Every call runs ``python -m samsa.cli`` in its own process, as a user's shell
would; a few parsing-only cases call ``main(argv)`` in process to stay fast.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from samsa.cli.main import main
from samsa.testing import BrokerProcess


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("cli-tools") / "data") as proc:
        yield proc


def samsa(
    broker: BrokerProcess | str, *args: str, stdin: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    bootstrap = broker if isinstance(broker, str) else broker.bootstrap
    return subprocess.run(
        [sys.executable, "-m", "samsa.cli", *args],
        input=stdin.decode("latin-1") if stdin is not None else None,
        capture_output=True,
        text=True,
        encoding="latin-1",
        timeout=timeout,
        env={**os.environ, "SAMSA_BOOTSTRAP": bootstrap},
    )


def one_line_error(result: subprocess.CompletedProcess[str], prefix: str) -> str:
    assert result.returncode != 0, result
    err = result.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(prefix), err
    return err


def test_topics_create_list_describe_alter_delete(broker: BrokerProcess) -> None:
    created = samsa(
        broker, "topics", "create", "cli-orders", "--partitions", "3",
        "--config", "cleanup.policy=compact", "--config", "retention.ms=60000",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "Created topic cli-orders."
    again = samsa(broker, "topics", "create", "cli-orders", "--if-not-exists")
    assert again.returncode == 0
    exists = samsa(broker, "topics", "create", "cli-orders")
    assert "TOPIC_ALREADY_EXISTS" in one_line_error(exists, "samsa topics:")

    listed = samsa(broker, "topics", "list", "--output", "json")
    assert "cli-orders" in json.loads(listed.stdout)

    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(10):
        producer.produce("cli-orders", key=b"k%d" % i, value=b"v" * 50, partition=1)
    assert producer.flush(10) == 0

    described = samsa(broker, "topics", "describe", "cli-orders", "--output", "json")
    (topic,) = json.loads(described.stdout)
    part1 = topic["partitions"][1]
    assert (part1["leader"], part1["replicas"], part1["isr"]) == (1, [1], [1])
    assert (part1["log_start_offset"], part1["log_end_offset"]) == (0, 10)
    assert part1["size_bytes"] > 500
    configs = {c["name"]: (c["value"], c["source"]) for c in topic["configs"]}
    assert configs["cleanup.policy"] == ("compact", "DYNAMIC_TOPIC_CONFIG")
    assert configs["segment.ms"][1] == "DEFAULT_CONFIG"

    table = samsa(broker, "topics", "describe", "cli-orders").stdout
    rows = [line.split() for line in table.splitlines()]
    assert ["PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START", "LOG-END", "SIZE"] in rows
    assert ["1", "1", "1", "1", "0", "10", str(part1["size_bytes"])] in rows

    altered = samsa(
        broker, "topics", "alter", "cli-orders", "--config", "retention.ms=1000",
        "--delete-config", "cleanup.policy", "--partitions", "4",
    )  # fmt: skip
    assert altered.returncode == 0, altered.stderr
    (topic,) = json.loads(
        samsa(broker, "topics", "describe", "cli-orders", "--output", "json").stdout
    )
    configs = {c["name"]: (c["value"], c["source"]) for c in topic["configs"]}
    assert len(topic["partitions"]) == 4
    assert configs["retention.ms"] == ("1000", "DYNAMIC_TOPIC_CONFIG")
    assert configs["cleanup.policy"] == ("delete", "DEFAULT_CONFIG")

    deleted = samsa(broker, "topics", "delete", "cli-orders")
    assert deleted.returncode == 0 and "Deleted topic cli-orders." in deleted.stdout
    assert "cli-orders" not in json.loads(
        samsa(broker, "topics", "list", "--output", "json").stdout
    )


def test_topics_errors_are_one_line(broker: BrokerProcess) -> None:
    one_line_error(samsa(broker, "topics", "create", "t", "--config", "nokv"), "samsa topics: malformed --config 'nokv'")  # fmt: skip
    err = one_line_error(samsa(broker, "topics", "describe", "no-such-topic"), "samsa topics:")
    assert "UNKNOWN_TOPIC_OR_PARTITION" in err
    one_line_error(samsa(broker, "topics", "delete", "no-such-topic"), "samsa topics: unknown topic 'no-such-topic'")  # fmt: skip
    one_line_error(samsa(broker, "topics", "create", "t0", "--partitions", "0"), "samsa topics: --partitions must be")  # fmt: skip
    bad = samsa(broker, "topics", "frobnicate")
    assert bad.returncode == 2 and "invalid choice: 'frobnicate'" in bad.stderr


def test_produce_then_consume_round_trips_keys_values_and_headers(broker: BrokerProcess) -> None:
    samsa(broker, "topics", "create", "cli-lines", "--partitions", "2")
    lines = b"k1:hello\nk2:world:with:colons\nk3:caf\xc3\xa9\nk\xff:v\xfe\n"
    produced = samsa(
        broker, "produce", "cli-lines", "--key-separator", ":", "--header", "src=cli",
        "--header", "n=1", "--partition", "1", "--output", "json", stdin=lines,
    )  # fmt: skip
    assert produced.returncode == 0, produced.stderr
    receipt = json.loads(produced.stdout)
    assert receipt["acknowledged"] == 4
    assert receipt["partitions"] == {"1": {"records": 4, "first_offset": 0, "last_offset": 3}}

    consumed = samsa(
        broker,
        "consume",
        "cli-lines",
        "--from-beginning",
        "--format",
        "json",
        "--max-messages",
        "4",
    )
    assert consumed.returncode == 0, consumed.stderr
    records = [json.loads(line) for line in consumed.stdout.splitlines()]
    assert [(r["partition"], r["offset"]) for r in records] == [(1, 0), (1, 1), (1, 2), (1, 3)]
    assert [(r["key"], r["value"]) for r in records[:3]] == [
        ("k1", "hello"),
        ("k2", "world:with:colons"),
        ("k3", "café"),
    ]
    assert records[3]["key"] == {"base64": "a/8="} and records[3]["value"] == {"base64": "dv4="}
    assert records[0]["headers"] == [{"key": "src", "value": "cli"}, {"key": "n", "value": "1"}]
    assert records[0]["timestamp_type"] == "CreateTime" and records[0]["timestamp"] > 0

    kv = samsa(broker, "consume", "cli-lines", "--partition", "1", "--offset", "2", "--format", "kv", "--exit-at-end")  # fmt: skip
    assert kv.returncode == 0
    assert kv.stdout.encode("latin-1").decode("utf-8").splitlines() == [
        "k3\tcafé",
        "k\\xff\tv\\xfe",
    ]

    plain = samsa(broker, "consume", "cli-lines", "--partition", "1", "--offset", "earliest", "--max-messages", "1")  # fmt: skip
    assert plain.stdout == "hello\n"


def test_produce_and_consume_errors(broker: BrokerProcess) -> None:
    samsa(broker, "topics", "create", "cli-errors", "--partitions", "2")
    err = one_line_error(samsa(broker, "produce", "cli-errors", "--key-separator", ":", stdin=b"novalue\n"), "samsa produce:")  # fmt: skip
    assert "line 1 has no key separator ':'" in err
    one_line_error(samsa(broker, "produce", "cli-errors", "--header", "oops", stdin=b"x\n"), "samsa produce: malformed --header 'oops'")  # fmt: skip
    one_line_error(samsa(broker, "produce", "cli-errors", "--partition", "5", stdin=b"x\n"), "samsa produce: partition 5 out of range: cli-errors has 2 partitions")  # fmt: skip
    one_line_error(samsa(broker, "consume", "cli-errors", "--partition", "9"), "samsa consume: partition 9 out of range")  # fmt: skip
    one_line_error(samsa(broker, "consume", "cli-errors", "--partition", "0", "--offset", "soon"), "samsa consume: invalid --offset 'soon'")  # fmt: skip
    one_line_error(samsa(broker, "consume", "cli-errors", "--offset", "3"), "samsa consume: --offset needs --partition")  # fmt: skip
    one_line_error(samsa(broker, "consume", "no-such-topic", "--timeout", "1"), "samsa consume: unknown topic 'no-such-topic'")  # fmt: skip


def test_unreachable_broker_is_one_quick_line(tmp_path: Path) -> None:
    dead = BrokerProcess(tmp_path / "dead")
    address = dead.start()
    assert dead.stop() == 0
    for args in (("topics", "list"), ("consume", "t", "--max-messages", "1"), ("groups", "list")):
        started = time.monotonic()
        result = samsa(address, *args, "--timeout", "1")
        assert time.monotonic() - started < 10
        one_line_error(result, f"samsa {args[0]}: cannot reach {address}")


def confluent_group(broker: BrokerProcess, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )


def read_n(consumer: Consumer, n: int) -> list[tuple[int, int]]:
    got: list[tuple[int, int]] = []
    deadline = time.monotonic() + 30
    while len(got) < n:
        assert time.monotonic() < deadline, got
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.partition(), msg.offset()))  # type: ignore[arg-type]
    return got


def test_groups_reset_offsets_moves_a_confluent_groups_position(broker: BrokerProcess) -> None:
    topic, group = "cli-reset", "cli-reset-group"
    samsa(broker, "topics", "create", topic, "--partitions", "1")
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(10):
        producer.produce(topic, value=b"r%d" % i)
    assert producer.flush(10) == 0

    member = confluent_group(broker, group)
    member.subscribe([topic])
    assert read_n(member, 10)[-1] == (0, 9)
    member.commit(asynchronous=False)

    # Refused while the group has a member, as Kafka's tool does.
    refused = samsa(broker, "groups", "reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")  # fmt: skip
    assert "only be reset while the group is inactive" in one_line_error(refused, "samsa groups:")
    member.close()

    dry = samsa(broker, "groups", "reset-offsets", "--group", group, "--topic", topic, "--to-offset", "4")  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert [group, topic, "0", "10", "4"] in [line.split() for line in dry.stdout.splitlines()]
    assert "dry run" in dry.stdout

    plan = samsa(
        broker, "groups", "reset-offsets", "--group", group, "--topic", f"{topic}:0",
        "--to-offset", "4", "--execute", "--output", "json",
    )  # fmt: skip
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["partitions"] == [
        {"topic": topic, "partition": 0, "current_offset": 10, "new_offset": 4, "clamped": False}
    ]

    resumed = confluent_group(broker, group)
    resumed.subscribe([topic])
    try:
        assert read_n(resumed, 1) == [(0, 4)]
    finally:
        resumed.close()

    shifted = samsa(broker, "groups", "reset-offsets", "--group", group, "--all-topics", "--shift-by", "-100", "--execute", "--output", "json")  # fmt: skip
    assert json.loads(shifted.stdout)["partitions"][0]["new_offset"] == 0  # clamped to the start
    future = samsa(broker, "groups", "reset-offsets", "--group", group, "--all-topics", "--to-datetime", "2100-01-01T00:00:00Z", "--execute", "--output", "json")  # fmt: skip
    assert json.loads(future.stdout)["partitions"][0]["new_offset"] == 10
    one_line_error(
        samsa(broker, "groups", "reset-offsets", "--group", group, "--all-topics", "--to-datetime", "tomorrow"),
        "samsa groups: invalid --to-datetime 'tomorrow'",
    )  # fmt: skip

    described = json.loads(samsa(broker, "groups", "describe", group, "--output", "json").stdout)
    assert described["partitions"][0]["committed_offset"] == 10

    deleted = samsa(broker, "groups", "delete", group)
    assert deleted.returncode == 0, deleted.stderr
    listed = json.loads(samsa(broker, "groups", "list", "--output", "json").stdout)
    assert group not in [g["group"] for g in listed]
    gone = samsa(broker, "groups", "describe", group)
    one_line_error(gone, f"samsa groups: group '{group}' does not exist")


def test_groups_delete_offsets_of_one_topic(broker: BrokerProcess) -> None:
    group = "cli-delete-offsets"
    for topic in ("cli-keep", "cli-drop"):
        samsa(broker, "topics", "create", topic, "--partitions", "2")
    committer = confluent_group(broker, group)
    committer.commit(
        offsets=[TopicPartition("cli-keep", 0, 1), TopicPartition("cli-drop", 1, 2)],
        asynchronous=False,
    )
    committer.close()
    result = samsa(broker, "groups", "delete-offsets", "--group", group, "--topic", "cli-drop")
    assert result.returncode == 0, result.stderr
    described = json.loads(samsa(broker, "groups", "describe", group, "--output", "json").stdout)
    assert [
        (p["topic"], p["partition"], p["committed_offset"]) for p in described["partitions"]
    ] == [("cli-keep", 0, 1)]
    one_line_error(
        samsa(broker, "groups", "delete-offsets", "--group", group, "--topic", "cli-drop:7"),
        "samsa groups: partition 7 out of range: cli-drop has 2 partitions",
    )


def test_bench_produce_and_consume_report_a_summary(broker: BrokerProcess) -> None:
    produced = samsa(broker, "bench", "produce", "--topic", "cli-bench", "--num-records", "5000", "--record-size", "64", "--output", "json")  # fmt: skip
    assert produced.returncode == 0, produced.stderr
    summary = json.loads(produced.stdout)
    assert summary["records"] == 5000 and summary["records_per_sec"] > 0
    assert summary["p50_ms"] is not None and summary["p99_ms"] >= summary["p50_ms"]
    consumed = samsa(broker, "bench", "consume", "--topic", "cli-bench", "--output", "json")
    assert consumed.returncode == 0, consumed.stderr
    summary = json.loads(consumed.stdout)
    assert summary["records"] == 5000 and summary["mb_per_sec"] > 0
    table = samsa(broker, "bench", "consume", "--topic", "cli-bench", "--num-records", "100")
    assert "records per sec" in table.stdout


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["topics"],
        ["groups"],
        ["bench"],
        ["topics", "create"],
        ["topics", "describe"],
        ["produce"],
        ["consume"],
        ["groups", "reset-offsets"],
        ["bench", "produce"],
    ],
)
def test_every_subcommand_help_has_an_example(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    _, found, after = out.partition("example")
    assert found and "samsa " in after


def test_groups_list_on_a_fresh_broker_waits_for_the_coordinator(tmp_path: Path) -> None:
    """Right after start the coordinator answers COORDINATOR_LOAD_IN_PROGRESS while it
    creates and loads __consumer_offsets; the Admin retries that, as Kafka's does."""
    fresh = BrokerProcess(tmp_path / "data")
    fresh.start()
    try:
        result = samsa(fresh, "groups", "list", "--output", "json", "--timeout", "10")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == []
    finally:
        fresh.stop()
