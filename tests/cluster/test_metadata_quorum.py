"""The metadata quorum with real processes: three combined nodes and one broker.

Every node builds its metadata image from the Raft log, so a topic created
through any node is visible on all; the quorum survives the loss (SIGKILL) or
hang (SIGSTOP) of its active controller; a full restart keeps everything; and
a single-node data dir from before the quorum grows into a three-voter quorum
with its topics and data intact.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from tests.cluster.helpers import (
    active_controller,
    admin,
    call,
    create_topic,
    create_topic_eventually,
    node_metadata,
    node_topics,
    wait_until,
)

from samsa.config.values import parse_properties
from samsa.controller.metadata_log import MetadataLog
from samsa.controller.records import producer_ids_record, topic_record
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.storage.log_manager import LogManager
from samsa.storage.topic_config.log_config import LogConfig
from samsa.testing import BrokerProcess
from samsa.testing.cluster import LocalCluster, free_ports

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CREATE_TOPICS = 19


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path_factory.mktemp("quorum"), controllers=3, brokers=1) as c:
        c.start()
        yield c


def _create_through(cluster: LocalCluster, node_id: int, name: str) -> dict[str, object]:
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": 2,
                "replication_factor": 3,
                "assignments": [],
                "configs": [{"name": "retention.ms", "value": "3600000"}],
            }
        ],
        "timeout_ms": 10000,
        "validate_only": False,
    }
    answer = call(f"127.0.0.1:{cluster.client_ports[node_id]}", CREATE_TOPICS, 7, body)
    result: dict[str, object] = answer["topics"][0]
    return result


def test_topics_created_through_any_node_are_visible_on_all(cluster: LocalCluster) -> None:
    names = {f"made-on-{node_id}" for node_id in cluster.nodes}
    for node_id in cluster.nodes:
        result = _create_through(cluster, node_id, f"made-on-{node_id}")
        assert result["error_code"] == 0, result
    for node_id in cluster.nodes:
        wait_until(
            lambda n=node_id: names <= node_topics(cluster, n), 10, f"topics on node {node_id}"
        )
        metadata = node_metadata(cluster, node_id)
        assert sorted(b["node_id"] for b in metadata["brokers"]) == [1, 2, 3, 4]
        ids = {t["name"]: t["topic_id"] for t in metadata["topics"] if t["name"] in names}
        assert len(set(ids.values())) == len(names)  # every node agrees on the ids...
    first = {t["name"]: t["topic_id"] for t in node_metadata(cluster, 1)["topics"]}
    for node_id in cluster.nodes:
        other = {t["name"]: t["topic_id"] for t in node_metadata(cluster, node_id)["topics"]}
        assert {n: other[n] for n in names} == {n: first[n] for n in names}  # ...and on them


def test_a_duplicate_topic_is_refused_by_whichever_node_is_asked(cluster: LocalCluster) -> None:
    assert _create_through(cluster, 4, "twice")["error_code"] == 0
    assert _create_through(cluster, 2, "twice")["error_code"] == 36  # TOPIC_ALREADY_EXISTS


def test_the_quorum_has_three_voters_and_the_broker_observes(cluster: LocalCluster) -> None:
    def settled() -> object:
        with admin(cluster.bootstrap) as client:
            info = client.describe_metadata_quorum(timeout=5)
        ends = {r.log_end_offset for r in info.voters + info.observers}
        return info if ends == {info.high_watermark} else None

    info = wait_until(settled, 10, "every replica at the high watermark")
    assert info.leader_id in (1, 2, 3) and info.leader_epoch >= 1
    assert sorted(v.replica_id for v in info.voters) == [1, 2, 3]
    assert [o.replica_id for o in info.observers] == [4]


def test_sigkill_of_the_active_controller_elects_another_and_creation_continues(
    tmp_path: Path,
) -> None:
    with LocalCluster(tmp_path, controllers=3, brokers=1) as cluster:
        cluster.start()
        leader = active_controller(cluster.bootstrap)
        cluster.kill(leader)
        survivors = [n for n in cluster.nodes if n != leader]
        bootstrap = cluster.bootstrap_of(survivors)
        new_leader = wait_until(
            lambda: (lambda lid: lid if lid not in (None, -1, leader) else None)(
                active_controller(bootstrap)
            ),
            15,
            "a new active controller",
        )
        assert new_leader in cluster.controller_ids
        create_topic_eventually(bootstrap, "after-failover", partitions=3, replication_factor=2)
        for node_id in survivors:
            wait_until(lambda n=node_id: "after-failover" in node_topics(cluster, n), 10, "topic")
        cluster.start([leader])  # the old controller comes back and catches up
        wait_until(lambda: "after-failover" in node_topics(cluster, leader), 15, "catch-up")


def test_sigstop_of_the_active_controller_and_its_return(tmp_path: Path) -> None:
    with LocalCluster(tmp_path, controllers=3, brokers=0) as cluster:
        cluster.start()
        leader = active_controller(cluster.bootstrap)
        cluster.pause(leader)
        survivors = [n for n in cluster.nodes if n != leader]
        bootstrap = cluster.bootstrap_of(survivors)
        wait_until(
            lambda: active_controller(bootstrap) not in (None, -1, leader), 15, "a new controller"
        )
        create_topic_eventually(bootstrap, "while-paused")
        cluster.resume(leader)
        # The paused leader resigns or follows once it hears of the new epoch.
        wait_until(
            lambda: "while-paused" in node_topics(cluster, leader), 15, "the old leader catching up"
        )
        with admin(cluster.bootstrap) as client:
            info = client.describe_metadata_quorum(timeout=5)
        assert info.leader_id != leader or info.leader_epoch >= 3


def test_a_full_cluster_restart_keeps_all_metadata(tmp_path: Path) -> None:
    with LocalCluster(tmp_path, controllers=3, brokers=1) as cluster:
        cluster.start()
        create_topic(
            cluster.bootstrap,
            "kept",
            partitions=4,
            replication_factor=3,
            configs={"cleanup.policy": "compact"},
        )
        create_topic(cluster.bootstrap, "dropped")
        with admin(cluster.bootstrap) as client:
            client.create_partitions({"kept": 6})
            client.delete_topics(["dropped"])
        wait_until(lambda: "dropped" not in node_topics(cluster, 4), 10, "the deletion everywhere")
        before = {n: _topic_view(node_metadata(cluster, n)) for n in cluster.nodes}
        for node_id in cluster.nodes:
            assert cluster.stop(node_id) == 0
        cluster.start()
        for node_id in cluster.nodes:
            wait_until(
                lambda n=node_id: _topic_view(node_metadata(cluster, n)) == before[n],
                15,
                f"node {node_id}'s topics",
            )
        with admin(cluster.bootstrap) as client:
            configs = client.describe_configs("topic", "kept", ["cleanup.policy"])
        assert configs["cleanup.policy"].value == "compact"


def _topic_view(metadata: dict[str, object]) -> dict[str, tuple[bytes, int]]:
    return {
        t["name"]: (t["topic_id"], len(t["partitions"]))  # type: ignore[index]
        for t in metadata["topics"]  # type: ignore[attr-defined]
        if not t["error_code"]  # type: ignore[index]
    }


# -- growing a single node into a quorum ------------------------------------------------


LEGACY_TOPIC = "legacy"
LEGACY_ID = uuid.UUID(int=0x5A45).bytes


def _legacy_data_dir(data_dir: Path) -> None:
    """A data dir as the single-node broker wrote it before the quorum:
    meta.properties, cluster-metadata.log and the partition logs."""
    from samsa.server.metadata import meta_properties

    meta_properties.load_or_create(data_dir, 1)
    legacy = MetadataLog(data_dir)
    legacy.append([topic_record(LEGACY_TOPIC, LEGACY_ID, 2, {"retention.ms": "86400000"})])
    legacy.append([producer_ids_record(1000)])
    legacy.close()
    manager = LogManager(data_dir, LogConfig.from_dict({}))
    for partition in range(2):
        log = manager.create_log(LEGACY_TOPIC, partition)
        builder = RecordBatchBuilder()
        for i in range(5):
            builder.append(1_700_000_000_000 + i, b"k%d" % i, b"p%d-v%d" % (partition, i))
        log.append(builder.build(), leader_epoch=-1)
    manager.close()


def _read_all(bootstrap: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{uuid.uuid4()}",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(LEGACY_TOPIC, partition, 0)])
        values: list[bytes] = []
        wait_until(
            lambda: _poll_into(consumer, values, count),
            20,
            f"{count} records of partition {partition}",
        )
        return values
    finally:
        consumer.close()


def _poll_into(consumer: Consumer, values: list[bytes], count: int) -> bool:
    message = consumer.poll(0.2)
    if message is not None and not message.error():
        values.append(message.value())
    return len(values) >= count


def _directory_id(data_dir: Path) -> str:
    from samsa.server.node import directory_uuid

    values = parse_properties((data_dir / "meta.properties").read_text())
    found = directory_uuid(values["directory.id"])
    assert found is not None
    return str(found)


def test_a_single_node_data_dir_grows_to_three_voters(tmp_path: Path) -> None:
    first_dir = tmp_path / "node-1"
    _legacy_data_dir(first_dir)
    first = BrokerProcess(first_dir)
    joiners: list[BrokerProcess] = []
    try:
        first.start()
        assert first.wait_for_log("migrated")
        assert [_read_all(first.bootstrap, p, 5) for p in range(2)] == [
            [b"p%d-v%d" % (p, i) for i in range(5)] for p in range(2)
        ]
        cluster_id = parse_properties((first_dir / "meta.properties").read_text())["cluster.id"]
        ports = free_ports(4)
        for index, node_id in enumerate((2, 3)):
            client_port, controller_port = ports[2 * index], ports[2 * index + 1]
            joiner = BrokerProcess(
                tmp_path / f"node-{node_id}",
                {
                    "node.id": str(node_id),
                    "cluster.id": cluster_id,
                    "process.roles": "broker,controller",
                    "listeners": f"PLAINTEXT://127.0.0.1:{client_port},CONTROLLER://127.0.0.1:{controller_port}",
                    "controller.listener.names": "CONTROLLER",
                    "controller.quorum.bootstrap.servers": first.bootstrap,
                },
                port=None,
            )
            joiner.start()
            joiners.append(joiner)
            with admin(first.bootstrap) as client:
                wait_until(
                    lambda n=node_id: any(
                        o.replica_id == n
                        for o in client.describe_metadata_quorum(timeout=5).observers
                    ),
                    15,
                    f"node {node_id} observing",
                )
                client.add_raft_voter(
                    node_id,
                    _directory_id(tmp_path / f"node-{node_id}"),
                    [("CONTROLLER", "127.0.0.1", controller_port)],
                    timeout=15,
                )
        with admin(first.bootstrap) as client:
            info = client.describe_metadata_quorum(timeout=5)
        assert sorted(v.replica_id for v in info.voters) == [1, 2, 3]
        for joiner in joiners:
            wait_until(
                lambda j=joiner: LEGACY_TOPIC in _topics_at(j.bootstrap), 15, "the legacy topic"
            )
        # A real three-voter quorum: it elects a new leader without node 1.
        first.kill()
        bootstrap = ",".join(j.bootstrap for j in joiners)
        wait_until(lambda: active_controller(bootstrap) in (2, 3), 20, "a leader among the joiners")
        create_topic_eventually(bootstrap, "after-growth")
    finally:
        for process in (first, *joiners):
            process.kill()


def _topics_at(address: str) -> set[str]:
    body = {"topics": None, "allow_auto_topic_creation": False}
    return {t["name"] for t in call(address, 3, 12, body)["topics"] if not t["error_code"]}


def test_a_voter_with_a_damaged_snapshot_and_a_torn_log_recovers_from_the_quorum(
    tmp_path: Path,
) -> None:
    """Snapshots every few records and small segments, so the log below a
    snapshot is deleted: when that snapshot is damaged (and the log tail torn) the
    voter refetches the metadata from the leader instead of starting without it."""
    settings = {
        "metadata.log.max.record.bytes.between.snapshots": "400",
        "metadata.log.segment.bytes": "1024",
    }
    with LocalCluster(tmp_path, controllers=3, brokers=0, settings=settings) as cluster:
        cluster.start()
        for i in range(12):
            create_topic(cluster.bootstrap, f"many-{i}")
        names = {f"many-{i}" for i in range(12)}
        wait_until(lambda: names <= node_topics(cluster, 3), 10, "every topic on node 3")
        metadata_dir = cluster.nodes[3].data_dir / "__cluster_metadata-0"
        assert cluster.stop(3) == 0
        snapshots = sorted(metadata_dir.glob("*.checkpoint"))
        assert snapshots, "node 3 wrote no snapshot"
        for snapshot in snapshots:
            data = bytearray(snapshot.read_bytes())
            data[len(data) // 2] ^= 0xFF
            snapshot.chmod(0o644)
            snapshot.write_bytes(bytes(data))
        segments = sorted(metadata_dir.glob("*.log"))
        with segments[-1].open("ab") as tail:
            tail.write(b"\x00\x00\x00\x00\x00\x00\x00\x07torn")
        create_topic(cluster.bootstrap_of([1, 2]), "while-node-3-was-down")
        cluster.start([3])
        assert cluster.nodes[3].wait_for_log("is damaged")
        wait_until(
            lambda: names | {"while-node-3-was-down"} <= node_topics(cluster, 3),
            20,
            "node 3 recovering the metadata from the quorum",
        )
