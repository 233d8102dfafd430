"""The cluster metadata image, built only by replaying Kafka's metadata records.

What the image holds: topics (name, id, partitions), brokers (registrations),
configs per (resource type, resource name), client quotas per entity, the next
producer id, feature levels, SCRAM credentials (``scram_image``), ACLs,
delegation tokens (``delegation_token_image``), and the offset and epoch of
the last record applied.  ``replay`` is the only mutator (the broker lifecycle
records through ``broker_replay``); every node (controller or broker) builds
the same image from the same committed records, so there is nothing else to
keep in sync.

Why it is mutable, unlike Kafka's immutable ``MetadataImage``: a cluster holds
100,000 partitions and a batch touches a handful; copying the maps per batch is
too slow in Python.  Registrations themselves are immutable, so a
``MetadataDelta`` records what a batch changed by keeping the registrations from
before it.  The controller reads the image and never writes it: the caller
replays committed records.

Invariants after every replay:
* ``topics`` and ``topics_by_id`` hold the same TopicImage objects.
* ``brokers_to_isrs`` matches every partition's ISR and leader; ``reassigning``
  holds exactly the partitions with adding or removing replicas, ``imbalanced``
  those whose leader is not their preferred replica.
* A record that cannot apply (a partition of an unknown topic, a fence with a
  stale broker epoch, an unknown record name) raises ``MetadataReplayError``
  and leaves the image as it was: a log the image does not understand must stop
  the node, not be half applied.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.controller.image import broker_replay
from samsa.controller.image.broker_replay import BrokerReplay, BrokerReplayError
from samsa.controller.image.brokers_to_isrs import BrokersToIsrs
from samsa.controller.image.delegation_token_image import DelegationTokenImage
from samsa.controller.image.registrations import (
    NO_LEADER,
    BrokerRegistration,
    PartitionRegistration,
)
from samsa.controller.image.scram_image import ScramImage, ScramReplayError
from samsa.protocol.acl import AclBinding, binding_from
from samsa.protocol.metadata.quotas import Entity, make_entity
from samsa.protocol.metadata_records import MetadataRecord

log = logging.getLogger(__name__)

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
RESOURCE_GROUP = 32


class MetadataReplayError(ValueError):
    """A record that does not apply to the image (the log and the image disagree)."""


def collision_key(name: str) -> str | None:
    """The name metrics would give the topic ('.' becomes '_'), or None when it
    has neither character and so cannot collide.  Kafka refuses a topic whose
    key equals an existing topic's: their metrics could not be told apart."""
    if "." not in name and "_" not in name:
        return None
    return name.replace(".", "_")


@dataclass(eq=True, slots=True)
class TopicImage:
    """One topic: its partitions by id.  The partitions dict changes in place on
    replay; the registrations in it never do."""

    name: str
    topic_id: bytes
    partitions: dict[int, PartitionRegistration] = field(default_factory=dict)


