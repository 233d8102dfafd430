"""Dynamic broker configs on a three-node cluster.

The cluster-wide default travels in the metadata log, so one IncrementalAlterConfigs
through one node changes what every broker accepts; a per-broker value changes
only its own broker.  Checked with confluent-kafka producing to partitions led
by each node, and with DescribeConfigs asked of each node directly.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.cluster.helpers import call, wait_until

from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 44
RESOURCE_BROKER = 4
SOURCE_DYNAMIC_BROKER, SOURCE_DYNAMIC_DEFAULT = 2, 3


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path_factory.mktemp("dynamic"), controllers=3) as c:
        c.start()
        yield c


def set_broker_config(address: str, name: str, key: str, value: str | None) -> None:
    config = {"name": key, "config_operation": 0 if value is not None else 1, "value": value}
    resource = {"resource_type": RESOURCE_BROKER, "resource_name": name, "configs": [config]}
    body = {"resources": [resource], "validate_only": False}
    [answer] = call(address, INCREMENTAL_ALTER_CONFIGS, 1, body)["responses"]
    assert answer["error_code"] == 0, answer


def message_max_bytes_on(cluster: LocalCluster, node_id: int) -> tuple[str, int]:
    """(value, source) of message.max.bytes as ``node_id`` describes itself."""
    resource = {
        "resource_type": RESOURCE_BROKER,
        "resource_name": str(node_id),
        "configuration_keys": ["message.max.bytes"],
    }
    body = {"resources": [resource], "include_synonyms": False, "include_documentation": False}
    address = cluster.bootstrap_of([node_id])
    [result] = call(address, DESCRIBE_CONFIGS, 4, body)["results"]
    [row] = result["configs"]
    return row["value"], row["config_source"]


def leaders(bootstrap: str, topic: str) -> dict[int, int]:
    """Partition -> leader, once every partition has one."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions
    found = {index: p.leader for index, p in partitions.items()}
    return found if found and all(leader >= 0 for leader in found.values()) else {}


def produce_to(bootstrap: str, topic: str, partition: int, size: int) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0, "linger.ms": 0})
    producer.produce(
        topic, value=b"x" * size, partition=partition, on_delivery=lambda e, _: outcome.append(e)
    )
    assert producer.flush(30) == 0
    return outcome[0]


def refused(error: KafkaError | None) -> bool:
    return error is not None and error.code() == KafkaError.MSG_SIZE_TOO_LARGE


def test_a_dynamic_message_max_bytes_reaches_every_broker(cluster: LocalCluster) -> None:
    bootstrap = cluster.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = "dynamic-limits"
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(20)
    by_partition = wait_until(lambda: leaders(bootstrap, topic), 30, "leaders")
    assert set(by_partition.values()) == {1, 2, 3}, by_partition  # placement spreads leaders
    assert all(produce_to(bootstrap, topic, p, 3000) is None for p in by_partition)

    set_broker_config(cluster.bootstrap_of([1]), "", "message.max.bytes", "2000")
    for node_id in cluster.nodes:
        wait_until(
            lambda n=node_id: message_max_bytes_on(cluster, n) == ("2000", SOURCE_DYNAMIC_DEFAULT),
            30,
            f"node {node_id} to take the cluster default",
        )
    assert all(refused(produce_to(bootstrap, topic, p, 3000)) for p in by_partition)

    # Node 2's own value: only the partitions node 2 leads accept big records again.
    set_broker_config(cluster.bootstrap_of([2]), "2", "message.max.bytes", "5000")
    wait_until(
        lambda: message_max_bytes_on(cluster, 2) == ("5000", SOURCE_DYNAMIC_BROKER),
        30,
        "node 2 to take its own value",
    )
    assert message_max_bytes_on(cluster, 1) == ("2000", SOURCE_DYNAMIC_DEFAULT)
    for index, leader in by_partition.items():
        error = produce_to(bootstrap, topic, index, 3000)
        assert (error is None) if leader == 2 else refused(error), (index, leader, error)
