"""The reference release's command-line tools against a single Samsa node.

Each test drives one tool family end to end and checks what it printed (the
partition counts, offsets, group lags, feature levels a Kafka broker would
report), so a wrong answer fails as surely as an error exit.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from confluent_kafka import Producer
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, TOOL_TIMEOUT_S, KafkaTools, write_json
from tests.kafka_tools.tool_classes import (
    BROKER_API_VERSIONS,
    CONFIGS,
    CONSOLE_CONSUMER,
    CONSOLE_PRODUCER,
    CONSUMER_GROUPS,
    CONSUMER_PERFORMANCE,
    DELETE_RECORDS,
    FEATURES,
    GET_OFFSETS,
    LEADER_ELECTION,
    LOG_DIRS,
    METADATA_QUORUM,
    TOPICS,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]


def partition_lines(describe: str) -> list[str]:
    return [line for line in describe.splitlines() if "Partition: " in line]


def test_topics_create_describe_alter_delete(node_tools: KafkaTools) -> None:
    created = node_tools.admin(
        TOPICS, "--create", "--topic", "tt", "--partitions", "3",
        "--replication-factor", "1", "--config", "retention.ms=3600000",
    )  # fmt: skip
    assert "Created topic tt." in created
    described = node_tools.admin(TOPICS, "--describe", "--topic", "tt")
    assert "PartitionCount: 3" in described and "ReplicationFactor: 1" in described
    assert "retention.ms=3600000" in described
    assert len(partition_lines(described)) == 3
    assert all("Leader: 1\tReplicas: 1\tIsr: 1" in line for line in partition_lines(described))

    node_tools.admin(TOPICS, "--alter", "--topic", "tt", "--partitions", "5")
    described = node_tools.admin(TOPICS, "--describe", "--topic", "tt")
    assert "PartitionCount: 5" in described and len(partition_lines(described)) == 5

    node_tools.admin(TOPICS, "--delete", "--topic", "tt")
    assert "tt" not in node_tools.admin(TOPICS, "--list").split()


def test_configs_alter_describe_delete_topic_config(node_tools: KafkaTools) -> None:
    node_tools.admin(TOPICS, "--create", "--topic", "cfg", "--partitions", "1")
    entity = ["--entity-type", "topics", "--entity-name", "cfg"]
    altered = node_tools.admin(
        CONFIGS, *entity, "--alter", "--add-config",
        "retention.ms=12345,cleanup.policy=compact,leader.replication.throttled.replicas=[0:1,0:2]",
    )  # fmt: skip
    assert "Completed updating config for topic cfg." in altered
    described = node_tools.admin(CONFIGS, *entity, "--describe")
    assert "Dynamic configs for topic cfg are:" in described
    assert "retention.ms=12345 sensitive=false" in described
    assert "cleanup.policy=compact sensitive=false" in described
    # kafka-reassign-partitions --throttle sets this on every topic it moves.
    assert "leader.replication.throttled.replicas=0:1,0:2 sensitive=false" in described

    node_tools.admin(CONFIGS, *entity, "--alter", "--delete-config", "retention.ms")
    described = node_tools.admin(CONFIGS, *entity, "--describe")
    assert "retention.ms" not in described and "cleanup.policy=compact" in described


def test_configs_describe_broker_spells_booleans_as_kafka(node_tools: KafkaTools) -> None:
    described = node_tools.admin(
        CONFIGS, "--entity-type", "brokers", "--entity-name", "1", "--describe", "--all"
    )
    assert "auto.create.topics.enable=true sensitive=false" in described


def test_console_producer_consumer_and_consumer_groups(
    node_tools: KafkaTools, tmp_path: Path
) -> None:
    """Keys and headers round-trip through the console tools; the group the
    console consumer commits in is described, reset and deleted."""
    node_tools.admin(TOPICS, "--create", "--topic", "console", "--partitions", "1")
    node_tools.admin(
        CONSOLE_PRODUCER, "--topic", "console",
        *node_tools.props(
            CONSOLE_PRODUCER, "parse.key=true", "key.separator==", "parse.headers=true",
            "headers.delimiter=|",
        ),
        stdin="h1:v1,h2:v2|k1=first\nh3:v3|k2=second\n",
    )  # fmt: skip
    group_consumer = [CONSOLE_CONSUMER, "--topic", "console", "--group", "cg"]
    printed = ["print.key", "print.headers", "print.offset", "print.partition"]
    shown = node_tools.props(CONSOLE_CONSUMER, *(f"{prop}=true" for prop in printed))
    consumed = node_tools.admin(*group_consumer, *shown, "--max-messages", "2", "--from-beginning")
    assert consumed.splitlines() == [
        "Partition:0\tOffset:0\th1:v1,h2:v2\tk1\tfirst",
        "Partition:0\tOffset:1\th3:v3\tk2\tsecond",
    ]

    described = node_tools.admin(CONSUMER_GROUPS, "--describe", "--group", "cg")
    row = next(line.split() for line in described.splitlines() if line.startswith("cg "))
    assert row[:6] == ["cg", "console", "0", "2", "2", "0"]  # offset 2, end 2, lag 0

    reset = node_tools.admin(
        CONSUMER_GROUPS, "--reset-offsets", "--group", "cg", "--topic", "console",
        "--to-offset", "1", "--execute",
    )  # fmt: skip
    assert re.search(r"cg\s+console\s+0\s+1\s*$", reset, re.MULTILINE), reset
    # The group resumes where the reset put it: only the second record again.
    printed_key = node_tools.props(CONSOLE_CONSUMER, "print.key=true")
    again = node_tools.admin(*group_consumer, "--max-messages", "1", *printed_key)
    assert again.splitlines() == ["k2\tsecond"]

    assert "cg" in node_tools.admin(CONSUMER_GROUPS, "--list").split()
    deleted = node_tools.admin(CONSUMER_GROUPS, "--delete", "--group", "cg")
    assert "Deletion of requested consumer groups ('cg') was successful." in deleted
    assert "cg" not in node_tools.admin(CONSUMER_GROUPS, "--list").split()


def test_get_offsets_delete_records_log_dirs(node_tools: KafkaTools, tmp_path: Path) -> None:
    node_tools.admin(TOPICS, "--create", "--topic", "offs", "--partitions", "1")
    node_tools.admin(CONSOLE_PRODUCER, "--topic", "offs", stdin="a\nb\nc\nd\ne\n")
    assert node_tools.admin(GET_OFFSETS, "--topic", "offs").split() == ["offs:0:5"]

    plan = write_json(
        tmp_path / "delete.json",
        '{"version":1,"partitions":[{"topic":"offs","partition":0,"offset":3}]}',
    )
    deleted = node_tools.admin(DELETE_RECORDS, "--offset-json-file", plan)
    assert "partition: offs-0\tlow_watermark: 3" in deleted
    # -2 is the log start; -4 the earliest offset on local disk (ListOffsets v8),
    # the same here since Samsa tiers nothing.
    for spec in ("-2", "earliest", "-4"):
        answer = node_tools.admin(GET_OFFSETS, "--topic", "offs", "--time", spec)
        assert answer.split() == ["offs:0:3"], (spec, answer)

    dirs = node_tools.admin(LOG_DIRS, "--describe", "--topic-list", "offs")
    report = json.loads(dirs.splitlines()[-1])
    (broker,) = report["brokers"]
    assert broker["broker"] == 1
    (log_dir,) = broker["logDirs"]
    assert log_dir["error"] is None
    (partition,) = log_dir["partitions"]
    assert partition["partition"] == "offs-0" and partition["size"] > 0


def test_leader_election_is_not_needed_on_one_node(node_tools: KafkaTools) -> None:
    node_tools.admin(TOPICS, "--create", "--topic", "elect", "--partitions", "1")
    answer = node_tools.admin(
        LEADER_ELECTION, "--election-type", "preferred", "--topic", "elect", "--partition", "0"
    )
    assert "Valid replica already elected for partitions elect-0" in answer


def test_metadata_quorum_describe(node_tools: KafkaTools) -> None:
    status = dict(
        line.split(":", 1)
        for line in node_tools.admin(METADATA_QUORUM, "describe", "--status").splitlines()
    )
    assert status["LeaderId"].strip() == "1"
    assert int(status["HighWatermark"]) > 0
    assert json.loads(status["CurrentVoters"])[0]["id"] == 1

    replication = node_tools.admin(METADATA_QUORUM, "describe", "--replication").splitlines()
    assert replication[0].split()[:3] == ["NodeId", "DirectoryId", "LogEndOffset"]
    (row,) = replication[1:]
    assert row.split()[0] == "1" and row.split()[-1] == "Leader"


def parse_features(described: str) -> dict[str, dict[str, str]]:
    """``kafka-features describe``'s lines by feature (fields split by tabs up to
    Kafka 4.1, by padding since)."""
    features = {}
    for line in described.splitlines():
        fields = dict(re.findall(r"(\w+): (\S+)", line))
        if "Feature" in fields:
            features[fields["Feature"]] = fields
    return features


def test_features_describe_reports_metadata_version(node_tools: KafkaTools) -> None:
    """Without ApiVersions' feature fields the tool prints nothing at all."""
    features = parse_features(node_tools.admin(FEATURES, "describe"))
    metadata = features["metadata.version"]
    assert metadata["SupportedMinVersion"] == "3.3-IV3"
    assert metadata["SupportedMaxVersion"] == "4.1-IV1"
    assert metadata["FinalizedVersionLevel"] == "4.1-IV1"
    assert int(metadata["Epoch"]) >= 0
    # KIP-1071 streams groups, on as in a new Kafka 4.4 cluster.
    streams = features["streams.version"]
    assert (streams["SupportedMaxVersion"], streams["FinalizedVersionLevel"]) == ("1", "1")


