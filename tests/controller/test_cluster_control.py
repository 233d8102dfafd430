import pytest
from tests.controller.harness import Cluster
from tests.controller.helpers import incarnation

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.metadata_image import RESOURCE_TOPIC
from samsa.controller.image.registrations import NO_LEADER
from samsa.errors import ErrorCode


def started(n: int = 3, **config: object) -> Cluster:
    c = Cluster(ControllerConfig(**config))
    c.start_brokers(list(range(1, n + 1)))
    return c


def test_registration_is_a_fenced_record_whose_offset_is_the_epoch() -> None:
    c = Cluster()
    offset = c.next_offset
    response = c.register(1, rack="r1")
    assert response == {"throttle_time_ms": 0, "error_code": 0, "broker_epoch": offset}
    [record] = c.last_result.records  # type: ignore[union-attr]
    assert record.name == "RegisterBrokerRecord" and record.body["fenced"] is True
    broker = c.image.brokers[1]
    assert broker.epoch == offset and broker.fenced and broker.rack == "r1"
    assert broker.listener("PLAINTEXT") is not None
    assert c.controller.active_brokers() == []


def test_unfenced_only_once_caught_up_to_the_registration() -> None:
    c = Cluster()
    c.register(1)
    epoch = c.image.brokers[1].epoch
    behind = c.heartbeat(1, offset=epoch - 1)
    assert behind["is_fenced"] is True and behind["is_caught_up"] is False
    assert c.last_result.records == []  # type: ignore[union-attr]
    caught_up = c.heartbeat(1, offset=epoch)
    assert caught_up["is_fenced"] is False and caught_up["error_code"] == 0
    [record] = c.last_result.records  # type: ignore[union-attr]
    assert record.name == "BrokerRegistrationChangeRecord" and record.body["fenced"] == -1
    assert [b.id for b in c.controller.active_brokers()] == [1]
    assert c.heartbeat(1)["is_caught_up"] is True


def test_stale_or_unknown_broker_epoch() -> None:
    c = started(1)
    for response in (c.heartbeat(1, epoch=12345), c.heartbeat(9, epoch=1)):
        assert response["error_code"] == ErrorCode.STALE_BROKER_EPOCH
        assert response["is_fenced"] is True


def test_duplicate_live_id_then_takeover_after_session_expiry_then_stale_incarnation() -> None:
    c = started(1)
    duplicate = c.register(1, generation=1)
    assert duplicate["error_code"] == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    assert c.last_result.records == []  # type: ignore[union-attr]
    c.advance(10_000)  # the first incarnation's session expires
    taken = c.register(1, generation=1)
    assert taken["error_code"] == 0 and c.image.brokers[1].incarnation_id == incarnation(1, 1)
    c.advance(20_000)
    stale = c.register(1, generation=0)
    assert stale["error_code"] == ErrorCode.DUPLICATE_BROKER_REGISTRATION


def test_a_cleanly_shut_down_broker_may_register_again_at_once() -> None:
    """Its registration is fenced, so no live session stands in the way (Kafka's
    ``hasValidSession`` is false for a fenced broker): a restart after a
    controlled shutdown must not wait out broker.session.timeout.ms."""
    c = started(2)
    assert c.heartbeat(2, want_shut_down=True)["should_shut_down"] is True
    assert c.image.brokers[2].fenced
    again = c.register(2, generation=1)  # restarted at once, before any timeout
    assert again["error_code"] == 0
    assert c.image.brokers[2].incarnation_id == incarnation(2, 1)


def test_a_new_controller_accepts_a_fenced_broker_back_at_once() -> None:
    """After a full-cluster restart the new active controller finds the brokers
    that shut down cleanly fenced: their new incarnations register at once,
    while an unfenced one that heartbeats to it (it is still running) keeps its
    session."""
    c = started(3)
    assert c.heartbeat(1, want_shut_down=True)["should_shut_down"] is True
    c.controller.activate(c.now_ms)  # failover: every broker gets a fresh session
    assert c.register(1, generation=1)["error_code"] == 0
    c.heartbeat(2)
    duplicate = c.register(2, generation=1)
    assert duplicate["error_code"] == ErrorCode.DUPLICATE_BROKER_REGISTRATION


def test_a_retried_registration_gets_the_same_epoch_and_writes_nothing() -> None:
    """The broker's attempt timed out while the first one committed: at 10,000
    partitions each retry used to be a new registration taking the broker out
    of every ISR again, so the next attempt timed out too."""
    c = Cluster()
    first = c.register(1)
    assert c.image.brokers[1].fenced
    again = c.register(1)
    assert again == first
    assert c.last_result.records == []  # type: ignore[union-attr]


