from typing import Any

import pytest
from tests.controller.harness import Cluster

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.metadata_image import RESOURCE_BROKER, RESOURCE_TOPIC
from samsa.errors import ErrorCode
from samsa.storage.topic_config.log_config import LOG_CONFIG_KEYS


def cluster(n: int = 4, racks: list[str] | None = None, **config: Any) -> Cluster:
    c = Cluster(ControllerConfig(**config))
    c.start_brokers(list(range(1, n + 1)), racks)
    return c


def create(c: Cluster, *entries: dict[str, Any], validate_only: bool = False) -> list[dict]:
    request = {"topics": list(entries), "timeout_ms": 1000, "validate_only": validate_only}
    return c.run(c.controller.create_topics, request)["topics"]


def entry(name: str, partitions: int = 1, rf: int = 1, **kw: Any) -> dict[str, Any]:
    base = {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": rf,
        "assignments": [],
        "configs": [],
    }
    base.update(kw)
    return base


def test_create_topic_records_replay_into_the_expected_image() -> None:
    c = cluster(4)
    result = c.create_topic(
        "orders", partitions=6, replication_factor=3, configs={"retention.ms": "1000"}
    )
    assert result["error_code"] == 0
    assert result["num_partitions"] == 6 and result["replication_factor"] == 3
    topic = c.image.topics["orders"]
    assert result["topic_id"] == topic.topic_id
    assert c.image.topic_configs("orders") == {"retention.ms": "1000"}
    assert [r.name for r in c.last_result.records] == (  # type: ignore[union-attr]
        ["ConfigRecord", "TopicRecord"] + ["PartitionRecord"] * 6
    )
    for registration in topic.partitions.values():
        assert len(set(registration.replicas)) == 3
        assert registration.isr == registration.replicas
        assert registration.leader == registration.replicas[0]
        assert (registration.leader_epoch, registration.partition_epoch) == (0, 0)
    leaders = {r.leader for r in topic.partitions.values()}
    assert len(leaders) == 4  # spread over every broker
    delta = c.last_delta
    assert delta is not None and set(delta.created_topics) == {topic.topic_id}
    local = delta.local_changes(1)
    assert len(local.leaders) + len(local.followers) == sum(
        1 in r.replicas for r in topic.partitions.values()
    )


def test_response_lists_effective_configs_with_their_source() -> None:
    c = cluster(
        1,
        topic_defaults={"retention.ms": "5", "segment.bytes": "1048576"},
        static_broker_props={"log.segment.bytes": "1048576"},
    )
    c.run(
        c.controller.incremental_alter_configs,
        {
            "resources": [
                {
                    "resource_type": RESOURCE_BROKER,
                    "resource_name": "",
                    "configs": [{"name": "log.roll.ms", "config_operation": 0, "value": "777"}],
                }
            ]
        },
    )
    result = c.create_topic("t", replication_factor=1, configs={"retention.ms": "9"})
    rows = {row["name"]: (row["value"], row["config_source"]) for row in result["configs"]}
    assert set(rows) == {key.name for key in LOG_CONFIG_KEYS}  # every topic config, as Kafka
    assert rows["retention.ms"] == ("9", 1)  # the topic's own
    assert rows["segment.ms"] == ("777", 3)  # the cluster-wide dynamic default
    assert rows["segment.bytes"] == ("1048576", 4)  # given in server.properties
    assert rows["cleanup.policy"] == ("delete", 5)  # Kafka's default
    assert all(not row["read_only"] and not row["is_sensitive"] for row in result["configs"])


def test_defaults_for_partitions_and_replication_factor() -> None:
    c = cluster(3, default_num_partitions=5, default_replication_factor=2)
    result = c.create_topic("t", partitions=-1, replication_factor=-1)
    assert (result["num_partitions"], result["replication_factor"]) == (5, 2)


