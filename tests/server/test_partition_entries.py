"""Metadata's partition entries are built once per state of their topic and never
outlive it."""

from __future__ import annotations

from tests.controller.helpers import change, partition, register_broker, topic, topic_id_of

from samsa.controller.image.metadata_image import MetadataImage
from samsa.protocol.metadata_records import make_record
from samsa.server.handlers.partition_entries import PartitionEntries

TOPIC_ID = topic_id_of("orders")


def _image(partitions: int, *, brokers: tuple[int, ...] = ()) -> MetadataImage:
    """A topic "orders" of ``partitions`` on replicas 1-3; ``brokers`` registered
    (and live) first."""
    image = MetadataImage()
    for offset, broker in enumerate(brokers):
        image.replay(register_broker(broker, epoch=10 + broker), offset=offset)
    first = len(brokers)
    image.replay(topic("orders"), offset=first)
    for p in range(partitions):
        image.replay(partition("orders", p, [1, 2, 3], leader=1 + p % 3), offset=first + 1 + p)
    return image


def test_entries_are_reused_while_the_image_stays_and_rebuilt_when_it_moves() -> None:
    image = _image(6)
    entries = PartitionEntries()
    first = entries.of(image, image.topics["orders"])
    assert [e["leader_id"] for e in first] == [1, 2, 3, 1, 2, 3]
    assert entries.of(image, image.topics["orders"]) is first

    image.replay(
        change("orders", 0, leader=2, isr=[2, 3]),
        offset=7,
    )
    after = entries.of(image, image.topics["orders"])
    assert after[0]["leader_id"] == 2
    assert after[0]["isr_nodes"] == [2, 3]
    assert after[0]["leader_epoch"] == 1
    assert [e["leader_id"] for e in after[1:]] == [2, 3, 1, 2, 3]


def test_a_snapshot_loaded_in_place_is_a_new_image() -> None:
    image = _image(2)
    entries = PartitionEntries()
    assert len(entries.of(image, image.topics["orders"])) == 2
    records = [
        topic("orders"),
        *(partition("orders", p, [1], leader=1) for p in range(4)),
    ]
    image.load_snapshot(records, end_offset=100, epoch=3)
    assert len(entries.of(image, image.topics["orders"])) == 4


def test_an_encoded_answer_is_kept_per_request_shape_until_the_image_moves() -> None:
    image = _image(2)
    entries = PartitionEntries()
    slot = entries.slot(image, (12, "PLAINTEXT", ("orders",)))
    assert entries.slot(image, (12, "PLAINTEXT", ("orders",))) is slot
    assert entries.slot(image, (11, "PLAINTEXT", ("orders",))) is not slot
    image.replay(
        change("orders", 0, leader=2),
        offset=9,
    )
    assert entries.slot(image, (12, "PLAINTEXT", ("orders",))) is not slot


def test_a_new_image_keeps_the_entries_of_partitions_it_did_not_change() -> None:
    image = _image(5, brokers=(1, 2, 3))
    entries = PartitionEntries()
    first = entries.of(image, image.topics["orders"])
    image.replay(
        change("orders", 2, leader=3),
        offset=20,
    )
    after = entries.of(image, image.topics["orders"])
    assert after is not first
    assert [a is f for a, f in zip(after, first, strict=True)] == [True, True, False, True, True]
    assert after[2]["leader_id"] == 3 and after[2]["leader_epoch"] == 1


def test_a_broker_fenced_rebuilds_every_entry_with_its_offline_replicas() -> None:
    image = _image(3, brokers=(1, 2, 3))
    entries = PartitionEntries()
    first = entries.of(image, image.topics["orders"])
    assert all(e["offline_replicas"] == [] for e in first)
    image.replay(make_record("FenceBrokerRecord", id=3, epoch=13), offset=20)
    after = entries.of(image, image.topics["orders"])
    assert [e["offline_replicas"] for e in after] == [[3], [3], [3]]
    assert not any(a is f for a, f in zip(after, first, strict=True))


def test_a_topic_deleted_leaves_nothing_kept_behind() -> None:
    image = _image(3, brokers=(1, 2, 3))
    entries = PartitionEntries()
    entries.of(image, image.topics["orders"])
    image.replay(make_record("RemoveTopicRecord", topic_id=TOPIC_ID), offset=20)
    entries.slot(image, (12,))  # any use of the new image
    assert entries.kept_topics() == 0


def test_another_topic_created_leaves_a_topics_entries_as_they_are() -> None:
    """1,000 partitions created beside a topic of 10,000 must not make the next
    Metadata request rebuild the big one's entries (~60 ms of the loop)."""
    image = _image(4)
    entries = PartitionEntries()
    first = entries.of(image, image.topics["orders"])
    image.replay(topic("more"), offset=10)
    again = entries.of(image, image.topics["orders"])
    assert all(a is f for a, f in zip(again, first, strict=True))
    image.replay(make_record("RemoveTopicRecord", topic_id=TOPIC_ID), offset=11)
    image.replay(topic("orders"), offset=12)
    image.replay(partition("orders", 0, [1], leader=1), offset=13)
    assert [e["replica_nodes"] for e in entries.of(image, image.topics["orders"])] == [[1]]
