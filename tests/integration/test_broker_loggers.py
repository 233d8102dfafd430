"""Log levels changed at runtime (BROKER_LOGGER, KIP-412) through kafka-python's admin client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

from samsa.testing import BrokerProcess

LOGGER = ConfigResourceType.BROKER_LOGGER


@pytest.fixture
def admin(broker: BrokerProcess) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        yield client
    finally:
        client.close()


def node_of(admin: KafkaAdminClient) -> str:
    return str(admin.describe_cluster()["brokers"][0]["broker_id"])


def levels(admin: KafkaAdminClient, node: str) -> dict[str, str]:
    rows = admin.describe_configs([ConfigResource(LOGGER, node)], config_filter="all")
    return {name: row["value"] for name, row in rows["broker_logger"][node].items()}


def change(admin: KafkaAdminClient, node: str, **ops: tuple[AlterConfigOp, str | None]) -> str:
    resource = ConfigResource(LOGGER, node, {k.replace("__", "."): v for k, v in ops.items()})
    answer = admin.alter_configs([resource], raise_on_unknown=False, incremental=True)
    return answer["broker_logger"][node]


def test_a_logger_level_is_set_and_unset_at_runtime(
    broker: BrokerProcess, admin: KafkaAdminClient
) -> None:
    node = node_of(admin)
    before = levels(admin, node)
    assert before["root"] == "INFO" and before["samsa.server"] == "INFO"

    assert change(admin, node, samsa__server=(AlterConfigOp.SET, "DEBUG")) == "OK"
    assert broker.wait_for_log("Updated the log level of samsa.server to DEBUG")
    assert levels(admin, node)["samsa.server"] == "DEBUG"

    assert change(admin, node, samsa__server=(AlterConfigOp.DELETE, None)) == "OK"
    assert levels(admin, node)["samsa.server"] == "INFO"  # the root's again


def test_bad_logger_changes_get_kafkas_errors(admin: KafkaAdminClient) -> None:
    node = node_of(admin)
    loud = change(admin, node, samsa__server=(AlterConfigOp.SET, "LOUD"))
    assert "InvalidConfigurationError" in loud and "Valid log levels are DEBUG, ERROR" in loud
    missing = change(admin, node, no__such__logger=(AlterConfigOp.SET, "DEBUG"))
    assert "Logger no.such.logger does not exist!" in missing
    root = change(admin, node, root=(AlterConfigOp.DELETE, None))
    assert "InvalidRequestError" in root and "root logger is not allowed" in root
    appended = change(admin, node, root=(AlterConfigOp.APPEND, "DEBUG"))
    assert "APPEND operation is not allowed" in appended
    assert levels(admin, node)["root"] == "INFO"
