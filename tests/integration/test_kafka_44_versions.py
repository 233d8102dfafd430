"""Kafka 4.4's request versions against a real broker, byte for byte.

Each test sends exactly the version a Kafka 4.4 client sends (through Samsa's
codec, which ``tests/protocol/test_kafka_codec_oracle.py`` pins to Kafka's)
and checks what that version brings: topics named by id (Fetch 13+, Produce 13,
OffsetCommit/OffsetFetch 10, TxnOffsetCommit 6) with UNKNOWN_TOPIC_ID for an
id the broker does not know, ApiVersions 5's cluster check, DescribeGroups 6's
GROUP_ID_NOT_FOUND, ListTransactions 2's pattern, ListOffsets 11, and the new
DescribeTopicPartitions and ListConfigResources.  Kafka's own tools and Java
clients use the same versions in ``tests/kafka_tools``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.integration.raw_client import RawClient

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_records
from samsa.testing import BrokerProcess

UNKNOWN_ID = b"\x42" * 16
VOTE, BEGIN_QUORUM_EPOCH, ALTER_PARTITION, BROKER_HEARTBEAT = 52, 53, 56, 63


@pytest.fixture
def client(broker: BrokerProcess) -> Any:
    raw = RawClient(broker.bootstrap)
    yield raw
    raw.close()


def create(client: RawClient, name: str, partitions: int = 1) -> bytes:
    """Create ``name`` and return its topic id (from Metadata v12)."""
    created = client.call(
        19,
        7,
        {
            "topics": [
                {
                    "name": name,
                    "num_partitions": partitions,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [],
                }
            ],
            "timeout_ms": 30000,
            "validate_only": False,
        },
    )
    assert created["topics"][0]["error_code"] == 0, created
    deadline = time.monotonic() + 10
    while True:
        described = client.call(3, 12, {"topics": [{"name": name}]})["topics"][0]
        if not described["error_code"] and all(
            p["leader_id"] >= 0 for p in described["partitions"]
        ):
            return bytes(described["topic_id"])
        assert time.monotonic() < deadline, described
        time.sleep(0.05)


def batch(*values: bytes) -> bytes:
    builder = RecordBatchBuilder()
    for value in values:
        builder.append(int(time.time() * 1000), None, value)
    return bytes(builder.build())


def produce_v13(client: RawClient, topic_id: bytes, *values: bytes) -> dict[str, Any]:
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 5000,
        "topic_data": [
            {"topic_id": topic_id, "partition_data": [{"index": 0, "records": batch(*values)}]}
        ],
    }
    return client.call(0, 13, body)


def fetch_v18(client: RawClient, topics: list[bytes], **fields: Any) -> dict[str, Any]:
    body = {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
            }
            for topic_id in topics
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
        **fields,
    }
    return client.call(1, 18, body)


LOADING = {
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
}


def until_coordinated(client: RawClient, api_key: int, version: int, body: dict[str, Any]) -> Any:
    """Send a group request again while the group coordinator is still starting
    (it creates ``__consumer_offsets`` on first use), as clients do."""
    deadline = time.monotonic() + 30
    while True:
        answer = client.call(api_key, version, body)
        codes = {p["error_code"] for t in answer.get("topics") or () for p in t["partitions"]} | {
            answer.get("error_code", 0)
        }
        if not codes & LOADING:
            return answer
        assert time.monotonic() < deadline, answer
        time.sleep(0.1)


def values_of(partition: dict[str, Any]) -> list[bytes | None]:
    return [r.value for _, records in decode_records(partition["records"]) for r in records]


def test_produce_13_and_fetch_18_name_topics_by_id(client: RawClient, topic_name: str) -> None:
    topic_id = create(client, topic_name)
    produced = produce_v13(client, topic_id, b"a", b"b")
    (topic,) = produced["responses"]
    assert topic["topic_id"] == topic_id
    assert topic["partition_responses"][0]["error_code"] == 0

    fetched = fetch_v18(client, [topic_id])
    assert fetched["error_code"] == 0
    (answer,) = fetched["responses"]
    assert answer["topic_id"] == topic_id
    assert values_of(answer["partitions"][0]) == [b"a", b"b"]


def test_unknown_topic_ids_are_answered_unknown_topic_id_at_once(
    client: RawClient, topic_name: str
) -> None:
    topic_id = create(client, topic_name)
    produced = produce_v13(client, UNKNOWN_ID, b"x")
    (refused,) = produced["responses"]
    assert refused["topic_id"] == UNKNOWN_ID
    assert refused["partition_responses"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID

    # A long poll with an unknown id is not held: the error is already known.
    started = time.monotonic()
    fetched = fetch_v18(client, [topic_id, UNKNOWN_ID], max_wait_ms=10_000, min_bytes=1 << 20)
    assert time.monotonic() - started < 5
    by_id = {t["topic_id"]: t["partitions"][0] for t in fetched["responses"]}
    assert by_id[UNKNOWN_ID]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID
    assert by_id[topic_id]["error_code"] == 0


def test_a_fetch_session_by_id_answers_what_changed(client: RawClient, topic_name: str) -> None:
    topic_id = create(client, topic_name)
    opened = fetch_v18(client, [topic_id], session_epoch=0)
    session = opened["session_id"]
    assert session > 0 and opened["responses"][0]["topic_id"] == topic_id
    produce_v13(client, topic_id, b"later")
    incremental = fetch_v18(client, [], session_id=session, session_epoch=1, max_wait_ms=2000)
    (answer,) = incremental["responses"]
    assert answer["topic_id"] == topic_id
    assert values_of(answer["partitions"][0]) == [b"later"]


def test_offset_commit_and_fetch_10_by_id(client: RawClient, topic_name: str) -> None:
    topic_id = create(client, topic_name)
    group = f"{topic_name}-group"
    committed = until_coordinated(
        client,
        8,
        10,
        {
            "group_id": group,
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [
                {
                    "topic_id": topic_id,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 7,
                            "committed_leader_epoch": -1,
                            "committed_metadata": "m",
                        }
                    ],
                },
                {
                    "topic_id": UNKNOWN_ID,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 1,
                            "committed_leader_epoch": -1,
                            "committed_metadata": None,
                        }
                    ],
                },
            ],
        },
    )
    codes = {t["topic_id"]: t["partitions"][0]["error_code"] for t in committed["topics"]}
    assert codes == {topic_id: 0, UNKNOWN_ID: ErrorCode.UNKNOWN_TOPIC_ID}

    def offset_fetch(topics: list[dict[str, Any]] | None) -> dict[str, Any]:
        body = {
            "groups": [
                {"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics}
            ],
            "require_stable": False,
        }
        (answer,) = client.call(9, 10, body)["groups"]
        return {t["topic_id"]: t["partitions"][0] for t in answer["topics"]}

    named = offset_fetch(
        [
            {"topic_id": topic_id, "partition_indexes": [0]},
            {"topic_id": UNKNOWN_ID, "partition_indexes": [0]},
        ]
    )
    assert named[topic_id]["committed_offset"] == 7 and named[topic_id]["metadata"] == "m"
    assert named[UNKNOWN_ID]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID
    every = offset_fetch(None)
    assert every[topic_id]["committed_offset"] == 7


def test_txn_offset_commit_6_refuses_unknown_ids(client: RawClient) -> None:
    body = {
        "transactional_id": "txn-by-id",
        "group_id": "group-by-id",
        "producer_id": 1,
        "producer_epoch": 0,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "topic_id": UNKNOWN_ID,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": 1,
                        "committed_leader_epoch": -1,
                        "committed_metadata": None,
                    }
                ],
            }
        ],
    }
    (topic,) = client.call(28, 6, body)["topics"]
    assert topic["topic_id"] == UNKNOWN_ID
    assert topic["partitions"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID


def test_describe_topic_partitions_pages_with_a_cursor(client: RawClient, topic_name: str) -> None:
    first, second = f"{topic_name}-a", f"{topic_name}-b"
    ids = {first: create(client, first, partitions=5), second: create(client, second)}
    named = [{"name": first}, {"name": second}, {"name": f"{topic_name}-missing"}]
    seen: list[tuple[str, int]] = []
    cursor = None
    pages = 0
    while True:
        answer = client.call(
            75, 0, {"topics": named, "response_partition_limit": 2, "cursor": cursor}
        )
        pages += 1
        for topic in answer["topics"]:
            if topic["name"].endswith("-missing"):
                assert topic["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            assert topic["error_code"] == 0 and topic["topic_id"] == ids[topic["name"]]
            assert sum(1 for _ in topic["partitions"]) <= 2
            seen += [(topic["name"], p["partition_index"]) for p in topic["partitions"]]
        cursor = answer["next_cursor"]
        if cursor is None:
            break
        assert pages < 10
    assert seen == [(first, i) for i in range(5)] + [(second, 0)]
    # a 0-1; a 2-3; a 4 and b 0; then the missing topic, which sorts last
    # (Kafka's algorithm: a page stops once its limit is reached).
    assert pages == 4

    refused = client.call(
        75,
        0,
        {
            "topics": [{"name": second}],
            "response_partition_limit": 10,
            "cursor": {"topic_name": first, "partition_index": 0},
        },
    )
    assert [t["error_code"] for t in refused["topics"]] == [ErrorCode.INVALID_REQUEST]


def test_list_config_resources(client: RawClient, topic_name: str) -> None:
    create(client, topic_name)
    listed = client.call(74, 1, {"resource_types": []})
    assert listed["error_code"] == 0
    resources = {(r["resource_type"], r["resource_name"]) for r in listed["config_resources"]}
    assert (2, topic_name) in resources and (4, "1") in resources and (8, "1") in resources
    only_topics = client.call(74, 1, {"resource_types": [2]})["config_resources"]
    assert {r["resource_type"] for r in only_topics} == {2}
    assert client.call(74, 0, {})["config_resources"] == []  # client metrics: none kept
    assert client.call(74, 0, {"resource_types": [2]})["config_resources"] == []
    assert (
        client.call(74, 1, {"resource_types": [99]})["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    )


def test_api_versions_5_checks_the_cluster_and_node(
    client: RawClient, broker: BrokerProcess
) -> None:
    software = {"client_software_name": "samsa-test", "client_software_version": "1.0"}
    cluster_id = client.call(60, 2, {"include_cluster_authorized_operations": False})["cluster_id"]
    right = client.call(18, 5, {**software, "cluster_id": cluster_id, "node_id": 1})
    assert right["error_code"] == 0 and right["api_keys"]
    other_node = client.call(18, 5, {**software, "cluster_id": cluster_id, "node_id": 2})
    assert other_node["error_code"] == ErrorCode.REBOOTSTRAP_REQUIRED
    other_cluster = client.call(18, 5, {**software, "cluster_id": "elsewhere", "node_id": 1})
    assert other_cluster["error_code"] == ErrorCode.REBOOTSTRAP_REQUIRED
    unnamed = client.call(18, 5, {**software, "cluster_id": None, "node_id": 7})
    assert unnamed["error_code"] == 0
    bad_name = client.call(18, 3, {"client_software_name": "-x", "client_software_version": "1"})
    assert bad_name["error_code"] == ErrorCode.INVALID_REQUEST


def test_client_listener_advertises_no_controller_only_api(client: RawClient) -> None:
    """The default listener also serves the quorum, yet lists what Kafka's
    broker listeners list (and the SASL APIs, as Kafka's do)."""
    software = {"client_software_name": "samsa-test", "client_software_version": "1.0"}
    keys = {k["api_key"] for k in client.call(18, 4, software)["api_keys"]}
    assert not keys & {VOTE, BEGIN_QUORUM_EPOCH, ALTER_PARTITION, BROKER_HEARTBEAT}
    assert {17, 36, 75, 74, 57} <= keys
    refused = client.call(17, 1, {"mechanism": "PLAIN"})
    assert refused["error_code"] == ErrorCode.ILLEGAL_SASL_STATE


def test_describe_groups_6_and_list_transactions_2(client: RawClient) -> None:
    (old,) = client.call(15, 5, {"groups": ["no-such-group"]})["groups"]
    assert (old["error_code"], old["group_state"]) == (0, "Dead")
    (new,) = client.call(15, 6, {"groups": ["no-such-group"]})["groups"]
    assert new["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    assert new["error_message"] == "Group no-such-group not found."
    listed = client.call(
        66,
        2,
        {
            "state_filters": [],
            "producer_id_filters": [],
            "duration_filter": -1,
            "transactional_id_pattern": "(",
        },
    )
    assert listed["error_code"] == ErrorCode.INVALID_REGULAR_EXPRESSION


def test_list_offsets_11_earliest_pending_upload(client: RawClient, topic_name: str) -> None:
    create(client, topic_name)
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {
                "name": topic_name,
                "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -6}],
            }
        ],
        "timeout_ms": 5000,
    }
    (partition,) = client.call(2, 11, body)["topics"][0]["partitions"]
    # No tiered storage: nothing waits for upload, as Kafka answers then.
    assert (partition["error_code"], partition["offset"], partition["leader_epoch"]) == (0, -1, -1)


