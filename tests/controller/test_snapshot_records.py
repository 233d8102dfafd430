from tests.controller.helpers import (
    change,
    cluster,
    config,
    image_of,
    partition,
    register_broker,
    topic,
)

from samsa.controller.image.metadata_image import RESOURCE_BROKER, RESOURCE_TOPIC, images_equal
from samsa.controller.snapshot_records import image_from_records, snapshot_records
from samsa.protocol.metadata_records import make_record


def test_round_trip_of_a_busy_image() -> None:
    image = image_of(
        make_record("FeatureLevelRecord", name="kraft.version", feature_level=1),
        make_record("FeatureLevelRecord", name="metadata.version", feature_level=21),
        *cluster(4, racks=["x", "y"]),
        register_broker(9, 90, fenced=True, in_controlled_shutdown=True),
        topic("a"),
        partition("a", 0, [1, 2, 3]),
        partition("a", 1, [2, 3, 4], isr=[2], leader=2, leader_epoch=4, partition_epoch=9),
        topic("b"),
        partition("b", 0, [3, 4], adding=[4], removing=[]),
        change("a", 0, leader=-1, leader_recovery_state=1),
        config(RESOURCE_TOPIC, "a", "retention.ms", "100"),
        config(RESOURCE_BROKER, "", "log.retention.bytes", "7"),
        make_record("ProducerIdsRecord", broker_id=1, broker_epoch=10, next_producer_id=3000),
        make_record("FenceBrokerRecord", id=2, epoch=20),
    )
    records = snapshot_records(image)
    assert records[0].body["name"] == "metadata.version"
    rebuilt = image_from_records(records)
    assert images_equal(image, rebuilt)
    assert rebuilt.brokers[2].fenced and rebuilt.brokers[9].in_controlled_shutdown


def test_empty_image_has_no_records() -> None:
    assert snapshot_records(image_of()) == []


def test_load_snapshot_rebuilds_in_place_at_the_snapshot_offset() -> None:
    source = image_of(*cluster(2), topic("a"), partition("a", 0, [1, 2]))
    target = image_of(*cluster(3), topic("z"), partition("z", 0, [3]))
    holder = target
    target.load_snapshot(snapshot_records(source), end_offset=500, epoch=7)
    assert holder is target and images_equal(target, source)
    assert (target.last_offset, target.last_epoch) == (499, 7)