def test_only_unfenced_brokers_get_replicas() -> None:
    c = cluster(4)
    c.heartbeat(4, want_fence=True)
    result = c.create_topic("t", partitions=10, replication_factor=3)
    assert result["error_code"] == 0
    assert all(4 not in r.replicas for r in c.image.topics["t"].partitions.values())
    too_many = c.create_topic("u", replication_factor=4)
    assert too_many["error_code"] == ErrorCode.INVALID_REPLICATION_FACTOR
    assert (
        "replication factor 4 is larger than the 3 available brokers" in too_many["error_message"]
    )
    assert too_many["topic_id"] == b"\x00" * 16 and too_many["configs"] is None


def test_single_broker_message_is_preserved() -> None:
    c = cluster(1)
    result = c.create_topic("t", replication_factor=2)
    assert result["error_message"].endswith(
        "replication factor 2 is larger than the 1 available broker"
    )


def test_rack_aware_placement() -> None:
    c = cluster(6, racks=["a", "b", "c"])
    c.create_topic("t", partitions=12, replication_factor=3)
    rack = {b.id: b.rack for b in c.image.brokers.values()}
    for registration in c.image.topics["t"].partitions.values():
        assert {rack[r] for r in registration.replicas} == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("", ErrorCode.INVALID_TOPIC_EXCEPTION, "topic name is empty"),
        ("..", ErrorCode.INVALID_TOPIC_EXCEPTION, "topic name cannot be '..'"),
        ("a" * 250, ErrorCode.INVALID_TOPIC_EXCEPTION, "the limit is 249"),
        ("bad name", ErrorCode.INVALID_TOPIC_EXCEPTION, "has characters other than"),
    ],
)
def test_topic_name_rules(name: str, code: ErrorCode, message: str) -> None:
    [result] = create(cluster(1), entry(name))
    assert result["error_code"] == code and message in result["error_message"]


def test_already_exists_duplicate_and_bad_counts() -> None:
    c = cluster(2)
    c.create_topic("t", replication_factor=1)
    results = create(
        c,
        entry("t"),
        entry("n"),
        entry("n"),
        entry("zero", partitions=0),
        entry("neg", partitions=-2),
        entry("rf0", rf=0),
        entry("cfg", configs=[{"name": "retention.ms", "value": "soon"}]),
        entry("unknown", configs=[{"name": "no.such.key", "value": "1"}]),
    )
    codes = [r["error_code"] for r in results]
    assert codes == [
        ErrorCode.TOPIC_ALREADY_EXISTS,
        0,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_PARTITIONS,
        ErrorCode.INVALID_PARTITIONS,
        ErrorCode.INVALID_REPLICATION_FACTOR,
        ErrorCode.INVALID_CONFIG,
        ErrorCode.INVALID_CONFIG,
    ]
    assert "topic 't' already exists" in results[0]["error_message"]
    assert "appears more than once" in results[2]["error_message"]
    assert "number of partitions must be > 0, got 0" in results[3]["error_message"]
    assert "invalid value 'soon' for configuration retention.ms" in results[6]["error_message"]
    assert "unknown topic configuration no.such.key" in results[7]["error_message"]
    assert set(c.image.topics) == {"t", "n"}


def test_two_new_topics_in_one_request_get_distinct_ids() -> None:
    c = cluster(1)
    results = create(c, entry("a"), entry("b"))
    assert results[0]["topic_id"] != results[1]["topic_id"]
    assert set(c.image.topics) == {"a", "b"}


def test_validate_only_writes_nothing() -> None:
    c = cluster(1)
    [result] = create(c, entry("t"), validate_only=True)
    assert result["error_code"] == 0 and c.last_result.records == []  # type: ignore[union-attr]
    assert "t" not in c.image.topics


def test_manual_assignment_is_honoured() -> None:
    c = cluster(4)
    c.heartbeat(4, want_fence=True)
    result = c.create_topic("t", assignments=[[2, 1], [4, 3], [3, 4]])
    assert result["error_code"] == 0 and result["replication_factor"] == 2
    p = c.image.topics["t"].partitions
    assert p[0].replicas == (2, 1) and p[0].leader == 2
    assert p[1].replicas == (4, 3) and p[1].isr == (3,) and p[1].leader == 3