def test_a_session_partition_of_a_deleted_topic_is_unknown_by_its_old_id(
    client: RawClient, topic_name: str
) -> None:
    topic_id = create(client, topic_name)
    session = fetch_v18(client, [topic_id], session_epoch=0)["session_id"]
    deleted = client.call(20, 6, {"topics": [{"name": topic_name}], "timeout_ms": 30000})
    assert deleted["responses"][0]["error_code"] == 0
    deadline = time.monotonic() + 10
    epoch = 1
    while True:
        answer = fetch_v18(client, [], session_id=session, session_epoch=epoch, max_wait_ms=200)
        epoch += 1
        if answer["responses"]:
            (topic,) = answer["responses"]
            assert topic["topic_id"] == topic_id
            assert topic["partitions"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID
            return
        assert time.monotonic() < deadline, answer


def test_forgetting_a_deleted_topic_by_its_old_id_ends_its_errors(
    client: RawClient, topic_name: str
) -> None:
    topic_id = create(client, topic_name)
    session = fetch_v18(client, [topic_id], session_epoch=0)["session_id"]
    client.call(20, 6, {"topics": [{"name": topic_name}], "timeout_ms": 30000})
    deadline = time.monotonic() + 10
    epoch = 1
    while not fetch_v18(client, [], session_id=session, session_epoch=epoch)["responses"]:
        epoch += 1
        assert time.monotonic() < deadline
    epoch += 1
    forgotten = [{"topic_id": topic_id, "partitions": [0]}]
    answer = fetch_v18(
        client, [], session_id=session, session_epoch=epoch, forgotten_topics_data=forgotten
    )
    assert answer["error_code"] == 0 and answer["responses"] == []
    quiet = fetch_v18(client, [], session_id=session, session_epoch=epoch + 1)
    assert quiet["responses"] == []
