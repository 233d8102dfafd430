"""The image written back out as records: what a metadata snapshot holds.

Replaying ``snapshot_records(image)`` into an empty image gives an image equal
to ``image`` (``MetadataImage.__eq__``, ``images_equal``); that round trip is
the contract snapshots rely on.  The order is Kafka's ``MetadataImage.write``
order where it matters: feature levels first (a reader needs metadata.version
before anything else), then brokers, topics with their partitions, configs,
client quotas, SCRAM credentials, ACLs, delegation tokens and the producer id
mark.  A broker's
fenced and controlled-shutdown state travel inside its RegisterBrokerRecord, so
one record per broker is enough.
"""

from __future__ import annotations

from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.security.acl_control import acl_record
from samsa.controller.security.client_quota_control import quota_record
from samsa.controller.security.scram_control import credential_record
from samsa.protocol.metadata_records import MetadataRecord, make_record

METADATA_VERSION_FEATURE = "metadata.version"


def snapshot_records(image: MetadataImage) -> list[MetadataRecord]:
    """Records that rebuild ``image`` from nothing."""
    records: list[MetadataRecord] = []
    features = sorted(image.features.items(), key=lambda kv: kv[0] != METADATA_VERSION_FEATURE)
    for name, level in features:
        records.append(make_record("FeatureLevelRecord", name=name, feature_level=level))
    for broker_id in sorted(image.brokers):
        records.append(
            make_record("RegisterBrokerRecord", **image.brokers[broker_id].record_fields())
        )
    for topic in image.topics.values():
        records.append(make_record("TopicRecord", name=topic.name, topic_id=topic.topic_id))
        for partition_id, registration in topic.partitions.items():
            records.append(
                make_record(
                    "PartitionRecord",
                    partition_id=partition_id,
                    topic_id=topic.topic_id,
                    **registration.record_fields(),
                )
            )
    for (resource_type, resource_name), configs in image.configs.items():
        for name, value in sorted(configs.items()):
            records.append(
                make_record(
                    "ConfigRecord",
                    resource_type=resource_type,
                    resource_name=resource_name,
                    name=name,
                    value=value,
                )
            )
    for user, mechanism, credential in image.scram:
        records.append(credential_record(user, mechanism, credential))
    records.extend(acl_record(acl_id, acl) for acl_id, acl in image.acls.items())
    for entity, quotas in image.client_quotas.items():
        for key, rate in sorted(quotas.items()):
            records.append(quota_record(entity, key, rate, remove=False))
    records.extend(
        make_record("DelegationTokenRecord", **token.record_fields())
        for token in image.delegation_tokens
    )
    if image.next_producer_id > 0:
        records.append(
            make_record(
                "ProducerIdsRecord",
                broker_id=-1,
                broker_epoch=-1,
                next_producer_id=image.next_producer_id,
            )
        )
    return records


def image_from_records(records: list[MetadataRecord]) -> MetadataImage:
    """A new image with ``records`` replayed, offsets counted from 0."""
    image = MetadataImage()
    for record in records:
        image.replay(record)
    return image