def test_broker_api_versions(node_tools: KafkaTools) -> None:
    answer = node_tools.admin(BROKER_API_VERSIONS)
    assert re.search(r"\(id: 1 rack: null isFenced: false\) -> \(", answer), answer
    for api in ("Produce(0)", "Fetch(1)", "ListOffsets(2)", "Metadata(3)", "JoinGroup(11)"):
        line = next(line for line in answer.splitlines() if line.strip().startswith(api))
        assert "usable:" in line and "UNSUPPORTED" not in line, line


# The Java consumer's own coordinator log, with epoch-millisecond stamps, so the
# join is timed by the client that waits for it.
_COORDINATOR_LOG4J = """Configuration:
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "%d{UNIX_MILLIS} %m%n"
  Loggers:
    Logger:
      - name: org.apache.kafka.clients.consumer.internals.ConsumerCoordinator
        level: INFO
    Root:
      level: WARN
      AppenderRef:
        - ref: STDERR
"""
JOIN_BOUND_MS = 2500
"""A lone member's join (JoinGroup, MEMBER_ID_REQUIRED, JoinGroup again) takes
0.1-0.3 s here under load; a broker that held it for Kafka's default 3 s
initial rebalance delay made ConsumerPerformance 0.36x Kafka."""


def test_consumer_perf_joins_a_new_group_without_a_wait(
    node_tools: KafkaTools, tmp_path: Path
) -> None:
    """Kafka's ConsumerPerformance (the bench's consume client) reads every
    record, and its Java consumer's first join of a new group completes within
    JOIN_BOUND_MS of its first JoinGroup on a broker with
    ``group.initial.rebalance.delay.ms=0``, as Kafka's does."""
    records = 2000
    node_tools.admin(TOPICS, "--create", "--topic", "perf-join", "--partitions", "1")
    producer = Producer({"bootstrap.servers": node_tools.bootstrap})
    for i in range(records):
        producer.produce("perf-join", b"v" * 100, str(i).encode())
    assert producer.flush(60) == 0
    log_config = tmp_path / "coordinator-log4j2.yaml"
    log_config.write_text(_COORDINATOR_LOG4J)
    argv = node_tools.reference.java_command(
        CONSUMER_PERFORMANCE,
        "--bootstrap-server", node_tools.bootstrap, "--topic", "perf-join",
        "--messages", str(records), "--timeout", "60000", "--group", "perf-join",
        quick_start=True, jvm_options=[f"-Dlog4j2.configurationFile={log_config}"],
    )  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    header = next(i for i, line in enumerate(lines) if line.startswith("start.time"))
    stats = dict(zip(lines[header].split(", "), lines[header + 1].split(", "), strict=True))
    assert int(stats["data.consumed.in.nMsg"]) == records

    def stamp(text: str) -> int:
        return next(int(line.split()[0]) for line in done.stderr.splitlines() if text in line)

    joined_ms = stamp("Successfully joined group") - stamp("(Re-)joining group")
    assert 0 <= joined_ms < JOIN_BOUND_MS, done.stderr[-4000:]
