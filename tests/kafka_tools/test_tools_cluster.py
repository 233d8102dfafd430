"""Kafka 4.1's command-line tools against a three-node Samsa cluster: what a
single node cannot show (replica lists, moving replicas, electing the preferred
leader, the quorum's followers, every broker answering)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from confluent_kafka import Producer
from tests.integration.test_bad_input import RawClient
from tests.integration.test_client_quotas import describe, quotas_of
from tests.kafka_tools.conftest import TEST_TIMEOUT_S, KafkaTools, write_json
from tests.kafka_tools.tool_classes import (
    BROKER_API_VERSIONS,
    CONFIGS,
    CONSOLE_CONSUMER,
    CONSOLE_PRODUCER,
    CONSUMER_GROUPS,
    LEADER_ELECTION,
    LOG_DIRS,
    METADATA_QUORUM,
    REASSIGN_PARTITIONS,
    TOPICS,
)

from samsa.testing.cluster import LocalCluster, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]


def described_partitions(tools: KafkaTools, topic: str) -> dict[int, dict[str, str]]:
    """``kafka-topics --describe`` rows by partition: Leader, Replicas, Isr."""
    rows = {}
    for line in tools.admin(TOPICS, "--describe", "--topic", topic).splitlines():
        fields = dict(re.findall(r"(\w+): (\S*)", line))
        if "Partition" in fields:
            rows[int(fields["Partition"])] = fields
    return rows


def test_replicated_topic_console_round_trip_and_group(cluster_tools: KafkaTools) -> None:
    cluster_tools.admin(
        TOPICS, "--create", "--topic", "rf3", "--partitions", "3", "--replication-factor", "3"
    )
    rows = described_partitions(cluster_tools, "rf3")
    assert sorted(rows) == [0, 1, 2]
    assert {row["Leader"] for row in rows.values()} == {"1", "2", "3"}
    assert all(sorted(row["Replicas"].split(",")) == ["1", "2", "3"] for row in rows.values())

    lines = [f"key{i}:value{i}" for i in range(30)]
    cluster_tools.admin(
        CONSOLE_PRODUCER, "--topic", "rf3", "--producer-property", "acks=all",
        *cluster_tools.props(CONSOLE_PRODUCER, "parse.key=true", "key.separator=:"),
        stdin="\n".join(lines) + "\n",
    )  # fmt: skip
    consumed = cluster_tools.admin(
        CONSOLE_CONSUMER, "--topic", "rf3", "--group", "rf3-group", "--from-beginning",
        "--max-messages", "30",
        *cluster_tools.props(CONSOLE_CONSUMER, "print.key=true", "key.separator=:"),
    )  # fmt: skip
    assert sorted(consumed.splitlines()) == sorted(lines)

    described = cluster_tools.admin(CONSUMER_GROUPS, "--describe", "--group", "rf3-group")
    rows_of_group = [line.split() for line in described.splitlines() if line.startswith("rf3-")]
    assert sorted(int(row[2]) for row in rows_of_group) == [0, 1, 2]
    assert sum(int(row[3]) for row in rows_of_group) == 30  # committed offsets
    assert all(row[5] == "0" for row in rows_of_group)  # no lag


def test_reassign_then_elect_preferred_leader(cluster_tools: KafkaTools, tmp_path: Path) -> None:
    cluster_tools.admin(TOPICS, "--create", "--topic", "moving", "--replica-assignment", "1:2,2:3")
    assert described_partitions(cluster_tools, "moving")[0]["Leader"] == "1"
    # Partition 0 keeps its replicas in the other order (2 becomes preferred but
    # 1 stays leader); partition 1 moves off its leader, broker 2.
    plan = write_json(
        tmp_path / "plan.json",
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "moving", "partition": 0, "replicas": [2, 1]},
                    {"topic": "moving", "partition": 1, "replicas": [3, 1]},
                ],
            }
        ),
    )
    started = cluster_tools.admin(
        REASSIGN_PARTITIONS, "--reassignment-json-file", plan, "--execute"
    )
    assert "Successfully started partition reassignments for moving-0,moving-1" in started
    wait_until(
        lambda: (
            "still in progress"
            not in cluster_tools.admin(
                REASSIGN_PARTITIONS, "--reassignment-json-file", plan, "--verify"
            )
        ),
        120,
        "the reassignment to complete",
    )
    rows = described_partitions(cluster_tools, "moving")
    assert rows[0]["Replicas"] == "2,1" and rows[0]["Leader"] == "1"
    assert rows[1]["Replicas"] == "3,1" and rows[1]["Leader"] == "3"

    elected = cluster_tools.admin(
        LEADER_ELECTION, "--election-type", "preferred", "--topic", "moving", "--partition", "0"
    )
    assert "Successfully completed leader election (PREFERRED) for partitions moving-0" in elected
    assert described_partitions(cluster_tools, "moving")[0]["Leader"] == "2"


def test_quorum_log_dirs_and_api_versions_of_every_node(
    cluster_tools: KafkaTools, samsa_cluster: LocalCluster
) -> None:
    status = dict(
        line.split(":", 1)
        for line in cluster_tools.admin(METADATA_QUORUM, "describe", "--status").splitlines()
    )
    voters = json.loads(status["CurrentVoters"])
    assert sorted(voter["id"] for voter in voters) == [1, 2, 3]
    assert int(status["LeaderId"]) in (1, 2, 3)

    replication = cluster_tools.admin(METADATA_QUORUM, "describe", "--replication").splitlines()
    roles = {int(row.split()[0]): row.split()[-1] for row in replication[1:]}
    assert sorted(roles) == [1, 2, 3]
    assert sorted(roles.values()) == ["Follower", "Follower", "Leader"]
    assert roles[int(status["LeaderId"])] == "Leader"

    cluster_tools.admin(
        TOPICS, "--create", "--topic", "dirs", "--partitions", "1", "--replication-factor", "3"
    )
    report = json.loads(
        cluster_tools.admin(LOG_DIRS, "--describe", "--topic-list", "dirs").splitlines()[-1]
    )
    assert sorted(broker["broker"] for broker in report["brokers"]) == [1, 2, 3]
    for broker in report["brokers"]:
        (log_dir,) = broker["logDirs"]
        assert [p["partition"] for p in log_dir["partitions"]] == ["dirs-0"]

    versions = cluster_tools.admin(BROKER_API_VERSIONS)
    ports = sorted(samsa_cluster.client_ports.values())
    answered = sorted(
        int(port) for port in re.findall(r"^127\.0\.0\.1:(\d+) \(id:", versions, re.M)
    )
    assert answered == ports


def test_reassign_with_throttle(cluster_tools: KafkaTools, tmp_path: Path) -> None:
    cluster_tools.admin(TOPICS, "--create", "--topic", "throttled", "--replica-assignment", "1:2")
    plan = write_json(
        tmp_path / "plan.json",
        '{"version":1,"partitions":[{"topic":"throttled","partition":0,"replicas":[3,1]}]}',
    )
    started = cluster_tools.admin(
        REASSIGN_PARTITIONS, "--reassignment-json-file", plan, "--execute", "--throttle", "100000"
    )
    assert "Successfully started partition reassignment for throttled-0" in started


def test_client_quotas_set_by_kafka_configs_apply_on_every_node(
    cluster_tools: KafkaTools, samsa_cluster: LocalCluster
) -> None:
    """kafka-configs writes quotas through one node (forwarded to the controller);
    every node describes them, and every node throttles the client by them."""
    client = ["--entity-type", "clients", "--entity-name", "cluster-limited"]
    altered = cluster_tools.admin(
        CONFIGS, "--alter", *client, "--add-config", "producer_byte_rate=2000"
    )
    assert "Completed updating config for client cluster-limited." in altered
    user = ["--entity-type", "users", "--entity-name", "quota-user"]
    cluster_tools.admin(
        CONFIGS,
        "--alter",
        *user,
        "--add-config",
        "consumer_byte_rate=1048576,request_percentage=150",
    )
    described = cluster_tools.admin(CONFIGS, "--describe", *client)
    assert "Quota configs for client-id 'cluster-limited' are producer_byte_rate=2000.0" in (
        described
    )
    for node_id in sorted(samsa_cluster.nodes):  # each node answers from its own image
        raw = RawClient(samsa_cluster.client_address(node_id))
        try:
            assert quotas_of(describe(raw, client_id="cluster-limited")) == {
                (("client-id", "cluster-limited"),): {"producer_byte_rate": 2000.0}
            }
        finally:
            raw.close()
    # For users the tool also asks DescribeUserScramCredentials, which fails (and
    # makes it exit 1) until SCRAM credentials are served; the quota line comes first.
    described = cluster_tools.run(
        CONFIGS, "--bootstrap-server", cluster_tools.bootstrap, "--describe", *user, check=False
    )
    assert "user-principal 'quota-user'" in described
    assert "consumer_byte_rate=1048576.0" in described and "request_percentage=150.0" in described

    # One partition led by each node: each node's own quota of 2000 B/s (with its
    # ten-window allowance of 20 KB) throttles the 25 KB written to it.
    cluster_tools.admin(TOPICS, "--create", "--topic", "quota-rf1", "--replica-assignment", "1,2,3")
    throttled_by: set[int] = set()

    def stats(raw: str) -> None:
        for broker in json.loads(raw)["brokers"].values():
            if broker["nodeid"] >= 0 and broker["throttle"]["cnt"]:
                throttled_by.add(broker["nodeid"])

    producer = Producer(
        {
            "bootstrap.servers": samsa_cluster.bootstrap,
            "client.id": "cluster-limited",
            "linger.ms": 5,
            "batch.size": 5000,
            "statistics.interval.ms": 200,
            "stats_cb": stats,
        }
    )
    for i in range(75):
        producer.produce("quota-rf1", b"q" * 1000, partition=i % 3)
    assert producer.flush(60) == 0

    def every_node_throttled() -> bool:
        producer.poll(0.2)
        return throttled_by == {1, 2, 3}

    wait_until(every_node_throttled, 10, "a throttle from every node in librdkafka's stats")
