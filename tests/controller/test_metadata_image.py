import pytest
from tests.controller.helpers import (
    change,
    cluster,
    config,
    image_of,
    partition,
    register_broker,
    topic,
    topic_id_of,
)

from samsa.controller.image.metadata_image import (
    RESOURCE_BROKER,
    RESOURCE_TOPIC,
    MetadataImage,
    MetadataReplayError,
    images_equal,
)
from samsa.controller.image.registrations import NO_LEADER, PartitionRegistration
from samsa.protocol.metadata_records import MetadataRecord, make_record

TID = topic_id_of("orders")


def orders_image() -> MetadataImage:
    return image_of(
        *cluster(3),
        topic("orders"),
        partition("orders", 0, [1, 2, 3]),
        partition("orders", 1, [2, 3, 1]),
        partition("orders", 2, [3, 1, 2], isr=[3], leader=3),
    )


def test_topics_and_partitions_by_name_and_id() -> None:
    image = orders_image()
    assert image.topics["orders"] is image.topics_by_id[TID]
    assert image.partition(TID, 2) == PartitionRegistration((3, 1, 2), (3,), 3)
    assert image.partition_count() == 3
    assert image.last_offset == 6


def test_brokers_to_isrs_index_follows_changes() -> None:
    image = orders_image()
    index = image.brokers_to_isrs
    assert sorted(index.partitions_with_broker_in_isr(1)) == [(TID, 0), (TID, 1)]
    assert sorted(index.partitions_led_by(3)) == [(TID, 2)]
    image.replay(change("orders", 2, leader=NO_LEADER))
    assert not index.has_leaderships(3)
    assert sorted(index.partitions_without_leader()) == [(TID, 2)]
    image.replay(change("orders", 0, isr=[2, 3], leader=2))
    assert sorted(index.partitions_with_broker_in_isr(1)) == [(TID, 1)]
    assert index.leader_count(2) == 2 and index.isr_count(2) == 2


def test_imbalanced_and_reassigning_sets() -> None:
    image = orders_image()
    assert image.imbalanced == set()
    image.replay(change("orders", 1, leader=3))
    assert image.imbalanced == {(TID, 1)}
    image.replay(change("orders", 1, leader=2))
    assert image.imbalanced == set()
    image.replay(change("orders", 0, replicas=[1, 2, 3, 4], adding_replicas=[4]))
    assert image.reassigning == {(TID, 0)}
    image.replay(change("orders", 0, replicas=[1, 2, 4], adding_replicas=[], removing_replicas=[]))
    assert image.reassigning == set()


def test_remove_topic_drops_partitions_index_and_configs() -> None:
    image = orders_image()
    image.replay(config(RESOURCE_TOPIC, "orders", "retention.ms", "1000"))
    image.replay(make_record("RemoveTopicRecord", topic_id=TID))
    assert image.topics == {} and image.topics_by_id == {}
    assert image.topic_configs("orders") == {}
    assert list(image.brokers_to_isrs.partitions_with_broker_in_isr(1)) == []
    assert images_equal(image, image_of(*cluster(3)))


def test_configs_set_and_delete() -> None:
    image = MetadataImage()
    image.replay(config(RESOURCE_BROKER, "", "log.retention.ms", "5"))
    image.replay(config(RESOURCE_BROKER, "", "log.retention.bytes", "6"))
    image.replay(config(RESOURCE_BROKER, "", "log.retention.ms", None))
    assert image.broker_configs("") == {"log.retention.bytes": "6"}
    image.replay(config(RESOURCE_BROKER, "", "log.retention.bytes", None))
    assert image.configs == {}


