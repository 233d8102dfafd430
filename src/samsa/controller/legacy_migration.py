"""From the single-node metadata file of earlier releases to Kafka's metadata records.

Before the Raft quorum, a node kept its metadata in ``cluster-metadata.log``: a
CRC-framed log of small JSON records (topics, partition counts, topic configs,
producer-id blocks), replayed on start.  On the first start of a node with a
quorum, that file is turned into the metadata records that describe the same
state (TopicRecord, one PartitionRecord per partition led by this node,
ConfigRecords, a ProducerIdsRecord), which become the first data entries of the
Raft log.  The file is then renamed, not deleted, so nothing is lost if the
migration has to be looked at again; a node that finds the renamed file does
nothing more.  Topic ids are kept, so clients that cached them see no change.
"""

from __future__ import annotations

import logging
from pathlib import Path

from samsa.controller.image.registrations import PartitionRegistration
from samsa.controller.legacy_image import MetadataImage as LegacyImage
from samsa.controller.metadata_log import FILE_NAME, MetadataLog
from samsa.protocol.metadata_records import MetadataRecord, make_record

log = logging.getLogger("samsa.controller")

MIGRATED_SUFFIX = ".migrated"
TOPIC_RESOURCE = 2


def legacy_metadata_exists(data_dir: Path) -> bool:
    return (data_dir / FILE_NAME).exists()


def legacy_records(data_dir: Path, node_id: int) -> list[MetadataRecord]:
    """The records that rebuild what ``cluster-metadata.log`` describes (read only)."""
    legacy_log = MetadataLog(data_dir)
    image = LegacyImage()
    try:
        for record in legacy_log.records():
            image.replay(record)
    finally:
        legacy_log.close()
    records: list[MetadataRecord] = []
    for topic in sorted(image.topics.values(), key=lambda t: t.name):
        records.append(make_record("TopicRecord", name=topic.name, topic_id=topic.topic_id))
        for index in range(topic.partitions):
            # Leader epoch 0: the batches already on disk carry -1 (no epoch),
            # so every later batch of this node's leadership is newer.
            registration = PartitionRegistration((node_id,), (node_id,), node_id, 0, 0)
            records.append(
                make_record(
                    "PartitionRecord",
                    partition_id=index,
                    topic_id=topic.topic_id,
                    **registration.record_fields(),
                )
            )
        for name, value in sorted(topic.configs.items()):
            records.append(
                make_record(
                    "ConfigRecord",
                    resource_type=TOPIC_RESOURCE,
                    resource_name=topic.name,
                    name=name,
                    value=value,
                )
            )
    if image.next_producer_id_block > 0:
        records.append(
            make_record(
                "ProducerIdsRecord",
                broker_id=node_id,
                broker_epoch=-1,
                next_producer_id=image.next_producer_id_block,
            )
        )
    return records


def retire_legacy_metadata(data_dir: Path) -> Path:
    """Rename the old file once its records are committed in the new log."""
    source = data_dir / FILE_NAME
    target = source.with_name(FILE_NAME + MIGRATED_SUFFIX)
    source.replace(target)
    log.info("migrated %s into the metadata quorum log; kept the old file as %s", source, target)
    return target