def test_the_same_incarnation_registering_again_keeps_its_epoch_and_isrs() -> None:
    c = started(3)
    c.create_topic("t", partitions=3, replication_factor=3)
    first = c.image.brokers[1].epoch
    again = c.register(1)  # not restarted: its logs are as they were
    assert again["error_code"] == 0 and again["broker_epoch"] == first
    assert not c.image.brokers[1].fenced
    assert all(1 in r.isr for r in c.image.topics["t"].partitions.values())


def test_wrong_cluster_id() -> None:
    c = Cluster(ControllerConfig(cluster_id="other"))
    assert c.register(1)["error_code"] == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert c.image.brokers == {}


def test_session_timeout_fences_and_moves_leaderships_in_one_batch() -> None:
    c = started(3, broker_session_timeout_ms=9000)
    c.create_topic("t", partitions=6, replication_factor=3)
    c.create_topic("solo", assignments=[[1]])
    led_by_1 = [p for p, r in c.image.topics["t"].partitions.items() if r.leader == 1]
    assert led_by_1
    c.advance(5000)
    c.heartbeat(2)
    c.heartbeat(3)
    c.advance(5000)  # broker 1 silent for 10 s
    result = c.poll()
    names = [r.name for r in result.records]
    assert (
        names[-1] == "BrokerRegistrationChangeRecord" and names.count("PartitionChangeRecord") == 7
    )
    assert c.image.brokers[1].fenced
    for p, registration in c.image.topics["t"].partitions.items():
        assert 1 not in registration.isr and registration.leader in (2, 3)
        if p in led_by_1:
            assert (
                registration.leader == registration.isr[0]
                or registration.leader in registration.isr
            )
    solo = c.partition("solo")
    assert solo.isr == (1,) and solo.leader == NO_LEADER  # the last ISR member stays
    assert c.poll().records == []  # nothing more to do


def test_fencing_moves_the_brokers_leaderships_before_its_isr_shrinks() -> None:
    c = started(3, broker_session_timeout_ms=9000)
    c.create_topic("t", partitions=30, replication_factor=3)
    led_by_1 = {p for p, r in c.image.topics["t"].partitions.items() if r.leader == 1}
    assert 0 < len(led_by_1) < 30
    topic_id = c.topic_id("t")
    c.advance(5000)
    c.heartbeat(2)
    c.heartbeat(3)
    c.advance(5000)
    changes = [r.body for r in c.poll().records if r.name == "PartitionChangeRecord"]
    assert all(body["topic_id"] == topic_id for body in changes)
    order = [body["partition_id"] for body in changes]
    assert len(order) == 30
    assert set(order[: len(led_by_1)]) == led_by_1


def test_unfencing_gives_leaderless_partitions_their_leader_back() -> None:
    c = started(2)
    c.create_topic("solo", assignments=[[1]])
    c.heartbeat(1, want_fence=True)
    assert c.partition("solo").leader == NO_LEADER
    response = c.heartbeat(1)
    assert response["is_fenced"] is False
    assert c.partition("solo").leader == 1 and c.partition("solo").leader_epoch == 2


def test_controlled_shutdown_moves_leaders_then_grants_shutdown() -> None:
    c = started(3)
    c.create_topic("t", partitions=6, replication_factor=3)
    c.create_topic("solo", assignments=[[2]])
    first = c.heartbeat(2, want_shut_down=True)
    assert first["should_shut_down"] is False and first["is_fenced"] is False
    names = [r.name for r in c.last_result.records]  # type: ignore[union-attr]
    assert names[0] == "BrokerRegistrationChangeRecord"
    assert c.image.brokers[2].in_controlled_shutdown
    assert not c.image.brokers_to_isrs.has_leaderships(2)
    for registration in c.image.topics["t"].partitions.values():
        assert 2 not in registration.isr and registration.leader in (1, 3)
    assert c.partition("solo").leader == NO_LEADER
    # Others have not replayed the shutdown records yet: wait.
    c.heartbeat(1, offset=0)
    c.heartbeat(3, offset=0)
    assert c.heartbeat(2, want_shut_down=True)["should_shut_down"] is False
    c.heartbeat_all()
    granted = c.heartbeat(2, want_shut_down=True)
    assert granted["should_shut_down"] is True and granted["is_fenced"] is True
    assert c.image.brokers[2].fenced


def test_broker_leading_nothing_shuts_down_at_once() -> None:
    c = started(2)
    response = c.heartbeat(2, want_shut_down=True)
    assert response["should_shut_down"] is True and c.image.brokers[2].fenced


