from tests.controller.helpers import register_broker

from samsa.controller.image.registrations import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    BrokerRegistration,
    Endpoint,
    LeaderRecoveryState,
    PartitionRegistration,
)


def reg(**kw: object) -> PartitionRegistration:
    base: dict = dict(
        replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=5, partition_epoch=7
    )
    base.update(kw)
    return PartitionRegistration(**base)


def test_merge_of_isr_only_bumps_partition_epoch_not_leader_epoch() -> None:
    new = reg().merge({"isr": [1, 2], "leader": NO_LEADER_CHANGE})
    assert new.isr == (1, 2)
    assert (new.leader, new.leader_epoch, new.partition_epoch) == (1, 5, 8)


def test_merge_with_new_leader_bumps_both_epochs() -> None:
    new = reg().merge({"leader": 2})
    assert (new.leader, new.leader_epoch, new.partition_epoch) == (2, 6, 8)


def test_merge_naming_the_same_leader_still_bumps_the_leader_epoch() -> None:
    new = reg().merge({"leader": 1})
    assert (new.leader, new.leader_epoch) == (1, 6)


def test_merge_to_no_leader_is_a_leader_change() -> None:
    new = reg().merge({"leader": NO_LEADER, "isr": None})
    assert (new.leader, new.leader_epoch, new.isr) == (NO_LEADER, 6, (1, 2, 3))


def test_absent_and_null_fields_are_unchanged() -> None:
    old = reg(adding_replicas=(4,), removing_replicas=(3,))
    new = old.merge(
        {
            "replicas": None,
            "isr": None,
            "adding_replicas": None,
            "removing_replicas": None,
            "leader_recovery_state": -1,
        }
    )
    assert new.replicas == old.replicas and new.adding_replicas == (4,)
    assert new.removing_replicas == (3,) and new.leader_recovery_state == 0


def test_merge_sets_replicas_reassignment_lists_and_recovery_state() -> None:
    new = reg().merge(
        {
            "replicas": [1, 2, 3, 4],
            "adding_replicas": [4],
            "removing_replicas": [],
            "leader_recovery_state": 1,
        }
    )
    assert new.replicas == (1, 2, 3, 4) and new.adding_replicas == (4,)
    assert new.leader_recovery_state == LeaderRecoveryState.RECOVERING
    assert new.is_reassigning


def test_equal_isr_shares_the_replicas_tuple() -> None:
    r = PartitionRegistration((1, 2), (1, 2), 1)
    assert r.isr is r.replicas


def test_record_round_trip() -> None:
    old = reg(adding_replicas=(4,), leader_recovery_state=1)
    body = {"topic_id": b"x" * 16, "partition_id": 0, **old.record_fields()}
    assert PartitionRegistration.from_record(body) == old


def test_preferred_leader_properties() -> None:
    r = reg(leader=2)
    assert r.preferred_replica == 1 and not r.has_preferred_leader and r.has_leader
    assert not reg(leader=NO_LEADER).has_leader


def test_diff_names_what_changed() -> None:
    assert reg().merge({"isr": [1]}).diff(reg()) == "isr: [1, 2, 3] -> [1], partition_epoch: 7 -> 8"


def test_broker_registration_from_record_and_back() -> None:
    record = register_broker(4, 17, fenced=True, rack="r1")
    broker = BrokerRegistration.from_record(record.body)
    assert broker.id == 4 and broker.epoch == 17 and broker.rack == "r1" and broker.fenced
    assert broker.listener("PLAINTEXT") == Endpoint("PLAINTEXT", "b4", 9092, 0)
    assert broker.listener("SSL") is None
    assert not broker.is_active
    assert BrokerRegistration.from_record(broker.record_fields()) == broker
