from tests.controller.helpers import (
    change,
    cluster,
    image_of,
    partition,
    register_broker,
    topic,
    topic_id_of,
)

from samsa.controller.image.registrations import NO_LEADER
from samsa.controller.pending import PendingChanges
from samsa.protocol.metadata_records import make_record

TID = topic_id_of("t")


def test_reads_see_the_operations_own_records_and_the_image_is_untouched() -> None:
    image = image_of(*cluster(3), topic("t"), partition("t", 0, [1, 2, 3]))
    pending = PendingChanges(image)
    pending.append(change("t", 0, isr=[2, 3], leader=2))
    pending.append(
        make_record("BrokerRegistrationChangeRecord", broker_id=1, broker_epoch=10, fenced=1)
    )
    assert pending.partition(TID, 0).leader == 2
    assert image.partition(TID, 0).leader == 1
    assert not pending.is_active(1) and image.is_active(1)
    pending.append(register_broker(4, 99, fenced=True))
    assert pending.broker(4) is not None and not pending.is_active(4)
    pending.append(make_record("UnregisterBrokerRecord", broker_id=2, broker_epoch=20))
    assert pending.broker(2) is None and 2 in image.brokers
    assert len(pending.records) == 4


def test_topics_created_and_removed_in_the_operation() -> None:
    image = image_of(*cluster(1), topic("t"), partition("t", 0, [1]))
    pending = PendingChanges(image)
    pending.append(topic("u"))
    pending.append(partition("u", 0, [1]))
    assert pending.topic_id("u") == topic_id_of("u") and pending.topic_id("t") == TID
    pending.append(make_record("RemoveTopicRecord", topic_id=TID))
    assert pending.topic_id("t") is None and pending.partition(TID, 0) is None


def test_index_reads_include_pending_changes() -> None:
    image = image_of(*cluster(3), topic("t"), partition("t", 0, [1, 2, 3], isr=[1], leader=1))
    pending = PendingChanges(image)
    assert pending.partitions_with_broker_in_isr(3) == []
    pending.append(change("t", 0, isr=[3], leader=3))
    assert pending.partitions_with_broker_in_isr(3) == [(TID, 0)]
    pending.append(change("t", 0, leader=NO_LEADER))
    assert pending.partitions_without_leader() == [(TID, 0)]
