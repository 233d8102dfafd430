"""The broker behaviours real clients rely on (issue: "Client contract"), checked on the wire."""

from __future__ import annotations

import time
from pathlib import Path

from tests.integration.test_bad_input import RawClient

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.testing import BrokerProcess

INT32_MIN = -(2**31)


def _produce(client: RawClient, topic: str, values: list[bytes], partition: int = 0) -> dict:
    builder = RecordBatchBuilder(batch_size=1 << 24)
    now = int(time.time() * 1000)
    for v in values:
        builder.append(now, None, v)
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": builder.build()}]}
        ],
    }
    return client.call(0, 9, body)["responses"][0]["partition_responses"][0]


def _fetch(
    client: RawClient, topic: str, offset: int, partition_max: int, max_bytes: int = 50_000_000
) -> dict:
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "log_start_offset": -1,
                        "partition_max_bytes": partition_max,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    return client.call(1, 11, body)["responses"][0]["partitions"][0]


def _create(
    client: RawClient, topic: str, partitions: int = 1, configs: dict[str, str] | None = None
) -> None:
    body = {
        "topics": [
            {
                "name": topic,
                "num_partitions": partitions,
                "replication_factor": 1,
                "assignments": [],
                "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
            }
        ],
        "timeout_ms": 5000,
        "validate_only": False,
    }
    result = client.call(19, 7, body)["topics"][0]
    assert result["error_code"] == 0, result


def _list_offset(client: RawClient, topic: str, timestamp: int) -> dict:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp}
                ],
            }
        ],
    }
    return client.call(2, 7, body)["topics"][0]["partitions"][0]


def test_metadata_identity_and_defaults(broker: BrokerProcess, topic_name: str) -> None:
    client = RawClient(broker.bootstrap)
    _create(client, topic_name, 2)
    v0 = client.call(3, 0, {"topics": []})
    assert topic_name in {t["name"] for t in v0["topics"]}, (
        "Metadata v0 with no topics means all topics"
    )
    v12 = client.call(
        3,
        12,
        {
            "topics": None,
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False,
        },
    )
    assert v12["cluster_id"] and v12["controller_id"] == v12["brokers"][0]["node_id"] == 1
    [topic] = [t for t in v12["topics"] if t["name"] == topic_name]
    assert topic["topic_authorized_operations"] == INT32_MIN
    # Leader epochs are real (the metadata quorum keeps them), so clients check
    # their positions with OffsetForLeaderEpoch, which the leader answers.
    epochs = {p["partition_index"]: p["leader_epoch"] for p in topic["partitions"]}
    assert all(epoch >= 0 for epoch in epochs.values())
    answer = client.call(
        23,
        3,
        {
            "replica_id": -2,
            "topics": [
                {
                    "topic": topic_name,
                    "partitions": [
                        {
                            "partition": 0,
                            "current_leader_epoch": epochs[0],
                            "leader_epoch": epochs[0],
                        }
                    ],
                }
            ],
        },
    )["topics"][0]["partitions"][0]
    assert (answer["error_code"], answer["leader_epoch"], answer["end_offset"]) == (0, epochs[0], 0)
    assert client.call(3, 12, {"topics": [], "allow_auto_topic_creation": False})["topics"] == []
    client.close()


def test_cluster_id_survives_restart(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        client = RawClient(broker.bootstrap)
        first = client.call(60, 0, {"include_cluster_authorized_operations": False})
        client.close()
        broker.stop()
        broker.start()
        client = RawClient(broker.bootstrap)
        second = client.call(60, 0, {"include_cluster_authorized_operations": False})
        client.close()
        assert first["cluster_id"] == second["cluster_id"] and second["controller_id"] == 1
        assert (
            "cluster.id=" + first["cluster_id"]
            in (tmp_path / "data" / "meta.properties").read_text()
        )
    finally:
        broker.kill()


def test_advertised_versions_for_librdkafka_probes(broker: BrokerProcess) -> None:
    client = RawClient(broker.bootstrap)
    versions = {
        k["api_key"]: (k["min_version"], k["max_version"])
        for k in client.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})[
            "api_keys"
        ]
    }
    assert versions[0][0] == 0 and versions[0][1] >= 7, "Produce from v0 so librdkafka compresses"
    assert versions[1][0] <= 4 <= versions[1][1] and versions[1][1] >= 10
    assert versions[10][0] == 0, "FindCoordinator v0 gates lz4 in librdkafka"
    assert versions[22][0] == 0 and versions[22][1] >= 4
    # KIP-848 is implemented: librdkafka only picks it with group.protocol=consumer.
    assert versions[68] == (0, 1) and versions[69][0] == 0
    client.close()


