from typing import Any

from tests.controller.harness import Cluster

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.metadata_image import RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC
from samsa.errors import ErrorCode

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def setup(**config: Any) -> Cluster:
    c = Cluster(ControllerConfig(**config))
    c.start_brokers([1])
    c.create_topic("t", replication_factor=1, configs={"retention.ms": "100"})
    return c


def incremental(
    c: Cluster,
    rtype: int,
    rname: str,
    *ops: tuple[str, int, str | None],
    validate_only: bool = False,
) -> dict[str, Any]:
    request = {
        "resources": [
            {
                "resource_type": rtype,
                "resource_name": rname,
                "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in ops],
            }
        ],
        "validate_only": validate_only,
    }
    return c.run(c.controller.incremental_alter_configs, request)["responses"][0]


def test_set_delete_append_subtract_on_a_topic() -> None:
    c = setup()
    r = incremental(
        c,
        RESOURCE_TOPIC,
        "t",
        ("segment.ms", SET, "1000"),
        ("retention.ms", DELETE, None),
        ("cleanup.policy", APPEND, "compact"),
    )
    assert r == {
        "error_code": 0,
        "error_message": None,
        "resource_type": RESOURCE_TOPIC,
        "resource_name": "t",
    }
    assert c.image.topic_configs("t") == {"segment.ms": "1000", "cleanup.policy": "delete,compact"}
    values = {rec.body["name"]: rec.body["value"] for rec in c.last_result.records}  # type: ignore[union-attr]
    assert values == {
        "segment.ms": "1000",
        "retention.ms": None,
        "cleanup.policy": "delete,compact",
    }
    incremental(c, RESOURCE_TOPIC, "t", ("cleanup.policy", SUBTRACT, "delete"))
    assert c.image.topic_configs("t")["cleanup.policy"] == "compact"
    assert c.last_delta is not None and c.last_delta.changed_configs == {(RESOURCE_TOPIC, "t")}


