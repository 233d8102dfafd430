"""Metadata's per-partition entries and whole encoded answers, built once per
metadata image, not per request.

A Metadata answer for a topic of 10,000 partitions is 10,000 dicts (leader,
epoch, replicas, ISR, offline replicas); built for every request, they took
a survivor of a failover ~100 ms of its loop per request while every client
asked where the partitions went.  The entries change only when the topic's
registrations or the set of live brokers do, so they are kept per topic and
checked against both at each request (comparing 10,000 registrations that
are the same objects costs well under a millisecond); other topics changing
-- 1,000 partitions created beside a topic of 10,000 -- leave them valid,
where rebuilding them took ~60 ms of the loop at the first request after.

The lists are shared between answers: callers read and encode them, never
change them (the access guard and throttling change topic-level and
top-level fields only, which are built per request).  The encoding of a
whole answer is shared too, per request shape (``slot``), through
``ReusableBody``, which encodes afresh an answer a wrapper changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from samsa.controller.metadata_image import MetadataImage, TopicImage
from samsa.controller.registrations import PartitionRegistration
from samsa.errors import ErrorCode
from samsa.protocol.reusable_body import EncodedSlot

MAX_SLOTS = 64
"""Request shapes remembered per image (each client usually asks one shape)."""


class PartitionEntries:
    """Partition entries per topic, valid for one image offset."""

    def __init__(self) -> None:
        self._at: tuple[int, int] | None = None
        self._by_topic: dict[bytes, _Built] = {}
        self._slots: dict[tuple[Any, ...], EncodedSlot] = {}

    def _check(self, image: MetadataImage) -> None:
        at = (image.last_offset, image.last_epoch)
        if at != self._at:
            self._slots.clear()
            self._at = at
            gone = [topic_id for topic_id in self._by_topic if topic_id not in image.topics_by_id]
            for topic_id in gone:
                del self._by_topic[topic_id]

    def slot(self, image: MetadataImage, shape: tuple[Any, ...]) -> EncodedSlot:
        """Where the encoding of the answer to a request of ``shape`` (everything
        besides the image that the answer depends on) is kept for this image."""
        self._check(image)
        slot = self._slots.get(shape)
        if slot is None:
            if len(self._slots) >= MAX_SLOTS:
                self._slots.clear()
            slot = self._slots[shape] = EncodedSlot()
        return slot

    def of(self, image: MetadataImage, topic: TopicImage) -> list[dict[str, Any]]:
        self._check(image)
        registrations = tuple(topic.partitions.items())
        live = frozenset(b.id for b in image.brokers.values() if not b.fenced)
        built = self._by_topic.get(topic.topic_id)
        if built is None or built.live != live or built.registrations != registrations:
            built = _Built(registrations, live, _build(topic, live))
            self._by_topic[topic.topic_id] = built
        return built.entries


@dataclass(frozen=True, slots=True)
class _Built:
    """A topic's entries and what they were built from."""

    registrations: tuple[tuple[int, PartitionRegistration], ...]
    live: frozenset[int]
    entries: list[dict[str, Any]]


def _build(topic: TopicImage, live: frozenset[int]) -> list[dict[str, Any]]:
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
