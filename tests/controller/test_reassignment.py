from tests.controller.harness import Cluster

from samsa.controller.image.registrations import PartitionRegistration
from samsa.controller.partitions.reassignment import reassignment_targets, revert_targets
from samsa.errors import ErrorCode


def setup() -> Cluster:
    c = Cluster()
    c.start_brokers([1, 2, 3, 4, 5, 6])
    c.create_topic("t", assignments=[[1, 2, 3]])
    return c


def reassign(
    c: Cluster,
    replicas: list[int] | None,
    *,
    partition: int = 0,
    topic: str = "t",
    allow_rf_change: bool = True,
) -> dict:
    request = {
        "timeout_ms": 1,
        "allow_replication_factor_change": allow_rf_change,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "replicas": replicas}]}
        ],
    }
    response = c.run(c.controller.alter_partition_reassignments, request)
    assert response["error_code"] == 0
    return response["responses"][0]["partitions"][0]


def listing(c: Cluster, topics: list | None = None) -> list:
    response = c.run(c.controller.list_partition_reassignments, {"timeout_ms": 1, "topics": topics})
    return response["topics"]


def test_targets_as_kafka_computes_them() -> None:
    assert reassignment_targets((1, 2, 3), [3, 4, 5]) == ([3, 4, 5, 1, 2], [4, 5], [1, 2])
    moving = PartitionRegistration(
        (4, 1, 2), (1, 2), 1, adding_replicas=(4,), removing_replicas=(2,)
    )
    assert revert_targets(moving) == ([1, 2], [1, 2], False)


def test_full_move_adds_waits_for_isr_then_switches_leader_and_drops_old() -> None:
    c = setup()
    assert reassign(c, [4, 5, 6])["error_code"] == 0
    local = c.last_delta.local_changes(4)  # type: ignore[union-attr]
    assert ("t", 0) in local.followers  # the new replica starts fetching
    moving = c.partition("t")
    assert moving.replicas == (4, 5, 6, 1, 2, 3)
    assert moving.adding_replicas == (4, 5, 6) and moving.removing_replicas == (1, 2, 3)
    assert moving.leader == 1 and moving.isr == (1, 2, 3)
    assert listing(c) == [
        {
            "name": "t",
            "partitions": [
                {
                    "partition_index": 0,
                    "replicas": [4, 5, 6, 1, 2, 3],
                    "adding_replicas": [4, 5, 6],
                    "removing_replicas": [1, 2, 3],
                }
            ],
        }
    ]
    # The leader adds 4 and 5: not all targets in sync yet.
    c.alter_partition("t", 0, [1, 2, 3, 4, 5])
    assert c.partition("t").is_reassigning
    response = c.alter_partition("t", 0, [1, 2, 3, 4, 5, 6])
    assert response["topics"][0]["partitions"][0]["error_code"] == ErrorCode.NEW_LEADER_ELECTED
    done = c.partition("t")
    assert done.replicas == (4, 5, 6) and done.isr == (4, 5, 6) and done.leader == 4
    assert not done.is_reassigning and done.leader_epoch == 1
    assert c.last_delta.local_changes(1).deletes == {("t", 0)}  # type: ignore[union-attr]
    assert set(c.last_delta.local_changes(4).elected_leaders) == {("t", 0)}  # type: ignore[union-attr]
    assert listing(c) == []


def test_dropping_a_follower_keeps_the_leader_but_bumps_its_epoch() -> None:
    c = setup()
    reassign(c, [1, 2, 4])
    c.alter_partition("t", 0, [1, 2, 3, 4])
    done = c.partition("t")
    assert done.replicas == (1, 2, 4) and done.leader == 1 and done.leader_epoch == 1


def test_pure_shrink_completes_at_once() -> None:
    c = setup()
    reassign(c, [1, 2])
    done = c.partition("t")
    assert done.replicas == (1, 2) and done.isr == (1, 2) and not done.is_reassigning


def test_cancel_restores_the_original_assignment() -> None:
    c = setup()
    assert reassign(c, None)["error_code"] == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
    reassign(c, [4, 5, 6])
    c.alter_partition("t", 0, [1, 2, 3, 4])
    assert reassign(c, None)["error_code"] == 0
    back = c.partition("t")
    assert back.replicas == (1, 2, 3) and back.isr == (1, 2, 3) and not back.is_reassigning


def test_errors() -> None:
    c = setup()
    unknown_broker = reassign(c, [1, 2, 9])
    assert unknown_broker["error_code"] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert "broker 9" in unknown_broker["error_message"]
    assert reassign(c, [1, 1])["error_code"] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert reassign(c, [1], topic="nope")["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert reassign(c, [1], partition=3)["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    rf = reassign(c, [1, 2], allow_rf_change=False)
    assert rf["error_code"] == ErrorCode.INVALID_REPLICATION_FACTOR
    assert reassign(c, [4, 5, 6], allow_rf_change=False)["error_code"] == 0
    assert c.last_result.records  # type: ignore[union-attr]


def test_listing_by_topic_skips_unknown_and_idle_partitions() -> None:
    c = setup()
    c.create_topic("idle", assignments=[[1]])
    reassign(c, [2, 3, 4])
    topics = listing(
        c,
        [
            {"name": "t", "partition_indexes": [0, 7]},
            {"name": "idle", "partition_indexes": [0]},
            {"name": "nope", "partition_indexes": [0]},
        ],
    )
    assert [t["name"] for t in topics] == ["t"]


def test_poll_completes_a_reassignment_already_in_sync() -> None:
    c = setup()
    reassign(c, [2, 3, 4])
    c.alter_partition("t", 0, [1, 2, 3, 4])  # completes here already
    assert not c.partition("t").is_reassigning
    reassign(c, [2, 3, 5])
    # The new replica joins the ISR via a leader that does not know of the move.
    registration = c.partition("t")
    assert registration.is_reassigning
    c.alter_partition("t", 0, [*registration.isr, 5])
    assert not c.partition("t").is_reassigning
    assert c.poll().records == []