def test_want_fence() -> None:
    c = started(2)
    c.create_topic("t", replication_factor=2)
    response = c.heartbeat(1, want_fence=True)
    assert response["is_fenced"] is True and c.image.brokers[1].fenced
    assert 1 not in c.partition("t").isr


def test_unregister() -> None:
    c = started(2)
    c.create_topic("t", replication_factor=2)
    missing = c.run(c.controller.unregister_broker, {"broker_id": 7})
    assert missing["error_code"] == ErrorCode.BROKER_ID_NOT_REGISTERED
    ok = c.run(c.controller.unregister_broker, {"broker_id": 1})
    assert ok["error_code"] == 0 and 1 not in c.image.brokers
    assert c.partition("t").isr == (2,) and c.partition("t").leader == 2
    assert c.last_result.records[-1].name == "UnregisterBrokerRecord"  # type: ignore[union-attr]


def test_reregistration_after_a_crash_leaves_the_isrs() -> None:
    c = started(3)
    c.create_topic("t", partitions=3, replication_factor=3)
    c.advance(20_000)
    c.heartbeat(2)
    c.heartbeat(3)
    response = c.register(1, generation=1)  # restarted before its session was noticed
    assert response["error_code"] == 0
    assert all(1 not in r.isr for r in c.image.topics["t"].partitions.values())
    assert all(r.leader in (2, 3) for r in c.image.topics["t"].partitions.values())


def test_unclean_election_on_fencing_when_the_topic_allows_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c = started(3)
    c.create_topic("t", assignments=[[1, 2]], configs={"unclean.leader.election.enable": "true"})
    c.alter_partition("t", 0, [1])  # 2 falls out of sync
    c.heartbeat(1, want_fence=True)
    registration = c.partition("t")
    assert registration.leader == 2 and registration.isr == (2,)
    assert registration.leader_recovery_state == 1
    assert "unclean leader election" in caplog.text
    clean = started(3)
    clean.create_topic("t", assignments=[[1, 2]])
    clean.alter_partition("t", 0, [1])
    clean.heartbeat(1, want_fence=True)
    assert clean.partition("t").leader == NO_LEADER


def test_cluster_level_unclean_default_applies() -> None:
    c = started(3)
    c.run(
        c.controller.incremental_alter_configs,
        {
            "resources": [
                {
                    "resource_type": 4,
                    "resource_name": "",
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
    c.create_topic("t", assignments=[[1, 2]])
    c.alter_partition("t", 0, [1])
    c.heartbeat(1, want_fence=True)
    assert c.partition("t").leader == 2
    assert c.controller.configs.unclean_leader_election_enabled("t")
    c.run(
        c.controller.incremental_alter_configs,
        {
            "resources": [
                {
                    "resource_type": RESOURCE_TOPIC,
                    "resource_name": "t",
                    "configs": [
                        {
                            "name": "unclean.leader.election.enable",
                            "config_operation": 0,
                            "value": "false",
                        }
                    ],
                }
            ]
        },
    )
    assert not c.controller.configs.unclean_leader_election_enabled("t")


def test_new_controller_gives_every_broker_a_fresh_session() -> None:
    c = started(2)
    c.advance(60_000)
    c.controller.activate(c.now_ms)
    assert c.poll().records == []
    c.advance(10_000)
    assert [b.name for b in c.poll().records].count("BrokerRegistrationChangeRecord") == 2


def test_a_new_controller_lets_a_restarted_incarnation_register_at_once() -> None:
    """A broker that crashed together with the controller (one process, or a
    whole-cluster restart) re-registers without waiting out a session the new
    controller merely gave it; once the old incarnation heartbeats to this
    controller, a second incarnation is refused again."""
    c = started(1)
    c.controller.activate(c.now_ms)  # a new active controller: sessions given, not heard
    restarted = c.register(1, generation=1)
    assert restarted["error_code"] == 0
    assert c.image.brokers[1].incarnation_id == incarnation(1, 1)
    c.heartbeat(1)  # the new incarnation now heartbeats to this controller
    duplicate = c.register(1, generation=2)
    assert duplicate["error_code"] == ErrorCode.DUPLICATE_BROKER_REGISTRATION


def test_a_heartbeat_renews_its_session_on_arrival_but_only_for_its_own_epoch() -> None:
    c = started(2, broker_session_timeout_ms=2000)
    cluster = c.controller.cluster
    epoch = c.image.brokers[1].epoch
    c.advance(1500)
    # Arrived while another write held the controller: the contact counts now.
    cluster.note_contact(1, epoch, c.now_ms)
    cluster.note_contact(2, epoch + 1000, c.now_ms)  # an older incarnation's epoch
    c.advance(1000)
    c.poll()
    assert not c.image.brokers[1].fenced
    assert c.image.brokers[2].fenced