def test_high_watermark_counts_records_not_batches(broker: BrokerProcess, topic_name: str) -> None:
    client = RawClient(broker.bootstrap)
    _create(client, topic_name)
    ends = []
    for count in (5, 1, 3, 1):
        _produce(client, topic_name, [b"r"] * count)
        ends.append(_list_offset(client, topic_name, -1)["offset"])
    assert ends == [5, 6, 9, 10]
    assert _fetch(client, topic_name, 0, 1 << 20)["high_watermark"] == 10
    assert _list_offset(client, topic_name, -2)["offset"] == 0
    client.close()


def test_first_batch_returned_even_if_over_limits(broker: BrokerProcess, topic_name: str) -> None:
    client = RawClient(broker.bootstrap)
    _create(client, topic_name)
    _produce(client, topic_name, [b"x" * 50_000])
    _produce(client, topic_name, [b"y" * 10])
    part = _fetch(client, topic_name, 0, partition_max=100, max_bytes=100)
    assert part["error_code"] == 0
    records = bytes(part["records"])
    assert 50_000 < len(records) < 51_000, "exactly the first batch, though larger than both limits"
    out_of_range = _fetch(client, topic_name, 99, 1 << 20)
    assert out_of_range["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE
    client.close()


def test_producer_ids_never_reused_across_restarts(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    request = {
        "transactional_id": None,
        "transaction_timeout_ms": 60000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    try:
        client = RawClient(broker.bootstrap)
        seen = {client.call(22, 4, request)["producer_id"] for _ in range(5)}
        bumped = client.call(22, 4, {**request, "producer_id": min(seen), "producer_epoch": 0})
        assert (bumped["producer_id"], bumped["producer_epoch"]) == (min(seen), 1)
        client.close()
        broker.kill()  # a crash, not a clean stop
        broker.start()
        client = RawClient(broker.bootstrap)
        after = {client.call(22, 4, request)["producer_id"] for _ in range(5)}
        client.close()
        assert len(seen) == 5 and not seen & after
    finally:
        broker.kill()


def test_transactional_coordinator_is_found(broker: BrokerProcess) -> None:
    """COORDINATOR_NOT_AVAILABLE first (retriable, as Kafka answers while
    __transaction_state is created), then this broker, the leader of the id's
    partition."""
    client = RawClient(broker.bootstrap)
    codes = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        response = client.call(10, 1, {"key": "txn", "key_type": 1})
        codes.append(response["error_code"])
        if response["error_code"] != ErrorCode.COORDINATOR_NOT_AVAILABLE:
            break
        time.sleep(0.05)
    assert codes[-1] == ErrorCode.NONE, codes
    assert response["port"] == int(broker.bootstrap.rsplit(":", 1)[1])
    client.close()


def test_compacted_topics_are_not_cut_by_retention(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", {"log.retention.check.interval.ms": "50"})
    broker.start()
    try:
        client = RawClient(broker.bootstrap)
        small = {"segment.bytes": "1024", "retention.ms": "1", "retention.bytes": "1"}
        _create(client, "compacted", configs={"cleanup.policy": "compact", **small})
        _create(client, "deleted", configs={"cleanup.policy": "delete", **small})
        for _ in range(20):
            _produce(client, "compacted", [b"v" * 200])
            _produce(client, "deleted", [b"v" * 200])
        deadline = time.monotonic() + 10
        while _list_offset(client, "deleted", -2)["offset"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _list_offset(client, "deleted", -2)["offset"] > 0, (
            "retention should cut the delete topic"
        )
        assert _list_offset(client, "compacted", -2)["offset"] == 0
        client.close()
    finally:
        broker.kill()


def test_compacted_topics_refuse_records_without_a_key(
    broker: BrokerProcess, topic_name: str
) -> None:
    client = RawClient(broker.bootstrap)
    _create(client, topic_name, configs={"cleanup.policy": "compact"})
    now = int(time.time() * 1000)
    builder = RecordBatchBuilder(batch_size=1 << 24)
    builder.append(now, b"k", b"kept")
    builder.append(now, None, b"no key")
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [
            {"name": topic_name, "partition_data": [{"index": 0, "records": builder.build()}]}
        ],
    }
    refused = client.call(0, 9, body)["responses"][0]["partition_responses"][0]
    assert refused["error_code"] == ErrorCode.INVALID_RECORD
    assert refused["record_errors"][0]["batch_index"] == 1
    assert "without key" in refused["record_errors"][0]["batch_index_error_message"]
    assert _list_offset(client, topic_name, -1)["offset"] == 0, "the whole batch is refused"

    # Keyed records still go in; a delete-policy topic takes keyless ones.
    keyed = RecordBatchBuilder(batch_size=1 << 24)
    keyed.append(now, b"k", b"v")
    body["topic_data"][0]["partition_data"][0]["records"] = keyed.build()
    assert client.call(0, 9, body)["responses"][0]["partition_responses"][0]["error_code"] == 0
    _create(client, topic_name + "-d")
    assert _produce(client, topic_name + "-d", [b"no key"])["error_code"] == 0
    client.close()