def test_topic_errors() -> None:
    c = setup()
    bad = incremental(c, RESOURCE_TOPIC, "t", ("retention.ms", SET, "x"))
    assert bad["error_code"] == ErrorCode.INVALID_CONFIG
    assert "invalid value 'x' for configuration retention.ms" in bad["error_message"]
    assert incremental(c, RESOURCE_TOPIC, "t", ("nope.key", SET, "1"))["error_code"] == (
        ErrorCode.INVALID_CONFIG
    )
    # Kafka's request checks: no null value but for DELETE, no key twice.
    null = incremental(c, RESOURCE_TOPIC, "t", ("retention.ms", SET, None))
    assert null["error_code"] == ErrorCode.INVALID_REQUEST
    assert "Null value not supported for : retention.ms" in null["error_message"]
    twice = incremental(
        c, RESOURCE_TOPIC, "t", ("retention.ms", SET, "1"), ("retention.ms", SET, "2")
    )
    assert twice["error_code"] == ErrorCode.INVALID_REQUEST
    assert incremental(c, RESOURCE_TOPIC, "t", ("retention.ms", APPEND, "1"))["error_code"] == (
        ErrorCode.INVALID_CONFIG
    )
    assert incremental(c, RESOURCE_TOPIC, "t", ("retention.ms", 9, "1"))["error_code"] == (
        ErrorCode.INVALID_REQUEST
    )
    missing = incremental(c, RESOURCE_TOPIC, "nope", ("retention.ms", SET, "1"))
    assert missing["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert "topic 'nope' does not exist" in missing["error_message"]
    assert incremental(c, 8, "x", ("a", SET, "1"))["error_code"] == ErrorCode.INVALID_REQUEST
    assert c.image.topic_configs("t") == {"retention.ms": "100"}


def test_validate_only_and_duplicate_resources() -> None:
    c = setup()
    r = incremental(c, RESOURCE_TOPIC, "t", ("retention.ms", SET, "5"), validate_only=True)
    assert r["error_code"] == 0 and c.last_result.records == []  # type: ignore[union-attr]
    request = {
        "resources": [
            {"resource_type": RESOURCE_TOPIC, "resource_name": "t", "configs": []},
            {"resource_type": RESOURCE_TOPIC, "resource_name": "t", "configs": []},
        ]
    }
    responses = c.run(c.controller.incremental_alter_configs, request)["responses"]
    # Both occurrences are refused, as Kafka does: neither is applied.
    assert [x["error_code"] for x in responses] == [ErrorCode.INVALID_REQUEST] * 2


def test_broker_resources() -> None:
    c = setup()
    ok = incremental(
        c,
        RESOURCE_BROKER,
        "",
        ("log.retention.ms", SET, "60000"),
        ("min.insync.replicas", SET, "2"),
    )
    assert ok["error_code"] == 0
    assert c.image.broker_configs("") == {"log.retention.ms": "60000", "min.insync.replicas": "2"}
    assert incremental(c, RESOURCE_BROKER, "1", ("log.retention.ms", SET, "2"))["error_code"] == 0
    assert c.image.broker_configs("1") == {"log.retention.ms": "2"}
    assert incremental(c, RESOURCE_BROKER, "7", ("log.retention.ms", SET, "1"))["error_code"] == (
        ErrorCode.BROKER_ID_NOT_REGISTERED
    )
    assert incremental(c, RESOURCE_BROKER, "x", ("log.retention.ms", SET, "1"))["error_code"] == (
        ErrorCode.INVALID_REQUEST
    )
    # Kafka answers INVALID_REQUEST for a bad broker value and for a setting
    # that only a restart changes (only the chain's first name is dynamic).
    for name, value in (
        ("log.retention.ms", "soon"),
        ("message.max.bytes", "-5"),
        ("log.retention.hours", "2"),
        ("listeners", "x"),
    ):
        refused = incremental(c, RESOURCE_BROKER, "", (name, SET, value))
        assert refused["error_code"] == ErrorCode.INVALID_REQUEST, name
    static_only = incremental(c, RESOURCE_BROKER, "1", ("log.dirs", SET, "/tmp/x"))
    assert "Cannot update these configs dynamically: Set(log.dirs)" in static_only["error_message"]
    unknown = incremental(c, RESOURCE_BROKER, "", ("log.retention.mss", SET, "1"))
    assert unknown["error_code"] == ErrorCode.INVALID_CONFIG
    assert c.image.broker_configs("") == {"log.retention.ms": "60000", "min.insync.replicas": "2"}


def test_group_resources_take_streams_group_configs_within_the_broker_bounds() -> None:
    c = setup(static_broker_props={"group.streams.max.standby.replicas": "3"})
    ok = incremental(
        c,
        RESOURCE_GROUP,
        "app",
        ("streams.session.timeout.ms", SET, "50000"),
        ("streams.num.standby.replicas", SET, "3"),
    )
    assert ok["error_code"] == 0
    assert c.image.group_configs("app") == {
        "streams.session.timeout.ms": "50000",
        "streams.num.standby.replicas": "3",
    }
    for name, value, message in (
        (
            "streams.session.timeout.ms",
            "5",
            "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            "streams.num.standby.replicas",
            "4",
            "streams.num.standby.replicas must be less than or equal to 3",
        ),
        ("streams.heartbeat.interval.ms", "x", "Not a number of type INT"),
        ("consumer.session.timeout.ms", "50000", "Unknown group config name"),
    ):
        refused = incremental(c, RESOURCE_GROUP, "app", (name, SET, value))
        assert refused["error_code"] == ErrorCode.INVALID_CONFIG, name
        assert message in refused["error_message"], refused
    assert (
        incremental(c, RESOURCE_GROUP, "app", ("streams.session.timeout.ms", DELETE, None))[
            "error_code"
        ]
        == 0
    )
    assert c.image.group_configs("app") == {"streams.num.standby.replicas": "3"}


def test_broker_list_settings_take_append_and_subtract() -> None:
    c = setup()
    appended = incremental(c, RESOURCE_BROKER, "", ("log.cleanup.policy", APPEND, "compact"))
    assert appended["error_code"] == 0
    assert c.image.broker_configs("") == {"log.cleanup.policy": "delete,compact"}
    incremental(c, RESOURCE_BROKER, "", ("log.cleanup.policy", SUBTRACT, "delete"))
    assert c.image.broker_configs("") == {"log.cleanup.policy": "compact"}


def test_alter_configs_replaces_all_overrides() -> None:
    c = setup()
    request = {
        "resources": [
            {
                "resource_type": RESOURCE_TOPIC,
                "resource_name": "t",
                "configs": [
                    {"name": "segment.ms", "value": "5000"},
                ],
            }
        ],
        "validate_only": False,
    }
    [r] = c.run(c.controller.alter_configs, request)["responses"]
    assert r["error_code"] == 0
    assert c.image.topic_configs("t") == {"segment.ms": "5000"}
    request["resources"][0]["configs"] = [{"name": "segment.ms", "value": "bad"}]  # type: ignore[index]
    [bad] = c.run(c.controller.alter_configs, request)["responses"]
    assert bad["error_code"] == ErrorCode.INVALID_CONFIG
    request["resources"][0]["configs"] = [{"name": "segment.ms", "value": None}]  # type: ignore[index]
    [null] = c.run(c.controller.alter_configs, request)["responses"]
    assert null["error_code"] == ErrorCode.INVALID_REQUEST
    assert c.image.topic_configs("t") == {"segment.ms": "5000"}


def test_effective_settings_resolve_topic_then_cluster_then_defaults() -> None:
    c = setup(topic_defaults={"min.insync.replicas": "2"})
    configs = c.controller.configs
    assert configs.min_insync_replicas("t") == 2
    incremental(c, RESOURCE_BROKER, "", ("min.insync.replicas", SET, "3"))
    assert configs.min_insync_replicas("t") == 3
    incremental(c, RESOURCE_TOPIC, "t", ("min.insync.replicas", SET, "1"))
    assert configs.min_insync_replicas("t") == 1
    assert not configs.unclean_leader_election_enabled("t")
