"""What one batch of committed records changed in the image.

Kafka's ``MetadataDelta`` is built beside an immutable image and applied to make
the next one.  Here the image is changed in place (see ``metadata_image``), so
the delta works the other way round: records are replayed *through* it into the
image, and it remembers, for everything a record touches, what it was before
the batch.  Comparing that with the image afterwards says what changed, however
many records touched the same thing.

Use::

    delta = MetadataDelta(image)
    for offset, epoch, record in committed_batch:
        delta.replay(record, offset, epoch)
    changes = delta.local_changes(node_id)   # what this broker must do

The broker side applies ``local_changes``: partitions it now leads, follows, or
no longer hosts (Kafka's ``TopicsDelta.localChanges``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.controller.image.metadata_image import MetadataImage, TopicImage
from samsa.controller.image.registrations import BrokerRegistration, PartitionRegistration
from samsa.protocol.acl import AclBinding
from samsa.protocol.metadata_records import MetadataRecord

_TOPIC_RECORDS = frozenset({"TopicRecord", "RemoveTopicRecord"})
_ACL_RECORDS = frozenset({"AccessControlEntryRecord", "RemoveAccessControlEntryRecord"})
_PARTITION_RECORDS = frozenset({"PartitionRecord", "PartitionChangeRecord"})
_BROKER_RECORDS = {
    "RegisterBrokerRecord": "broker_id",
    "UnregisterBrokerRecord": "broker_id",
    "FenceBrokerRecord": "id",
    "UnfenceBrokerRecord": "id",
    "BrokerRegistrationChangeRecord": "broker_id",
}


@dataclass(frozen=True, slots=True)
class PartitionChange:
    """One partition before and after the batch (``old`` None: it is new)."""

    topic_name: str
    topic_id: bytes
    partition_id: int
    old: PartitionRegistration | None
    new: PartitionRegistration


@dataclass(frozen=True, slots=True)
class LocalPartitionInfo:
    """A partition this node must act on, with its registration after the batch."""

    topic_id: bytes
    registration: PartitionRegistration


@dataclass(slots=True)
class LocalReplicaChanges:
    """What a batch means for the replicas one broker hosts.

    ``leaders`` holds partitions this broker leads whose registration changed;
    ``elected_leaders`` the subset where it newly became leader or the leader
    epoch moved; ``followers`` partitions it follows whose registration changed;
    ``deletes`` partitions it hosted and no longer does (topic deleted or
    replica reassigned away).  Keys are (topic name, partition id); a topic
    deleted and created again under its name in one batch shows in ``deletes``
    and in ``leaders``/``followers``, so apply the deletes first.
    """

    deletes: set[tuple[str, int]] = field(default_factory=set)
    elected_leaders: dict[tuple[str, int], LocalPartitionInfo] = field(default_factory=dict)
    leaders: dict[tuple[str, int], LocalPartitionInfo] = field(default_factory=dict)
    followers: dict[tuple[str, int], LocalPartitionInfo] = field(default_factory=dict)
    topic_ids: dict[str, bytes] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.deletes or self.leaders or self.followers)

    def placed(self) -> Iterator[tuple[str, int]]:
        """Partitions this broker leads or follows after the batch."""
        yield from self.leaders
        yield from self.followers

    def slices(self, size: int) -> Iterator[LocalReplicaChanges]:
        """These changes in order (deletes, leaders, followers) as pieces of at
        most ``size`` partitions, for applying a huge batch a piece at a time;
        one piece (this object) when it is small.  ``elected_leaders`` follows
        its partitions into their piece."""
        if len(self.deletes) + len(self.leaders) + len(self.followers) <= size:
            yield self
            return
        ids = self.topic_ids
        deletes = sorted(self.deletes)
        for start in range(0, len(deletes), size):
            yield LocalReplicaChanges(deletes=set(deletes[start : start + size]), topic_ids=ids)
        leaders = list(self.leaders.items())
        for start in range(0, len(leaders), size):
            piece = dict(leaders[start : start + size])
            elected = {k: self.elected_leaders[k] for k in piece if k in self.elected_leaders}
            yield LocalReplicaChanges(elected_leaders=elected, leaders=piece, topic_ids=ids)
        followers = list(self.followers.items())
        for start in range(0, len(followers), size):
            yield LocalReplicaChanges(
                followers=dict(followers[start : start + size]), topic_ids=ids
            )


class MetadataDelta:
    """Replays records into ``image`` and remembers what they changed."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self._topics_before: dict[bytes, TopicImage | None] = {}
        self._partitions_before: dict[tuple[bytes, int], PartitionRegistration | None] = {}
        self._brokers_before: dict[int, BrokerRegistration | None] = {}
        self._configs_changed: set[tuple[int, str]] = set()
        self._producer_ids_before: int | None = None
        self._features_before: dict[str, int] | None = None
        self.client_quotas_changed = False
        self.record_count = 0
        self._acls_changed: set[bytes] = set()

    def replay(self, record: MetadataRecord, offset: int | None = None, epoch: int = -1) -> None:
        body = record.body
        name = record.name
        if name in _PARTITION_RECORDS:
            self._remember_partition(body)
        elif name in _TOPIC_RECORDS:
            self._remember_topic(body)
        elif name in _BROKER_RECORDS:
            broker_id = body[_BROKER_RECORDS[name]]
            if broker_id not in self._brokers_before:
                self._brokers_before[broker_id] = self.image.brokers.get(broker_id)
        elif name == "ConfigRecord":
            self._configs_changed.add((body["resource_type"], body["resource_name"]))
        elif name == "ClientQuotaRecord":
            self.client_quotas_changed = True
        elif name == "ProducerIdsRecord" and self._producer_ids_before is None:
            self._producer_ids_before = self.image.next_producer_id
        elif name == "FeatureLevelRecord" and self._features_before is None:
            self._features_before = dict(self.image.features)
        elif name in _ACL_RECORDS:
            self._acls_changed.add(bytes(body["id"]))
        self.image.replay(record, offset, epoch)
        self.record_count += 1

    def _remember_partition(self, body: Mapping[str, Any]) -> None:
        topic_id = bytes(body["topic_id"])
        key = (topic_id, body["partition_id"])
        if key not in self._partitions_before:
            self._partitions_before[key] = self.image.partition(*key)

    def _remember_topic(self, body: Mapping[str, Any]) -> None:
        topic_id = bytes(body["topic_id"])
        if topic_id in self._topics_before:
            return
        topic = self.image.topics_by_id.get(topic_id)
        # Keep a copy: the live TopicImage changes in place until it is removed.
        self._topics_before[topic_id] = (
            None if topic is None else TopicImage(topic.name, topic_id, dict(topic.partitions))
        )

    # ------------------------------------------------------------------ topics
    @property
    def created_topics(self) -> dict[bytes, TopicImage]:
        """Topics that exist now and did not before the batch, by id."""
        return {
            topic_id: self.image.topics_by_id[topic_id]
            for topic_id, before in self._topics_before.items()
            if before is None and topic_id in self.image.topics_by_id
        }

    @property
    def deleted_topics(self) -> dict[bytes, TopicImage]:
        """Topics that existed before the batch and are gone, as they were before it."""
        return {
            topic_id: before
            for topic_id, before in self._topics_before.items()
            if before is not None and topic_id not in self.image.topics_by_id
        }

    # ------------------------------------------------------------------ partitions
    def partition_changes(self) -> list[PartitionChange]:
        """Partitions of surviving topics whose registration changed (new ones too,
        including every partition of a created topic)."""
        changes = []
        for (topic_id, partition_id), old in self._partitions_before.items():
            topic = self.image.topics_by_id.get(topic_id)
            if topic is None:
                continue
            new = topic.partitions.get(partition_id)
            if new is None or new is old or new == old:
                continue
            changes.append(PartitionChange(topic.name, topic_id, partition_id, old, new))
        return changes

    # ------------------------------------------------------------------ brokers
    def _broker_pairs(self) -> list[tuple[BrokerRegistration | None, BrokerRegistration | None]]:
        return [(old, self.image.brokers.get(bid)) for bid, old in self._brokers_before.items()]

    @property
    def registered_brokers(self) -> list[BrokerRegistration]:
        """Brokers with a new registration (new id, or a new epoch for a known id)."""
        return [
            new
            for old, new in self._broker_pairs()
            if new is not None and (old is None or old.epoch != new.epoch)
        ]

    @property
    def unregistered_brokers(self) -> list[BrokerRegistration]:
        return [old for old, new in self._broker_pairs() if old is not None and new is None]

    @property
    def fenced_brokers(self) -> list[BrokerRegistration]:
        """Brokers fenced now that were unfenced before the batch (or are new and fenced)."""
        return [
            new
            for old, new in self._broker_pairs()
            if new is not None and new.fenced and (old is None or not old.fenced)
        ]

    @property
    def unfenced_brokers(self) -> list[BrokerRegistration]:
        return [
            new
            for old, new in self._broker_pairs()
            if new is not None and not new.fenced and (old is None or old.fenced)
        ]

    @property
    def controlled_shutdown_brokers(self) -> list[BrokerRegistration]:
        """Brokers that entered controlled shutdown in this batch."""
        return [
            new
            for old, new in self._broker_pairs()
            if new is not None
            and new.in_controlled_shutdown
            and (old is None or not old.in_controlled_shutdown)
        ]

    @property
    def changed_brokers(self) -> dict[int, BrokerRegistration | None]:
        """Every broker whose registration changed, with its registration now (None:
        unregistered)."""
        return {
            bid: self.image.brokers.get(bid)
            for bid, old in self._brokers_before.items()
            if old != self.image.brokers.get(bid)
        }

    # ------------------------------------------------------------------ the rest
    @property
    def changed_configs(self) -> set[tuple[int, str]]:
        """(resource type, resource name) pairs a ConfigRecord touched."""
        return set(self._configs_changed)

    @property
    def producer_ids_changed(self) -> bool:
        before = self._producer_ids_before
        return before is not None and before != self.image.next_producer_id

    @property
    def features_changed(self) -> bool:
        before = self._features_before
        return before is not None and before != self.image.features

    @property
    def changed_acls(self) -> dict[bytes, AclBinding | None]:
        """ACL ids the batch created or removed, with the ACL now (None: removed)."""
        return {acl_id: self.image.acls.get(acl_id) for acl_id in self._acls_changed}

    def is_empty(self) -> bool:
        return not (
            self._acls_changed
            or self.created_topics
            or self.deleted_topics
            or self.partition_changes()
            or self.changed_brokers
            or self._configs_changed
            or self.producer_ids_changed
            or self.features_changed
        )

    # ------------------------------------------------------------------ local view
    def local_changes(self, node_id: int) -> LocalReplicaChanges:
        """What the batch means for the replicas on broker ``node_id``.

        As Kafka's ``TopicsDelta.localChanges``: a changed partition this node is
        no longer a replica of (but was) is a delete; one it leads goes to
        ``leaders`` when its partition epoch moved (and to ``elected_leaders``
        when it newly leads or its leader epoch moved); one it follows goes to
        ``followers`` when its partition epoch moved.  Every partition of a
        deleted topic that listed this node is a delete.
        """
        result = LocalReplicaChanges()
        for change in self.partition_changes():
            new, old = change.new, change.old
            key = (change.topic_name, change.partition_id)
            if node_id not in new.replicas:
                if old is not None and node_id in old.replicas:
                    result.deletes.add(key)
                continue
            if old is not None and old.partition_epoch == new.partition_epoch:
                continue
            info = LocalPartitionInfo(change.topic_id, new)
            result.topic_ids[change.topic_name] = change.topic_id
            if new.leader == node_id:
                result.leaders[key] = info
                if old is None or old.leader != node_id or old.leader_epoch != new.leader_epoch:
                    result.elected_leaders[key] = info
            else:
                result.followers[key] = info
        for topic_id, topic in self.deleted_topics.items():
            for partition_id, registration in topic.partitions.items():
                # The topic may have changed in this batch before it went: a replica
                # listed at either point was created on this node.
                before = self._partitions_before.get((topic_id, partition_id))
                if node_id in registration.replicas or (
                    before is not None and node_id in before.replicas
                ):
                    result.deletes.add((topic.name, partition_id))
        return result
