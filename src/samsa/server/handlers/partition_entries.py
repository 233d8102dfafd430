"""Metadata's per-partition entries, built once per metadata image, not per request.

A Metadata answer for a topic of 10,000 partitions is 10,000 dicts (leader,
epoch, replicas, ISR, offline replicas); built for every request, they took
a survivor of a failover ~100 ms of its loop per request while every client
asked where the partitions went.  The entries change only when the image
does, so they are kept per topic until the image moves past the offset they
were built at (any record, which is rare next to Metadata requests).

The lists are shared between answers: callers read and encode them, never
change them (the access guard and throttling change topic-level and
top-level fields only, which are built per request).
"""

from __future__ import annotations

from typing import Any

from samsa.controller.metadata_image import MetadataImage, TopicImage
from samsa.errors import ErrorCode


class PartitionEntries:
    """Partition entries per topic, valid for one image offset."""

    def __init__(self) -> None:
        self._at: tuple[int, int] | None = None
        self._by_topic: dict[bytes, list[dict[str, Any]]] = {}

    def of(self, image: MetadataImage, topic: TopicImage) -> list[dict[str, Any]]:
        at = (image.last_offset, image.last_epoch)
        if at != self._at:
            self._by_topic.clear()
            self._at = at
        entries = self._by_topic.get(topic.topic_id)
        if entries is None:
            entries = self._by_topic[topic.topic_id] = _build(image, topic)
        return entries


def _build(image: MetadataImage, topic: TopicImage) -> list[dict[str, Any]]:
    live = {b.id for b in image.brokers.values() if not b.fenced}
    entries = []
    for index in sorted(topic.partitions):
        registration = topic.partitions[index]
        leader = registration.leader
        entries.append(
            {
                "error_code": 0 if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
                "partition_index": index,
                "leader_id": leader,
                "leader_epoch": registration.leader_epoch,
                "replica_nodes": list(registration.replicas),
                "isr_nodes": list(registration.isr),
                "offline_replicas": [r for r in registration.replicas if r not in live],
            }
        )
    return entries
