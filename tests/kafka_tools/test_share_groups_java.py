"""Kafka 4.1's Java share consumer (``KafkaShareConsumer`` through
``kafka-console-share-consumer``) and ``kafka-share-groups`` against Samsa.

The broker starts share partitions at the earliest offset, so records written
before the consumer joins are delivered (Kafka's group config
``share.auto.offset.reset=earliest``).  Kafka 4.1.1's ``kafka-share-groups``
has no ``--reset-offsets`` yet ("not yet implemented"), so the tool is checked
for --list, --describe and --delete-offsets.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.integration.test_groups_common import create_topic, produce
from tests.kafka_tools.conftest import STARTUP_TIMEOUT_S, TEST_TIMEOUT_S, KafkaTools
from tests.kafka_tools.tool_classes import CONSOLE_SHARE_CONSUMER, SHARE_GROUPS

from samsa.testing import BrokerProcess
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]


@pytest.fixture(scope="module")
def share_tools(
    kafka_reference: KafkaReference, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkaTools]:
    settings = {
        "share.auto.offset.reset": "earliest",
        "share.coordinator.state.topic.num.partitions": "4",
    }
    proc = BrokerProcess(tmp_path_factory.mktemp("samsa") / "data", settings)
    proc.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield KafkaTools(kafka_reference, proc.bootstrap)
    finally:
        proc.stop()
        proc.kill()


def test_java_share_consumer_and_share_groups_tool(share_tools: KafkaTools) -> None:
    boot = share_tools.bootstrap
    create_topic(boot, "jq", 2)
    produce(boot, "jq", per_partition=10, partitions=2)
    consumed = share_tools.admin(
        CONSOLE_SHARE_CONSUMER,
        "--topic",
        "jq",
        "--group",
        "java-share",
        "--max-messages",
        "20",
        "--timeout-ms",
        "60000",
    )
    assert sorted(consumed.split()) == sorted(f"{p}-{i}" for p in range(2) for i in range(10))

    assert "java-share" in share_tools.admin(SHARE_GROUPS, "--list").split()
    described = share_tools.admin(SHARE_GROUPS, "--describe", "--group", "java-share")
    rows = [line.split() for line in described.splitlines() if line.startswith("java-share")]
    assert sorted((r[1], r[2], r[3]) for r in rows) == [("jq", "0", "10"), ("jq", "1", "10")]

    deleted = share_tools.admin(
        SHARE_GROUPS, "--delete-offsets", "--group", "java-share", "--topic", "jq"
    )
    assert any(line.split() == ["jq", "Successful"] for line in deleted.splitlines())
    after = share_tools.admin(SHARE_GROUPS, "--describe", "--group", "java-share")
    assert not [line for line in after.splitlines() if line.startswith("java-share")]