def test_fence_unfence_and_controlled_shutdown_check_the_epoch() -> None:
    image = image_of(*cluster(2))
    image.replay(make_record("FenceBrokerRecord", id=1, epoch=10))
    assert image.brokers[1].fenced and not image.is_active(1)
    image.replay(make_record("UnfenceBrokerRecord", id=1, epoch=10))
    assert image.is_active(1)
    image.replay(
        make_record(
            "BrokerRegistrationChangeRecord", broker_id=2, broker_epoch=20, in_controlled_shutdown=1
        )
    )
    assert image.brokers[2].in_controlled_shutdown and not image.is_active(2)
    image.replay(
        make_record("BrokerRegistrationChangeRecord", broker_id=2, broker_epoch=20, fenced=1)
    )
    assert image.brokers[2].fenced and image.brokers[2].in_controlled_shutdown
    with pytest.raises(MetadataReplayError, match="epoch 11"):
        image.replay(make_record("FenceBrokerRecord", id=1, epoch=11))
    with pytest.raises(MetadataReplayError, match="unregistered broker 9"):
        image.replay(make_record("UnfenceBrokerRecord", id=9, epoch=1))
    assert [b.id for b in image.active_brokers()] == [1]


def test_reregistration_replaces_and_unregistration_removes() -> None:
    image = image_of(*cluster(1))
    image.replay(register_broker(1, 55, fenced=True, generation=1))
    assert image.brokers[1].epoch == 55 and image.brokers[1].fenced
    with pytest.raises(MetadataReplayError):
        image.replay(make_record("UnregisterBrokerRecord", broker_id=1, broker_epoch=10))
    image.replay(make_record("UnregisterBrokerRecord", broker_id=1, broker_epoch=55))
    assert image.brokers == {}


def test_producer_ids_only_move_forward() -> None:
    image = MetadataImage()
    image.replay(
        make_record("ProducerIdsRecord", broker_id=1, broker_epoch=1, next_producer_id=1000)
    )
    assert image.next_producer_id == 1000
    with pytest.raises(MetadataReplayError, match="back"):
        image.replay(
            make_record("ProducerIdsRecord", broker_id=1, broker_epoch=1, next_producer_id=1000)
        )


def test_feature_levels_and_noop() -> None:
    image = MetadataImage()
    image.replay(make_record("FeatureLevelRecord", name="metadata.version", feature_level=21))
    image.replay(make_record("NoOpRecord"))
    assert image.features == {"metadata.version": 21}
    image.replay(make_record("FeatureLevelRecord", name="group.version", feature_level=0))
    # A 0 turns the feature off and is kept: Samsa writes no bootstrap records,
    # so "off" must differ from "never set" (feature_control.BOOTSTRAP_LEVELS).
    assert image.features == {"metadata.version": 21, "group.version": 0}
    assert image.last_offset == 2


def test_offsets_and_epochs_of_the_last_record() -> None:
    image = MetadataImage()
    image.replay(make_record("NoOpRecord"), offset=41, epoch=3)
    image.replay(make_record("NoOpRecord"), offset=42, epoch=2)
    assert (image.last_offset, image.last_epoch) == (42, 3)


@pytest.mark.parametrize(
    "record",
    [
        MetadataRecord("RegisterControllerRecord", 0, {}),
        MetadataRecord("MysteryRecord", 0, {}),
    ],
)
def test_unknown_records_raise_and_change_nothing(record: MetadataRecord) -> None:
    image = orders_image()
    with pytest.raises(MetadataReplayError, match="unknown metadata record"):
        image.replay(record)
    assert image.last_offset == 6


def test_bad_partition_records_raise() -> None:
    image = orders_image()
    with pytest.raises(MetadataReplayError, match="unknown topic"):
        image.replay(partition("nope", 0, [1]))
    with pytest.raises(MetadataReplayError, match="unknown partition orders-7"):
        image.replay(change("orders", 7, leader=1))
    with pytest.raises(MetadataReplayError, match="already exists"):
        image.replay(topic("orders"))
    with pytest.raises(MetadataReplayError, match="unknown topic id"):
        image.replay(make_record("RemoveTopicRecord", topic_id=b"\x01" * 16))
    assert images_equal(image, orders_image())


def test_unclean_change_is_logged_as_possible_data_loss(caplog: pytest.LogCaptureFixture) -> None:
    image = orders_image()
    image.replay(change("orders", 2, leader=1, isr=[1]))
    assert "UNCLEAN leader election for orders-2" in caplog.text


def test_equality_ignores_history_but_images_equal_checks_indexes() -> None:
    a = orders_image()
    b = orders_image()
    b.replay(make_record("NoOpRecord"))
    assert a == b and images_equal(a, b)
    b.replay(change("orders", 0, isr=[1, 2]))
    assert a != b
