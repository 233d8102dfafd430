"""/metrics' partition health, read from the image's leader index rather than
by scanning every partition of the cluster at each scrape."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import cast

from samsa.controller.image.metadata_image import MetadataImage
from samsa.protocol.metadata_records import make_record
from samsa.server.broker_api import BrokerApi
from samsa.server.metadata.broker_view import BrokerView

TOPIC_ID = uuid.UUID(int=9).bytes


def test_under_replicated_counts_partitions_led_here_offline_counts_the_cluster() -> None:
    image = MetadataImage()
    image.replay(make_record("TopicRecord", name="t", topic_id=TOPIC_ID))
    for p, (leader, isr) in enumerate(
        [(1, [1, 2, 3]), (1, [1]), (1, [1, 2]), (2, [2]), (-1, [3]), (-1, [2])]
    ):
        image.replay(
            make_record(
                "PartitionRecord",
                partition_id=p,
                topic_id=TOPIC_ID,
                replicas=[1, 2, 3],
                isr=isr,
                leader=leader,
                leader_epoch=0,
                partition_epoch=0,
            )
        )
    view = BrokerView(cast(BrokerApi, SimpleNamespace(image=image, node_id=1)))
    assert view.partition_health() == (2, 2)
    image.replay(
        make_record("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=1, isr=[1, 2, 3])
    )
    image.replay(make_record("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=4, leader=3))
    assert view.partition_health() == (1, 1)
