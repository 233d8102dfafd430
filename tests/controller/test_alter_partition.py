from tests.controller.harness import Cluster

from samsa.controller.image.registrations import PartitionRegistration
from samsa.errors import ErrorCode


def setup() -> Cluster:
    c = Cluster()
    c.start_brokers([1, 2, 3, 4])
    c.create_topic("t", assignments=[[1, 2, 3]])
    return c


def only(response: dict) -> dict:
    assert response["error_code"] == 0
    [topic] = response["topics"]
    [partition] = topic["partitions"]
    return partition


def test_shrink_returns_the_new_registration_and_replays_to_it() -> None:
    c = setup()
    result = only(c.alter_partition("t", 0, [1, 2]))
    assert result == {
        "partition_index": 0,
        "error_code": 0,
        "leader_id": 1,
        "leader_epoch": 0,
        "isr": [1, 2],
        "leader_recovery_state": 0,
        "partition_epoch": 1,
    }
    assert c.partition("t") == PartitionRegistration((1, 2, 3), (1, 2), 1, 0, 1)
    grown = only(c.alter_partition("t", 0, [1, 2, 3]))
    assert grown["isr"] == [1, 2, 3] and grown["partition_epoch"] == 2


def test_same_isr_changes_nothing_but_answers() -> None:
    c = setup()
    result = only(c.alter_partition("t", 0, [1, 2, 3]))
    assert result["partition_epoch"] == 0 and c.last_result.records == []  # type: ignore[union-attr]


def test_stale_broker_epoch_fails_the_whole_request() -> None:
    c = setup()
    request = {
        "broker_id": 1,
        "broker_epoch": 999,
        "topics": [{"topic_id": c.topic_id("t"), "partitions": []}],
    }
    response = c.run(c.controller.alter_partition, request)
    assert response == {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.STALE_BROKER_EPOCH,
        "topics": [],
    }


def code(response: dict) -> int:
    return only_code(response)


def only_code(response: dict) -> int:
    [topic] = response["topics"]
    [partition] = topic["partitions"]
    return partition["error_code"]


def test_error_paths() -> None:
    c = setup()
    r = c.partition("t")
    assert code(c.alter_partition("t", 0, [1, 2], broker_id=2)) == ErrorCode.INVALID_REQUEST
    c.alter_partition("t", 0, [1, 2])
    c.alter_partition("t", 0, [1, 2, 3])
    assert code(c.alter_partition("t", 0, [1], leader_epoch=r.leader_epoch + 1)) == (
        ErrorCode.NOT_CONTROLLER
    )
    assert code(c.alter_partition("t", 0, [1], partition_epoch=0)) == (
        ErrorCode.INVALID_UPDATE_VERSION
    )
    assert code(c.alter_partition("t", 0, [1, 4])) == ErrorCode.INVALID_REQUEST  # not a replica
    assert code(c.alter_partition("t", 0, [1, 1])) == ErrorCode.INVALID_REQUEST
    assert code(c.alter_partition("t", 0, [2, 3])) == ErrorCode.INVALID_REQUEST  # drops leader
    c.heartbeat(3, want_fence=True)
    assert code(c.alter_partition("t", 0, [1, 2, 3])) == ErrorCode.INELIGIBLE_REPLICA
    assert code(c.alter_partition("t", 0, [1, 2], epochs={2: 12345})) == (
        ErrorCode.INELIGIBLE_REPLICA
    )
    assert code(c.alter_partition("t", 0, [1], recovery=1)) == ErrorCode.INVALID_REQUEST
    assert c.partition("t").isr == (1, 2)


def test_fenced_leader_epoch() -> None:
    c = setup()
    c.heartbeat(1, want_fence=True)  # leadership moves to 2 (epoch 1)
    c.heartbeat(1)
    c.alter_partition("t", 0, [2, 3, 1])
    c.run(
        c.controller.elect_leaders,
        {"election_type": 0, "topic_partitions": [{"topic": "t", "partitions": [0]}]},
    )
    registration = c.partition("t")
    assert registration.leader == 1 and registration.leader_epoch == 2
    assert code(c.alter_partition("t", 0, [1], leader_epoch=1)) == ErrorCode.FENCED_LEADER_EPOCH


def test_controlled_shutdown_replica_is_ineligible() -> None:
    c = setup()
    c.create_topic("other", assignments=[[3, 1]])
    c.heartbeat(3, want_shut_down=True)
    assert c.image.brokers[3].in_controlled_shutdown
    assert code(c.alter_partition("t", 0, [1, 2, 3])) == ErrorCode.INELIGIBLE_REPLICA


def test_unknown_topic_and_partition() -> None:
    c = setup()
    request = {
        "broker_id": 1,
        "broker_epoch": c.image.brokers[1].epoch,
        "topics": [
            {
                "topic_id": b"\x09" * 16,
                "partitions": [
                    {
                        "partition_index": 0,
                        "leader_epoch": 0,
                        "new_isr_with_epochs": [],
                        "partition_epoch": 0,
                    }
                ],
            },
            {
                "topic_id": c.topic_id("t"),
                "partitions": [
                    {
                        "partition_index": 5,
                        "leader_epoch": 0,
                        "new_isr_with_epochs": [],
                        "partition_epoch": 0,
                    }
                ],
            },
        ],
    }
    response = c.run(c.controller.alter_partition, request)
    codes = [t["partitions"][0]["error_code"] for t in response["topics"]]
    assert codes == [ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


def test_v2_new_isr_field_is_accepted() -> None:
    c = setup()
    request = {
        "broker_id": 1,
        "broker_epoch": c.image.brokers[1].epoch,
        "topics": [
            {
                "topic_id": c.topic_id("t"),
                "partitions": [
                    {
                        "partition_index": 0,
                        "leader_epoch": 0,
                        "new_isr": [1, 3],
                        "partition_epoch": 0,
                    }
                ],
            }
        ],
    }
    assert only(c.run(c.controller.alter_partition, request))["isr"] == [1, 3]


def test_recovering_leader_grows_its_isr_once_recovered() -> None:
    c = setup()
    c.alter_partition("t", 0, [1])
    c.run(
        c.controller.incremental_alter_configs,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": "t",
                    "configs": [
                        {
                            "name": "unclean.leader.election.enable",
                            "config_operation": 0,
                            "value": "true",
                        }
                    ],
                }
            ]
        },
    )
    c.heartbeat(1, want_fence=True)
    assert c.partition("t").leader == 2 and c.partition("t").leader_recovery_state == 1
    # Still recovering: only the leader may be in the ISR.
    assert code(c.alter_partition("t", 0, [2, 3], recovery=1)) == ErrorCode.INVALID_REQUEST
    ok = only(c.alter_partition("t", 0, [2], recovery=1))
    assert ok["leader_recovery_state"] == 1 and c.last_result.records == []  # type: ignore[union-attr]
    recovered = only(c.alter_partition("t", 0, [2, 3], recovery=0))
    assert recovered["leader_recovery_state"] == 0 and recovered["isr"] == [2, 3]
