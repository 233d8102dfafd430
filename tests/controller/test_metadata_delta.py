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

from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import RESOURCE_TOPIC, MetadataImage
from samsa.protocol.metadata_records import MetadataRecord, make_record


def base() -> MetadataImage:
    return image_of(
        *cluster(4),
        topic("a"),
        partition("a", 0, [1, 2, 3]),
        partition("a", 1, [2, 3, 4]),
        topic("b"),
        partition("b", 0, [3, 4, 1]),
    )


def apply(image: MetadataImage, *records: MetadataRecord) -> MetadataDelta:
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta


def test_created_and_deleted_topics() -> None:
    image = base()
    delta = apply(
        image,
        topic("c"),
        partition("c", 0, [1, 2]),
        make_record("RemoveTopicRecord", topic_id=topic_id_of("b")),
    )
    assert set(delta.created_topics) == {topic_id_of("c")}
    deleted = delta.deleted_topics[topic_id_of("b")]
    assert deleted.name == "b" and list(deleted.partitions) == [0]
    changes = delta.partition_changes()
    assert [(c.topic_name, c.partition_id, c.old) for c in changes] == [("c", 0, None)]


def test_topic_created_and_deleted_in_one_batch_is_neither() -> None:
    delta = apply(
        base(),
        topic("c"),
        partition("c", 0, [1]),
        make_record("RemoveTopicRecord", topic_id=topic_id_of("c")),
    )
    assert delta.created_topics == {} and delta.deleted_topics == {}
    assert delta.partition_changes() == []
    assert delta.local_changes(1).is_empty()


def test_partition_changed_twice_reports_first_old_and_last_new() -> None:
    image = base()
    old = image.partition(topic_id_of("a"), 0)
    delta = apply(image, change("a", 0, isr=[1, 2]), change("a", 0, leader=2))
    [c] = delta.partition_changes()
    assert c.old is old and c.new.leader == 2 and c.new.partition_epoch == 2


def test_change_and_revert_in_one_batch_still_reports_the_epoch_move() -> None:
    delta = apply(base(), change("a", 0, isr=[1, 2]), change("a", 0, isr=[1, 2, 3]))
    [c] = delta.partition_changes()
    assert c.new.isr == c.old.isr and c.new.partition_epoch == 2


def test_broker_changes() -> None:
    image = base()
    delta = apply(
        image,
        make_record("FenceBrokerRecord", id=1, epoch=10),
        register_broker(5, 50, fenced=True),
        make_record("UnregisterBrokerRecord", broker_id=4, broker_epoch=40),
        make_record(
            "BrokerRegistrationChangeRecord", broker_id=3, broker_epoch=30, in_controlled_shutdown=1
        ),
    )
    assert [b.id for b in delta.registered_brokers] == [5]
    assert sorted(b.id for b in delta.fenced_brokers) == [1, 5]
    assert [b.id for b in delta.unregistered_brokers] == [4]
    assert [b.id for b in delta.controlled_shutdown_brokers] == [3]
    assert delta.unfenced_brokers == []
    assert set(delta.changed_brokers) == {1, 3, 4, 5} and delta.changed_brokers[4] is None
    unfence = apply(image, make_record("UnfenceBrokerRecord", id=1, epoch=10))
    assert [b.id for b in unfence.unfenced_brokers] == [1]


def test_configs_producer_ids_features() -> None:
    delta = apply(
        base(),
        config(RESOURCE_TOPIC, "a", "retention.ms", "1"),
        make_record("ProducerIdsRecord", broker_id=1, broker_epoch=10, next_producer_id=1000),
        make_record("FeatureLevelRecord", name="metadata.version", feature_level=20),
    )
    assert delta.changed_configs == {(RESOURCE_TOPIC, "a")}
    assert delta.producer_ids_changed and delta.features_changed
    assert not delta.is_empty()
    assert apply(base(), make_record("NoOpRecord")).is_empty()


def test_local_changes_leaders_followers_and_deletes() -> None:
    image = base()
    delta = apply(
        image,
        change("a", 0, leader=2, isr=[2, 3]),  # 1 no longer leads; 2 elected
        change("a", 1, isr=[2, 3]),  # 2 still leads, epoch unchanged
        change("b", 0, replicas=[3, 4, 2], isr=[3, 4, 2]),  # 1 removed, 2 added
        topic("c"),
        partition("c", 0, [2, 1]),
    )
    two = delta.local_changes(2)
    assert set(two.elected_leaders) == {("a", 0), ("c", 0)}
    assert set(two.leaders) == {("a", 0), ("a", 1), ("c", 0)}
    assert set(two.followers) == {("b", 0)}
    assert two.deletes == set()
    assert two.topic_ids["c"] == topic_id_of("c")
    one = delta.local_changes(1)
    assert one.deletes == {("b", 0)}
    assert set(one.followers) == {("a", 0), ("c", 0)}
    assert one.leaders == {}


def test_local_changes_of_a_deleted_topic() -> None:
    delta = apply(base(), make_record("RemoveTopicRecord", topic_id=topic_id_of("a")))
    assert delta.local_changes(1).deletes == {("a", 0)}
    assert delta.local_changes(4).deletes == {("a", 1)}


def test_unchanged_partition_epoch_is_not_reported_locally() -> None:
    # A PartitionRecord replayed again with the same content (snapshot load) is no change.
    image = base()
    delta = apply(image, partition("a", 0, [1, 2, 3]))
    assert delta.partition_changes() == [] and delta.local_changes(1).is_empty()


def test_local_changes_in_slices_keep_deletes_then_leaders_then_followers() -> None:
    """A huge batch is applied a slice at a time (ReplicaManager.apply_delta_in_steps):
    every change lands in exactly one slice, in Kafka's order, none bigger than asked."""
    records = [topic("c")]
    records += [partition("c", i, [1, 2] if i % 3 else [2, 1]) for i in range(10)]
    records += [make_record("RemoveTopicRecord", topic_id=topic_id_of("b"))]
    changes = apply(base(), *records).local_changes(1)
    assert len(changes.leaders) == 6 and len(changes.followers) == 4 and changes.deletes
    pieces = list(changes.slices(3))
    assert all(len(p.deletes) + len(p.leaders) + len(p.followers) <= 3 for p in pieces)
    kinds = ["deletes" if p.deletes else "leaders" if p.leaders else "followers" for p in pieces]
    assert kinds == sorted(kinds, key=["deletes", "leaders", "followers"].index)
    assert set().union(*(p.deletes for p in pieces)) == changes.deletes
    assert {k: v for p in pieces for k, v in p.leaders.items()} == changes.leaders
    assert {k: v for p in pieces for k, v in p.followers.items()} == changes.followers
    assert {k: v for p in pieces for k, v in p.elected_leaders.items()} == changes.elected_leaders
    assert list(changes.slices(100)) == [changes]
