"""Metadata's per-partition entries and whole encoded answers, built once per
metadata image, not per request.

A Metadata answer for a topic of 10,000 partitions is 10,000 dicts (leader,
epoch, replicas, ISR, offline replicas); built for every request, they took
a survivor of a failover ~100 ms of its loop per request while every client
asked where the partitions went.  The entries change only when the image
does, so they are kept per topic until the image moves past the offset they
were built at (any record, which is rare next to Metadata requests).

The lists are shared between answers: callers read and encode them, never
change them (the access guard and throttling change topic-level and
top-level fields only, which are built per request).  The encoding of a
whole answer is shared too, per request shape (``slot``), through
``ReusableBody``, which encodes afresh an answer a wrapper changed.

A new image rebuilds the lists but not the entries: a partition whose
registration (never changed in place) and set of live brokers are those an
entry was made from keeps that entry, a ``MemoStruct`` whose encodings are
kept on it.  While a failover's leadership moves are applied 200 at a time,
each new image's answer encodes the partitions that moved, not all 10,000.
"""

from __future__ import annotations

from typing import Any

from samsa.controller.image.metadata_image import MetadataImage, TopicImage
from samsa.controller.image.registrations import PartitionRegistration
from samsa.errors import ErrorCode
from samsa.protocol.reusable_body import EncodedSlot, MemoStruct

MAX_SLOTS = 64
"""Request shapes remembered per image (each client usually asks one shape)."""


class PartitionEntries:
    """Partition entries per topic, valid for one image offset."""

    def __init__(self) -> None:
        self._at: tuple[int, int] | None = None
        self._by_topic: dict[bytes, list[MemoStruct]] = {}
        self._slots: dict[tuple[Any, ...], EncodedSlot] = {}
        self._live: frozenset[int] = frozenset()
        self._kept: dict[bytes, dict[int, tuple[PartitionRegistration, MemoStruct]]] = {}
        """Per topic and partition: the registration the kept entry was made from
        while the brokers in ``_live`` were the live ones."""

    def _check(self, image: MetadataImage) -> None:
        at = (image.last_offset, image.last_epoch)
        if at != self._at:
            self._by_topic.clear()
            self._slots.clear()
            self._at = at
            live = frozenset(b.id for b in image.brokers.values() if not b.fenced)
            if live != self._live:
                self._kept.clear()  # every entry's offline replicas may differ
                self._live = live
            for topic_id in [t for t in self._kept if t not in image.topics_by_id]:
                del self._kept[topic_id]

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

    def kept_topics(self) -> int:
        """Topics whose entries are kept for the next image (bounded by the image's)."""
        return len(self._kept)

    def of(self, image: MetadataImage, topic: TopicImage) -> list[MemoStruct]:
        self._check(image)
        entries = self._by_topic.get(topic.topic_id)
        if entries is None:
            entries = self._by_topic[topic.topic_id] = self._build(topic)
        return entries

    def _build(self, topic: TopicImage) -> list[MemoStruct]:
        kept = self._kept.setdefault(topic.topic_id, {})
        live = self._live
        entries = []
        for index in sorted(topic.partitions):
            registration = topic.partitions[index]
            old = kept.get(index)
            if old is not None and old[0] is registration:
                entries.append(old[1])
                continue
            entry = _entry(index, registration, live)
            kept[index] = (registration, entry)
            entries.append(entry)
        if len(kept) > len(entries):  # partitions gone (the topic was recreated smaller)
            for index in [i for i in kept if i not in topic.partitions]:
                del kept[index]
        return entries


def _entry(index: int, registration: PartitionRegistration, live: frozenset[int]) -> MemoStruct:
    leader = registration.leader
    return MemoStruct(
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