class MetadataImage:
    """The cluster metadata, as of the last committed record replayed."""

    def __init__(self) -> None:
        self._reset()
        self._handlers: dict[str, Callable[[Mapping[str, Any]], None]] = {
            "TopicRecord": self._replay_topic,
            "PartitionRecord": self._replay_partition,
            "PartitionChangeRecord": self._replay_partition_change,
            "RemoveTopicRecord": self._replay_remove_topic,
            "ConfigRecord": self._replay_config,
            "RegisterBrokerRecord": self._on_brokers(broker_replay.replay_register),
            "UnregisterBrokerRecord": self._on_brokers(broker_replay.replay_unregister),
            "FenceBrokerRecord": self._on_brokers(broker_replay.replay_fence),
            "UnfenceBrokerRecord": self._on_brokers(broker_replay.replay_unfence),
            "BrokerRegistrationChangeRecord": self._on_brokers(broker_replay.replay_change),
            "ProducerIdsRecord": self._replay_producer_ids,
            "FeatureLevelRecord": self._replay_feature_level,
            "NoOpRecord": self._replay_noop,
            "UserScramCredentialRecord": lambda body: self.scram.replay_upsert(body),
            "RemoveUserScramCredentialRecord": lambda body: self.scram.replay_remove(body),
            "AccessControlEntryRecord": self._replay_acl,
            "RemoveAccessControlEntryRecord": self._replay_remove_acl,
            "ClientQuotaRecord": self._replay_client_quota,
            "DelegationTokenRecord": lambda body: self.delegation_tokens.replay_upsert(body),
            "RemoveDelegationTokenRecord": lambda body: self.delegation_tokens.replay_remove(body),
        }

    def _reset(self) -> None:
        self.topics: dict[str, TopicImage] = {}
        self.topics_by_id: dict[bytes, TopicImage] = {}
        # Kafka's topicsWithCollisionChars: names by collision_key, for CreateTopics.
        self.topics_by_collision_key: dict[str, set[str]] = {}
        self.brokers: dict[int, BrokerRegistration] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.next_producer_id = 0
        self.features: dict[str, int] = {}
        self.last_offset = -1
        self.last_epoch = -1
        self.brokers_to_isrs = BrokersToIsrs()
        self.reassigning: set[tuple[bytes, int]] = set()
        self.imbalanced: set[tuple[bytes, int]] = set()
        self.scram = ScramImage()
        self.acls: dict[bytes, AclBinding] = {}
        self.client_quotas: dict[Entity, dict[str, float]] = {}
        self.delegation_tokens = DelegationTokenImage()

    def load_snapshot(self, records: Iterable[MetadataRecord], end_offset: int, epoch: int) -> None:
        """Rebuild this image in place from a snapshot's records (holders of the
        image keep a valid reference).  A snapshot covers the log below
        ``end_offset``, so the last applied offset becomes ``end_offset - 1``."""
        self._reset()
        for record in records:
            self.replay(record)
        self.last_offset = end_offset - 1
        self.last_epoch = epoch

    # ------------------------------------------------------------------ replay
    def replay(self, record: MetadataRecord, offset: int | None = None, epoch: int = -1) -> None:
        """Apply one committed record.  ``offset`` defaults to the next offset;
        the epoch is kept as given (it only moves forward)."""
        handler = self._handlers.get(record.name)
        if handler is None:
            raise MetadataReplayError(f"unknown metadata record {record.name!r}")
        try:
            handler(record.body)
        except (BrokerReplayError, ScramReplayError) as exc:
            # The parts' own errors (broker_replay, scram_image), as the image's.
            raise MetadataReplayError(str(exc)) from None
        self.last_offset = self.last_offset + 1 if offset is None else offset
        if epoch > self.last_epoch:
            self.last_epoch = epoch

    def replay_all(self, records: list[MetadataRecord]) -> None:
        for record in records:
            self.replay(record)

    def _on_brokers(self, replay: BrokerReplay) -> Callable[[Mapping[str, Any]], None]:
        return lambda body: replay(self.brokers, body)

    def _replay_acl(self, body: Mapping[str, Any]) -> None:
        acl_id = bytes(body["id"])
        if acl_id in self.acls:
            raise MetadataReplayError(f"AccessControlEntryRecord: ACL {acl_id.hex()} exists")
        self.acls[acl_id] = binding_from(
            body["resource_type"],
            body["resource_name"],
            body["pattern_type"],
            body["principal"],
            body["host"],
            body["operation"],
            body["permission_type"],
        )

    def _replay_remove_acl(self, body: Mapping[str, Any]) -> None:
        acl_id = bytes(body["id"])
        if self.acls.pop(acl_id, None) is None:
            raise MetadataReplayError(f"RemoveAccessControlEntryRecord: no ACL {acl_id.hex()}")

    def _replay_topic(self, body: Mapping[str, Any]) -> None:
        name, topic_id = body["name"], bytes(body["topic_id"])
        if name in self.topics or topic_id in self.topics_by_id:
            raise MetadataReplayError(f"TopicRecord for {name!r}: the topic already exists")
        topic = TopicImage(name, topic_id)
        self.topics[name] = topic
        collision = collision_key(name)
        if collision is not None:
            self.topics_by_collision_key.setdefault(collision, set()).add(name)
        self.topics_by_id[topic_id] = topic
        log.info("created topic %s with id %s", name, topic_id.hex())

    def _topic(self, body: Mapping[str, Any], what: str) -> TopicImage:
        topic = self.topics_by_id.get(body["topic_id"])
        if topic is None:
            raise MetadataReplayError(
                f"{what} for partition {body['partition_id']} of unknown topic id "
                f"{bytes(body['topic_id']).hex()}"
            )
        return topic

    def _replay_partition(self, body: Mapping[str, Any]) -> None:
        topic = self._topic(body, "PartitionRecord")
        partition_id = body["partition_id"]
        new = PartitionRegistration.from_record(body)
        prev = topic.partitions.get(partition_id)
        topic.partitions[partition_id] = new
        self._index(topic.topic_id, partition_id, prev, new)

    def _replay_partition_change(self, body: Mapping[str, Any]) -> None:
        topic = self._topic(body, "PartitionChangeRecord")
        partition_id = body["partition_id"]
        prev = topic.partitions.get(partition_id)
        if prev is None:
            raise MetadataReplayError(
                f"PartitionChangeRecord for unknown partition {topic.name}-{partition_id}"
            )
        new = prev.merge(body)
        topic.partitions[partition_id] = new
        self._index(topic.topic_id, partition_id, prev, new)
        if not new.election_was_clean(prev.isr):
            log.warning(
                "UNCLEAN leader election for %s-%d: %s; records acknowledged by the old "
                "ISR may be lost",
                topic.name,
                partition_id,
                new.diff(prev),
            )
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("partition change for %s-%d: %s", topic.name, partition_id, new.diff(prev))

    def _index(
        self,
        topic_id: bytes,
        partition_id: int,
        prev: PartitionRegistration | None,
        new: PartitionRegistration,
    ) -> None:
        self.brokers_to_isrs.update(
            topic_id,
            partition_id,
            () if prev is None else prev.isr,
            new.isr,
            None if prev is None else prev.leader,
            new.leader,
        )
        key = (topic_id, partition_id)
        if new.removing_replicas or new.adding_replicas:
            self.reassigning.add(key)
        elif prev is not None and (prev.removing_replicas or prev.adding_replicas):
            self.reassigning.discard(key)
        if new.replicas and new.leader != new.replicas[0]:
            self.imbalanced.add(key)
        elif prev is not None:
            self.imbalanced.discard(key)

    def _replay_remove_topic(self, body: Mapping[str, Any]) -> None:
        topic_id = bytes(body["topic_id"])
        topic = self.topics_by_id.pop(topic_id, None)
        if topic is None:
            raise MetadataReplayError(f"RemoveTopicRecord for unknown topic id {topic_id.hex()}")
        del self.topics[topic.name]
        collision = collision_key(topic.name)
        if collision is not None:
            colliding = self.topics_by_collision_key.get(collision, set())
            colliding.discard(topic.name)
            if not colliding:
                self.topics_by_collision_key.pop(collision, None)
        for partition_id, registration in topic.partitions.items():
            self.brokers_to_isrs.remove(
                topic_id, partition_id, registration.isr, registration.leader
            )
            key = (topic_id, partition_id)
            self.reassigning.discard(key)
            self.imbalanced.discard(key)
        self.configs.pop((RESOURCE_TOPIC, topic.name), None)
        log.info("removed topic %s with id %s", topic.name, topic_id.hex())

    def _replay_config(self, body: Mapping[str, Any]) -> None:
        key = (body["resource_type"], body["resource_name"])
        _set_or_remove(self.configs, key, body["name"], body.get("value"))

    def _replay_producer_ids(self, body: Mapping[str, Any]) -> None:
        next_id = body["next_producer_id"]
        if next_id <= self.next_producer_id:
            raise MetadataReplayError(
                f"ProducerIdsRecord moves the next producer id back from "
                f"{self.next_producer_id} to {next_id}"
            )
        self.next_producer_id = next_id

    def _replay_feature_level(self, body: Mapping[str, Any]) -> None:
        # A 0 is kept (unlike Kafka's image, which pops it): Samsa writes no
        # bootstrap records, so "turned off" must differ from "never set"
        # (feature_control.BOOTSTRAP_LEVELS).
        self.features[body["name"]] = body["feature_level"]

    def _replay_noop(self, body: Mapping[str, Any]) -> None:
        pass

    def _replay_client_quota(self, body: Mapping[str, Any]) -> None:
        entity = make_entity([(e["entity_type"], e["entity_name"]) for e in body["entity"]])
        value = None if body.get("remove") else float(body["value"])
        _set_or_remove(self.client_quotas, entity, body["key"], value)

    # ------------------------------------------------------------------ reads
    def partition(self, topic_id: bytes, partition_id: int) -> PartitionRegistration | None:
        topic = self.topics_by_id.get(topic_id)
        return None if topic is None else topic.partitions.get(partition_id)

    def topic_configs(self, name: str) -> dict[str, str]:
        """A topic's config overrides (a copy)."""
        return dict(self.configs.get((RESOURCE_TOPIC, name), {}))

    def broker_configs(self, name: str) -> dict[str, str]:
        """Dynamic broker configs; name "" is the cluster-wide default."""
        return dict(self.configs.get((RESOURCE_BROKER, name), {}))

    def group_configs(self, group_id: str) -> dict[str, str]:
        """The configs set on a group (GROUP resources: ``streams.session.timeout.ms`` ...)."""
        return dict(self.configs.get((RESOURCE_GROUP, group_id), {}))

    def is_active(self, broker_id: int) -> bool:
        """Unfenced and not in controlled shutdown: may lead and be in ISRs."""
        registration = self.brokers.get(broker_id)
        return registration is not None and registration.is_active

    def active_brokers(self) -> list[BrokerRegistration]:
        return [b for b in self.brokers.values() if b.is_active]

    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())

    def iter_partitions(self) -> Iterator[tuple[TopicImage, int, PartitionRegistration]]:
        for topic in self.topics.values():
            for partition_id, registration in topic.partitions.items():
                yield topic, partition_id, registration

    # ------------------------------------------------------------------ equality
    def __eq__(self, other: object) -> bool:
        """Same metadata; the offset and epoch of the last record are not compared
        (a snapshot rebuilds the content, not the history)."""
        if not isinstance(other, MetadataImage):
            return NotImplemented
        return (
            self.topics == other.topics
            and self.brokers == other.brokers
            and self.configs == other.configs
            and self.next_producer_id == other.next_producer_id
            and self.features == other.features
            and self.scram == other.scram
            and self.acls == other.acls
            and self.client_quotas == other.client_quotas
            and self.delegation_tokens == other.delegation_tokens
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"MetadataImage(topics={len(self.topics)}, partitions={self.partition_count()}, "
            f"brokers={sorted(self.brokers)}, offset={self.last_offset})"
        )


def _set_or_remove(owners: dict[Any, dict[str, Any]], owner: Any, name: str, value: Any) -> None:
    """Set ``owners[owner][name]``, or with a None value remove it (and the owner
    once it has nothing left): how ConfigRecords and ClientQuotaRecords apply."""
    if value is not None:
        owners.setdefault(owner, {})[name] = value
        return
    current = owners.get(owner)
    if current is not None:
        current.pop(name, None)
        if not current:
            del owners[owner]


def images_equal(a: MetadataImage, b: MetadataImage) -> bool:
    """Content equality including the derived indexes, for tests and the simulator:
    a difference in the indexes means one image was built wrongly."""
    return (
        a == b
        and a.brokers_to_isrs == b.brokers_to_isrs
        and a.reassigning == b.reassigning
        and a.imbalanced == b.imbalanced
    )


__all__ = [
    "NO_LEADER",
    "RESOURCE_BROKER",
    "RESOURCE_GROUP",
    "RESOURCE_TOPIC",
    "MetadataImage",
    "MetadataReplayError",
    "TopicImage",
    "images_equal",
]
