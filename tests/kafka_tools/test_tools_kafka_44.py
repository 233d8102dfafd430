"""What Kafka 4.4's tools and Java clients ask that Kafka 4.1's did not, against Samsa.

The Java clients of the reference release negotiate the newest versions both
sides advertise, so against Samsa they now fetch, produce and commit by topic
id (Fetch 18, Produce 13, OffsetCommit/OffsetFetch 10); ``kafka-topics
--describe`` pages through DescribeTopicPartitions; ``kafka-features``
upgrades and downgrades through UpdateFeatures.  Each test checks the tool's
output, and the broker's request counters (``/metrics``, by API and version)
prove which versions did the work.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.kafka_tools.conftest import STARTUP_TIMEOUT_S, TEST_TIMEOUT_S, KafkaTools
from tests.kafka_tools.test_tools_single_node import parse_features
from tests.kafka_tools.tool_classes import (
    CONSOLE_CONSUMER,
    CONSOLE_PRODUCER,
    CONSUMER_GROUPS,
    FEATURES,
    TOPICS,
)

from samsa.testing import BrokerProcess
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(
        Path(tmp_path_factory.mktemp("samsa44")) / "data",
        args=["--metrics-listen", "127.0.0.1:0"],
    )
    proc.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield proc
    finally:
        proc.stop()
        proc.kill()


@pytest.fixture(scope="module")
def tools(kafka_reference: KafkaReference, broker: BrokerProcess) -> KafkaTools:
    major, minor = (int(p) for p in kafka_reference.kafka_version.split(".")[:2])
    if (major, minor) < (4, 4):
        pytest.skip(f"Kafka {kafka_reference.kafka_version}'s clients predate these versions")
    return KafkaTools(kafka_reference, broker.bootstrap)


def requests_by_version(broker: BrokerProcess) -> dict[tuple[str, int], float]:
    """``samsa_requests_total`` by (API name, version)."""
    assert broker.wait_for_log("metrics listening on http://")
    found = re.search(r"metrics listening on (http://\S+/)", broker.log_text())
    assert found is not None
    with urllib.request.urlopen(found.group(1) + "metrics", timeout=10) as response:
        text = response.read().decode()
    counts: dict[tuple[str, int], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "samsa_requests_total":
                counts[(sample.labels["api"], int(sample.labels["version"]))] = sample.value
    return counts


def test_java_clients_produce_fetch_and_commit_by_topic_id(
    tools: KafkaTools, broker: BrokerProcess
) -> None:
    tools.admin(TOPICS, "--create", "--topic", "by-id", "--partitions", "2")
    lines = [f"k{i}:v{i}" for i in range(20)]
    tools.admin(
        CONSOLE_PRODUCER, "--topic", "by-id",
        *tools.props(CONSOLE_PRODUCER, "parse.key=true", "key.separator=:"),
        stdin="\n".join(lines) + "\n",
    )  # fmt: skip
    # The KIP-848 consumer commits by topic id (v10); the classic one stays on v9.
    consumed = tools.admin(
        CONSOLE_CONSUMER, "--topic", "by-id", "--group", "by-id-group", "--from-beginning",
        "--max-messages", "20", "--command-property", "group.protocol=consumer",
        *tools.props(CONSOLE_CONSUMER, "print.key=true", "key.separator=:"),
    )  # fmt: skip
    assert sorted(consumed.splitlines()) == sorted(lines)
    described = tools.admin(CONSUMER_GROUPS, "--describe", "--group", "by-id-group")
    rows = [line.split() for line in described.splitlines() if line.startswith("by-id-group ")]
    assert sorted(row[2] for row in rows) == ["0", "1"], described
    assert sum(int(row[3]) for row in rows) == 20 and all(row[5] == "0" for row in rows), rows

    counts = requests_by_version(broker)
    for api, version in (
        ("Produce", 13),
        ("Fetch", 18),
        ("OffsetCommit", 10),
        ("OffsetFetch", 10),
        ("Metadata", 13),
        ("FindCoordinator", 6),
        ("ApiVersions", 5),
        ("ConsumerGroupHeartbeat", 1),
        ("ConsumerGroupDescribe", 1),
    ):
        assert counts.get((api, version), 0) > 0, (api, version, sorted(counts.items()))


def test_topics_describe_pages_through_describe_topic_partitions(
    tools: KafkaTools, broker: BrokerProcess
) -> None:
    tools.admin(TOPICS, "--create", "--topic", "paged", "--partitions", "7")
    tools.admin(TOPICS, "--create", "--topic", "paged-too", "--partitions", "1")
    before = requests_by_version(broker).get(("DescribeTopicPartitions", 0), 0)
    described = tools.admin(
        TOPICS, "--describe", "--topic", "paged.*", "--partition-size-limit-per-response", "3"
    )
    partitions = re.findall(r"Topic: (\S+)\s+Partition: (\d+)\s+Leader: 1", described)
    assert sorted((t, int(p)) for t, p in partitions) == [
        *(("paged", i) for i in range(7)),
        ("paged-too", 0),
    ]
    assert "PartitionCount: 7" in described and "PartitionCount: 1" in described
    # 8 partitions, 3 a page: the tool came back with the cursor twice at least.
    after = requests_by_version(broker).get(("DescribeTopicPartitions", 0), 0)
    assert after - before >= 3


def test_features_upgrade_downgrade_and_refusals(tools: KafkaTools) -> None:
    downgraded = tools.admin(FEATURES, "downgrade", "--feature", "transaction.version=1")
    assert "transaction.version was downgraded to 1." in downgraded
    assert (
        parse_features(tools.admin(FEATURES, "describe"))["transaction.version"][
            "FinalizedVersionLevel"
        ]
        == "1"
    )
    upgraded = tools.admin(FEATURES, "upgrade", "--feature", "transaction.version=2")
    assert "transaction.version was upgraded to 2." in upgraded
    assert (
        parse_features(tools.admin(FEATURES, "describe"))["transaction.version"][
            "FinalizedVersionLevel"
        ]
        == "2"
    )

    dry = tools.run(
        FEATURES, "--bootstrap-server", tools.bootstrap, "upgrade",
        "--feature", "transaction.version=1", "--dry-run", check=False,
    )  # fmt: skip
    assert "Can't downgrade the version of this feature without setting the upgrade type" in dry
    beyond = tools.run(
        FEATURES, "--bootstrap-server", tools.bootstrap, "upgrade",
        "--feature", "group.version=5", check=False,
    )  # fmt: skip
    assert "Local controller 1 only supports versions 0-1" in beyond
    assert (
        parse_features(tools.admin(FEATURES, "describe"))["group.version"]["FinalizedVersionLevel"]
        == "1"
    )