@pytest.mark.parametrize(
    ("assignments", "message"),
    [
        ([[1], [9]], "broker 9, but no such broker is registered"),
        ([[1, 1]], "broker 1 more than once"),
        ([[1, 2], [1]], "not consistent with previous partitions"),
        ([[]], "empty replica list"),
    ],
)
def test_bad_manual_assignments(assignments: list[list[int]], message: str) -> None:
    c = cluster(2)
    result = c.create_topic("t", assignments=assignments)
    assert result["error_code"] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert message in result["error_message"]


def test_manual_assignment_index_rules_and_fenced_replicas() -> None:
    c = cluster(3)
    gap = entry(
        "gap",
        partitions=-1,
        rf=-1,
        assignments=[
            {"partition_index": 0, "broker_ids": [1]},
            {"partition_index": 2, "broker_ids": [2]},
        ],
    )
    dup = entry(
        "dup",
        partitions=-1,
        rf=-1,
        assignments=[
            {"partition_index": 0, "broker_ids": [1]},
            {"partition_index": 0, "broker_ids": [2]},
        ],
    )
    both = entry(
        "both", partitions=2, rf=-1, assignments=[{"partition_index": 0, "broker_ids": [1]}]
    )
    rf = entry("rf", partitions=-1, rf=1, assignments=[{"partition_index": 0, "broker_ids": [1]}])
    results = create(c, gap, dup, both, rf)
    assert [r["error_code"] for r in results] == [
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_REQUEST,
    ]
    c.heartbeat(3, want_fence=True)
    fenced = c.create_topic("f", assignments=[[3]])
    assert fenced["error_code"] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert "fenced or in controlled shutdown" in fenced["error_message"]


def delete(c: Cluster, request: dict[str, Any]) -> list[dict[str, Any]]:
    return c.run(c.controller.delete_topics, request)["responses"]


def test_delete_topics_by_name_and_id() -> None:
    c = cluster(2)
    c.create_topic("a", replication_factor=2)
    c.create_topic("b", replication_factor=2)
    c.run(
        c.controller.incremental_alter_configs,
        {
            "resources": [
                {
                    "resource_type": RESOURCE_TOPIC,
                    "resource_name": "a",
                    "configs": [{"name": "retention.ms", "config_operation": 0, "value": "5"}],
                }
            ]
        },
    )
    b_id = c.topic_id("b")
    [ra] = delete(c, {"topic_names": ["a"], "timeout_ms": 1})
    assert ra["error_code"] == 0 and ra["name"] == "a"
    [rb] = delete(c, {"topics": [{"name": None, "topic_id": b_id}], "timeout_ms": 1})
    assert rb == {"name": "b", "topic_id": b_id, "error_code": 0, "error_message": None}
    assert c.image.topics == {} and c.image.configs == {}
    assert c.last_delta is not None and set(c.last_delta.deleted_topics) == {b_id}
    assert c.last_delta.local_changes(1).deletes == {("b", 0)}


def test_delete_topic_errors() -> None:
    c = cluster(1)
    c.create_topic("a", replication_factor=1)
    results = delete(
        c,
        {
            "topics": [
                {"name": "nope", "topic_id": b"\x00" * 16},
                {"name": None, "topic_id": b"\x07" * 16},
                {"name": "a", "topic_id": b"\x00" * 16},
                {"name": "a", "topic_id": b"\x00" * 16},
            ]
        },
    )
    assert [r["error_code"] for r in results] == [
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_TOPIC_ID,
        0,
        ErrorCode.INVALID_REQUEST,
    ]
    assert "topic 'nope' does not exist" in results[0]["error_message"]
    disabled = cluster(1, delete_topic_enable=False)
    disabled.create_topic("a", replication_factor=1)
    [r] = delete(disabled, {"topic_names": ["a"]})
    assert r["error_code"] == ErrorCode.TOPIC_DELETION_DISABLED and "a" in disabled.image.topics


