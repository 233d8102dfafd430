"""The committed image plus the records one controller operation has made so far.

An operation reads the committed image only, but it may produce several records
that build on each other: fencing two brokers that share a partition, creating
two topics in one request, electing a leader after taking a broker out of an
ISR.  ``PendingChanges`` collects the operation's records and answers reads
(partitions, brokers, topic names) as if they had been replayed, without
touching the image.  It is thrown away when the operation returns its records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from samsa.controller.image.broker_replay import FENCE, UNFENCE
from samsa.controller.image.metadata_image import MetadataImage, collision_key
from samsa.controller.image.registrations import (
    NO_LEADER,
    BrokerRegistration,
    PartitionRegistration,
)
from samsa.protocol.metadata_records import MetadataRecord

_GONE: Any = object()


class PendingChanges:
    """Records of one operation, and reads that see them."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.records: list[MetadataRecord] = []
        self._partitions: dict[tuple[bytes, int], PartitionRegistration] = {}
        self._brokers: dict[int, Any] = {}
        self._new_topics: dict[str, bytes] = {}
        self._new_by_collision_key: dict[str, set[str]] = {}
        self._removed_topics: set[bytes] = set()

    def append(self, record: MetadataRecord) -> None:
        self.records.append(record)
        body = record.body
        name = record.name
        if name == "PartitionChangeRecord":
            key = (body["topic_id"], body["partition_id"])
            current = self.partition(*key)
            assert current is not None, f"change for unknown partition {key}"
            self._partitions[key] = current.merge(body)
        elif name == "PartitionRecord":
            key = (body["topic_id"], body["partition_id"])
            self._partitions[key] = PartitionRegistration.from_record(body)
        elif name == "TopicRecord":
            self._new_topics[body["name"]] = body["topic_id"]
            collision = collision_key(body["name"])
            if collision is not None:
                self._new_by_collision_key.setdefault(collision, set()).add(body["name"])
        elif name == "RemoveTopicRecord":
            self._removed_topics.add(body["topic_id"])
        elif name == "RegisterBrokerRecord":
            self._brokers[body["broker_id"]] = BrokerRegistration.from_record(body)
        elif name == "UnregisterBrokerRecord":
            self._brokers[body["broker_id"]] = _GONE
        elif name == "BrokerRegistrationChangeRecord":
            self._change_broker(body)

    def extend(self, records: list[MetadataRecord]) -> None:
        for record in records:
            self.append(record)

    def _change_broker(self, body: Mapping[str, Any]) -> None:
        broker = self.broker(body["broker_id"])
        assert broker is not None
        fencing = body.get("fenced", 0)
        fenced = broker.fenced if fencing == 0 else fencing == FENCE
        assert fencing in (0, FENCE, UNFENCE)
        in_shutdown = broker.in_controlled_shutdown or body.get("in_controlled_shutdown", 0) == 1
        self._brokers[broker.id] = replace(
            broker, fenced=fenced, in_controlled_shutdown=in_shutdown
        )

    # ------------------------------------------------------------------ reads
    def partition(self, topic_id: bytes, partition_id: int) -> PartitionRegistration | None:
        pending = self._partitions.get((topic_id, partition_id))
        if pending is not None:
            return pending
        if topic_id in self._removed_topics:
            return None
        return self.image.partition(topic_id, partition_id)

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        pending = self._brokers.get(broker_id)
        if pending is _GONE:
            return None
        if pending is not None:
            assert isinstance(pending, BrokerRegistration)
            return pending
        return self.image.brokers.get(broker_id)

    def is_active(self, broker_id: int) -> bool:
        broker = self.broker(broker_id)
        return broker is not None and broker.is_active

    def partitions_with_broker_in_isr(self, broker_id: int) -> list[tuple[bytes, int]]:
        """Partitions whose ISR holds ``broker_id`` in the committed image or after
        this operation's changes (an unclean election here may have put it there)."""
        result = list(self.image.brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        return self._with_pending(result, lambda r: broker_id in r.isr)

    def partitions_without_leader(self) -> list[tuple[bytes, int]]:
        result = list(self.image.brokers_to_isrs.partitions_without_leader())
        return self._with_pending(result, lambda r: r.leader == NO_LEADER)

    def _with_pending(
        self,
        committed: list[tuple[bytes, int]],
        matches: Callable[[PartitionRegistration], bool],
    ) -> list[tuple[bytes, int]]:
        if not self._partitions:
            return committed
        seen = set(committed)
        for key, registration in self._partitions.items():
            if key not in seen and matches(registration):
                committed.append(key)
        return committed

    def topic_id(self, name: str) -> bytes | None:
        """The id of a topic by name, counting topics created or removed so far."""
        created = self._new_topics.get(name)
        if created is not None and created not in self._removed_topics:
            return created
        topic = self.image.topics.get(name)
        if topic is None or topic.topic_id in self._removed_topics:
            return None
        return topic.topic_id

    def colliding_topic(self, name: str) -> str | None:
        """An existing topic (or one created earlier in this request) whose name
        differs from ``name`` only in '.' versus '_', or None."""
        key = collision_key(name)
        if key is None:
            return None
        candidates = self.image.topics_by_collision_key.get(
            key, set()
        ) | self._new_by_collision_key.get(key, set())
        existing = sorted(
            other for other in candidates if other != name and self.topic_id(other) is not None
        )
        return existing[0] if existing else None
