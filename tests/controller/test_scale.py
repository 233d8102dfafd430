"""The image at cluster scale: 100,000 partitions in memory and in replay time,
and moving one broker's leaderships without scanning them all."""

import gc
import random
import time
import tracemalloc
import uuid

from tests.controller.helpers import register_broker

from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.partitions.placement import UsableBroker, place_replicas
from samsa.controller.pending import PendingChanges
from samsa.controller.quorum_controller import QuorumController
from samsa.protocol.metadata_records import MetadataRecord, make_record

BROKERS = 100
PARTITIONS = 100_000


def cluster_records() -> list[MetadataRecord]:
    rng = random.Random(5)
    records = [register_broker(b, b) for b in range(BROKERS)]
    brokers = [UsableBroker(b, f"r{b % 4}") for b in range(BROKERS)]
    for t in range(100):
        topic_id = uuid.UUID(int=rng.getrandbits(128)).bytes
        records.append(make_record("TopicRecord", name=f"t{t}", topic_id=topic_id))
        for p, replicas in enumerate(place_replicas(brokers, PARTITIONS // 100, 3, rng)):
            records.append(
                make_record(
                    "PartitionRecord",
                    topic_id=topic_id,
                    partition_id=p,
                    replicas=replicas,
                    isr=list(replicas),
                    leader=replicas[0],
                    leader_epoch=0,
                    partition_epoch=0,
                )
            )
    return records


def test_100k_partitions_fit_in_200_mb_replay_fast_and_fence_one_broker_fast() -> None:
    records = cluster_records()
    gc.collect()
    start = time.process_time()
    image = MetadataImage()
    for record in records:
        image.replay(record)
    replay_s = time.process_time() - start
    assert image.partition_count() == PARTITIONS
    assert replay_s < 2.0, f"replay took {replay_s:.2f} s of CPU"

    del image
    gc.collect()
    tracemalloc.start()
    image = MetadataImage()
    for record in records:
        image.replay(record)
    used, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert used <= 200_000_000, f"image takes {used / 1e6:.0f} MB"

    controller = QuorumController(image)
    victim = 7
    start = time.process_time()
    pending = PendingChanges(image)
    controller.cluster.fence(pending, image.brokers[victim], "test")
    fence_s = time.process_time() - start
    assert fence_s < 1.0, f"fencing took {fence_s:.2f} s of CPU"
    in_isr = image.brokers_to_isrs.isr_count(victim)
    assert len(pending.records) == in_isr + 1
    for record in pending.records:
        image.replay(record)
    assert image.brokers_to_isrs.isr_count(victim) == 0
    assert not image.brokers_to_isrs.has_leaderships(victim)
