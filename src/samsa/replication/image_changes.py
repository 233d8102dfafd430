"""A whole metadata image seen as local replica changes, for a node starting from a snapshot.

A broker that loads a snapshot (or catches up from nothing) has no delta to
diff: every partition that names it is new to it, exactly what Kafka's first
metadata publish does by diffing against the empty image.  Leaders go to
both ``leaders`` and ``elected_leaders``.
"""

from __future__ import annotations

from samsa.controller.image.metadata_delta import LocalPartitionInfo, LocalReplicaChanges
from samsa.controller.image.metadata_image import MetadataImage

__all__ = ["local_changes_from_image"]


def local_changes_from_image(image: MetadataImage, node_id: int) -> LocalReplicaChanges:
    changes = LocalReplicaChanges()
    for topic, partition_id, registration in image.iter_partitions():
        if node_id not in registration.replicas:
            continue
        key = (topic.name, partition_id)
        info = LocalPartitionInfo(topic.topic_id, registration)
        changes.topic_ids[topic.name] = topic.topic_id
        if registration.leader == node_id:
            changes.leaders[key] = info
            changes.elected_leaders[key] = info
        else:
            changes.followers[key] = info
    return changes