def create_partitions(c: Cluster, *topics: dict[str, Any], validate_only: bool = False) -> list:
    request = {"topics": list(topics), "timeout_ms": 1, "validate_only": validate_only}
    return c.run(c.controller.create_partitions, request)["results"]


def test_create_partitions_places_with_the_topic_replication_factor() -> None:
    c = cluster(3)
    c.create_topic("t", partitions=2, replication_factor=2)
    [r] = create_partitions(c, {"name": "t", "count": 5, "assignments": None})
    assert r == {"name": "t", "error_code": 0, "error_message": None}
    parts = c.image.topics["t"].partitions
    assert sorted(parts) == [0, 1, 2, 3, 4] and all(len(p.replicas) == 2 for p in parts.values())


def test_create_partitions_errors_and_manual_assignments() -> None:
    c = cluster(3)
    c.create_topic("t", partitions=2, replication_factor=2)
    results = create_partitions(
        c,
        {"name": "nope", "count": 3, "assignments": None},
        {"name": "t", "count": 2, "assignments": None},
        {"name": "t", "count": 4, "assignments": [{"broker_ids": [1, 2]}]},
    )
    assert [r["error_code"] for r in results] == [
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.INVALID_PARTITIONS,
        ErrorCode.INVALID_REQUEST,
    ]
    assert (
        "topic 't' has 2 partitions; the new count 2 must be larger" in results[1]["error_message"]
    )
    [short] = create_partitions(
        c, {"name": "t", "count": 4, "assignments": [{"broker_ids": [1, 2]}]}
    )
    assert short["error_code"] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    [ok] = create_partitions(
        c,
        {"name": "t", "count": 4, "assignments": [{"broker_ids": [3, 1]}, {"broker_ids": [2, 3]}]},
    )
    assert ok["error_code"] == 0
    assert c.partition("t", 2).replicas == (3, 1) and c.partition("t", 3).leader == 2
    [only] = create_partitions(
        c, {"name": "t", "count": 9, "assignments": None}, validate_only=True
    )
    assert only["error_code"] == 0 and len(c.image.topics["t"].partitions) == 4


def test_names_colliding_on_dot_and_underscore_are_refused_until_the_other_is_deleted() -> None:
    c = cluster(1)
    c.create_topic("orders.eu", replication_factor=1)
    [collides] = create(c, entry("orders_eu"))
    assert collides["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert "Topic 'orders_eu' collides with existing topic: orders.eu" in collides["error_message"]
    # Within one request the second of two colliding names is refused too.
    first, second = create(c, entry("x_y"), entry("x.y"))
    assert first["error_code"] == 0
    assert second["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION
    delete(c, {"topic_names": ["orders.eu"], "timeout_ms": 1})
    assert c.image.topics_by_collision_key == {"x_y": {"x_y"}}
    [created] = create(c, entry("orders_eu"))
    assert created["error_code"] == 0


def test_create_refuses_null_config_values_and_counts_beside_an_assignment() -> None:
    c = cluster(2)
    nulls = [{"name": "segment.ms", "value": None}, {"name": "retention.ms", "value": None}]
    [null] = create(c, entry("n", configs=nulls))
    assert null["error_code"] == ErrorCode.INVALID_CONFIG
    assert (
        "Null value not supported for topic configs: segment.ms,retention.ms"
        in (null["error_message"])
    )
    manual = [{"partition_index": 0, "broker_ids": [1, 2]}]
    [both] = create(c, entry("b", partitions=1, rf=-1, assignments=manual))
    assert both["error_code"] == ErrorCode.INVALID_REQUEST
    [ok] = create(c, entry("b", partitions=-1, rf=-1, assignments=manual))
    assert ok["error_code"] == 0
    assert "n" not in c.image.topics
