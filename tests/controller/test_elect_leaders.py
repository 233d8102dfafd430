from tests.controller.harness import Cluster

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.registrations import NO_LEADER
from samsa.errors import ErrorCode


def elect(c: Cluster, election_type: int, partitions: dict[str, list[int]] | None) -> dict:
    request = {
        "election_type": election_type,
        "topic_partitions": None
        if partitions is None
        else [{"topic": t, "partitions": p} for t, p in partitions.items()],
        "timeout_ms": 1,
    }
    return c.run(c.controller.elect_leaders, request)


def codes(response: dict) -> dict[tuple[str, int], int]:
    return {
        (t["topic"], p["partition_id"]): p["error_code"]
        for t in response["replica_election_results"]
        for p in t["partition_result"]
    }


def setup() -> Cluster:
    c = Cluster()
    c.start_brokers([1, 2, 3])
    c.create_topic("t", assignments=[[1, 2, 3], [2, 3, 1]])
    return c


def test_preferred_election_moves_leadership_back() -> None:
    c = setup()
    c.heartbeat(1, want_fence=True)
    c.heartbeat(1)
    c.alter_partition("t", 0, [2, 3, 1])
    assert c.partition("t", 0).leader == 2
    response = elect(c, 0, {"t": [0, 1], "nope": [0]})
    assert codes(response) == {
        ("t", 0): 0,
        ("t", 1): ErrorCode.ELECTION_NOT_NEEDED,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert c.partition("t", 0).leader == 1


def test_preferred_not_available() -> None:
    c = setup()
    c.heartbeat(1, want_fence=True)
    response = elect(c, 0, {"t": [0]})
    assert codes(response) == {("t", 0): ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE}
    [topic] = response["replica_election_results"]
    assert "preferred replica 1" in topic["partition_result"][0]["error_message"]


def test_all_partitions_leaves_out_the_ones_not_needing_an_election() -> None:
    c = setup()
    c.heartbeat(1, want_fence=True)
    c.heartbeat(1)
    c.alter_partition("t", 0, [2, 3, 1])
    response = elect(c, 0, None)
    assert codes(response) == {("t", 0): 0}


def test_unclean_election_on_request() -> None:
    c = setup()
    c.create_topic("u", assignments=[[1, 2]])
    c.alter_partition("u", 0, [1])
    c.heartbeat(1, want_fence=True)
    assert c.partition("u").leader == NO_LEADER
    assert codes(elect(c, 1, {"t": [0]})) == {("t", 0): ErrorCode.ELECTION_NOT_NEEDED}
    assert codes(elect(c, 1, {"u": [0]})) == {("u", 0): 0}
    registration = c.partition("u")
    assert registration.leader == 2 and registration.isr == (2,)
    assert registration.leader_recovery_state == 1


def test_unclean_election_with_no_live_replica() -> None:
    c = setup()
    c.create_topic("u", assignments=[[1]])
    c.heartbeat(1, want_fence=True)
    assert codes(elect(c, 1, {"u": [0]})) == {("u", 0): ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE}


def test_unknown_election_type() -> None:
    c = setup()
    assert elect(c, 7, None)["error_code"] == ErrorCode.INVALID_REQUEST


def rebalancing_cluster(**config: object) -> Cluster:
    c = Cluster(ControllerConfig(leader_imbalance_check_interval_ms=300_000, **config))
    c.start_brokers([1, 2, 3])
    c.create_topic("t", assignments=[[1, 2], [1, 3], [2, 1], [3, 1]])
    c.heartbeat(1, want_fence=True)
    c.heartbeat(1)
    for p in (0, 1):
        registration = c.partition("t", p)
        c.alter_partition("t", p, [*registration.isr, 1])
    return c


def test_auto_rebalance_after_the_check_interval() -> None:
    c = rebalancing_cluster()
    assert [c.partition("t", p).leader for p in (0, 1)] == [2, 3]
    c.advance(1000)
    c.heartbeat_all()
    assert c.poll().records == []  # not yet time
    c.advance(300_000)
    c.heartbeat_all()
    result = c.poll()
    assert len(result.records) == 2
    assert [c.partition("t", p).leader for p in range(4)] == [1, 1, 2, 3]


def test_auto_rebalance_disabled() -> None:
    c = rebalancing_cluster(auto_leader_rebalance_enable=False)
    c.advance(400_000)
    c.heartbeat_all()
    assert c.poll().records == []


def test_imbalance_below_the_threshold_is_left_alone() -> None:
    c = rebalancing_cluster(leader_imbalance_per_broker_percentage=100)
    c.advance(400_000)
    c.heartbeat_all()
    assert c.poll().records == []
