"""The broker following the committed metadata (Kafka's BrokerMetadataPublisher).

What the broker hosts follows the metadata image, never the other way round:
the logs of a partition are created when a committed record makes this node
one of its replicas, and deleted when the topic is deleted or the replica
moved away.  Each committed batch (``on_delta``) also brings topic and dynamic
broker configs, client quotas, and the leaderships the group and transaction
coordinators follow.  Until the broker is first unfenced its image is still
catching up: nothing is applied then, and ``wait_ready`` applies the whole
image once (logs on disk the image does not know, a topic deleted while this
node was down, are removed only then: an incomplete image must not delete
anything).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Iterator
from functools import partial

from samsa.controller.image.metadata_delta import LocalReplicaChanges, MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.server.broker_base import BrokerBase, wall_ms
from samsa.server.metadata.heap import freeze_start_up
from samsa.storage.topic_config.log_config import LogConfig

log = logging.getLogger("samsa.server")

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
NEW_PARTITIONS_OFF_LOOP = 20
"""A committed batch bringing this many new partitions here creates their logs in
a worker thread first (see metadata_applier); fewer are created inline."""


class BrokerMetadataPublisher(BrokerBase):
    """The loader's publisher on a broker: committed batches and images applied."""

    async def wait_ready(self) -> None:
        """Registered, caught up with the metadata and unfenced."""
        assert self.lifecycle is not None
        await self.lifecycle.unfenced.wait()
        self._note_own_registration()
        try:
            # The heartbeat says unfenced once the controller committed it; the
            # record reaches this node's image a moment later (bounded wait).
            await asyncio.wait_for(self._listed_unfenced.wait(), 5.0)
        except TimeoutError:
            log.warning("broker %d: unfenced, but not yet so in its metadata", self.node_id)
        self._reconciled = True
        self.replicas.apply_image(self.image, wall_ms())
        self._assign_replicas_to_dirs()
        self._apply_dynamic_broker_configs()
        if "__consumer_offsets" in self.image.topics:
            self.ensure_group_coordinator()
        if "__transaction_state" in self.image.topics:
            self.ensure_transaction_coordinator()
        if self.registry is not None:
            self.registry.begin()  # replays _schemas, then answers
        freeze_start_up()  # what start-up built lives on: keep the collector off it

    def _note_own_registration(self) -> None:
        registration = self.image.brokers.get(self.node_id)
        if registration is not None and not registration.fenced:
            self._listed_unfenced.set()

    def on_delta(self, delta: MetadataDelta) -> None:
        """Apply one committed batch: replicas made leaders or followers (or deleted),
        topic configs, tombstones for a deleted topic's committed offsets, and the
        group coordinator following the ``__consumer_offsets`` leaderships.
        Before the first unfencing the image is still catching up: the whole
        image is applied once then (``wait_ready``)."""
        if delta.client_quotas_changed:
            self.client_quotas.update(self.image.client_quotas)
        if not self._reconciled:
            self._note_own_registration()
            if self.lifecycle is not None:
                self.lifecycle.note_metadata_applied(self.loader.applied_offset - 1)
            return
        image = self.image
        changes = delta.local_changes(self.node_id)
        prepare = None
        if len(self.replicas.missing(changes)) >= NEW_PARTITIONS_OFF_LOOP:
            prepare = partial(self.replicas.build_missing, changes, image)
        self.metadata_applier.submit(partial(self._apply_delta, delta, image, changes), prepare)

    def _apply_delta(
        self,
        delta: MetadataDelta,
        image: MetadataImage,
        changes: LocalReplicaChanges,
        built: object,
    ) -> Iterator[None]:
        """``on_delta``'s work on the loop, after the new logs were made (if many),
        a slice of partitions at a time (see metadata_applier)."""
        yield from self.replicas.apply_delta_in_steps(
            delta,
            image,
            wall_ms(),
            built=built if isinstance(built, dict) else None,
            changes=changes,
        )
        self._assign_replicas_to_dirs()
        metrics = self.metrics
        if metrics is not None:
            for change in delta.partition_changes():
                old, new = change.old, change.new
                if old is not None and new.leader == self.node_id and old.leader == self.node_id:
                    metrics.on_isr_change(len(old.isr), len(new.isr))
        changed_configs = delta.changed_configs
        if changed_configs & {(BROKER_RESOURCE, ""), (BROKER_RESOURCE, str(self.node_id))}:
            self._apply_dynamic_broker_configs()
        else:
            self._apply_topic_configs(
                name
                for resource_type, name in changed_configs
                if resource_type == TOPIC_RESOURCE and name in self.image.topics
            )
        for topic in delta.deleted_topics.values():
            self.topic_deleted(topic.name, len(topic.partitions))
        if self.groups is not None:
            from samsa.server.coordinators.group_wiring import follow_leadership

            follow_leadership(self)
        elif "__consumer_offsets" in image.topics:
            # Created through another broker: load the partitions led here now, as
            # Kafka's coordinator does on election, not at this broker's first group
            # request (which members then met with LOAD_IN_PROGRESS, one backing off
            # while another formed the group alone: an extra rebalance).
            self.ensure_group_coordinator()
        if self.transactions is not None:
            from samsa.server.coordinators import txn_wiring

            txn_wiring.follow_leadership(self)
        elif "__transaction_state" in image.topics:
            self.ensure_transaction_coordinator()

    def on_image(self, image: MetadataImage) -> None:
        self.client_quotas.update(image.client_quotas)
        if self._reconciled:
            self.metadata_applier.submit(lambda _: self._apply_image(image))

    def _apply_image(self, image: MetadataImage) -> None:
        self.replicas.apply_image(image, wall_ms())
        self._assign_replicas_to_dirs()
        self._apply_dynamic_broker_configs()

    def _assign_replicas_to_dirs(self) -> None:
        if self.directory_assigner is not None:
            self.directory_assigner.maybe_assign()

    def _apply_dynamic_broker_configs(self) -> None:
        """Kafka's DynamicLogConfig and LogCleaner reconfiguration: new topic
        defaults for every log (and the logs still to come), the cleaner's pace."""
        self.log_manager.default_config = LogConfig.from_dict(self.dynamic_config.topic_defaults())
        self._apply_topic_configs(self.image.topics)
        if self.cleaner_task is not None:
            self.cleaner_task.backoff_ms = self.dynamic_config["log.cleaner.backoff.ms"]
        self.replicas.dir_moves.throttle(
            self.dynamic_config["replica.alter.log.dirs.io.max.bytes.per.second"]
        )
        if self.tiering is not None:
            self.tiering.reconfigure(self.dynamic_config.__getitem__)
        self.node.reload_tls(
            {**self.image.broker_configs(""), **self.image.broker_configs(str(self.node_id))}
        )

    def _apply_topic_configs(self, topics: Iterable[str]) -> None:
        for name in topics:
            self.log_manager.update_config(name, LogConfig.from_dict(self.topic_config(name)))
        if self.tiering is not None:
            self.tiering.reconcile()  # remote.storage.enable and friends may have changed

    def topic_deleted(self, name: str, partitions: int) -> None:
        """Committed offsets of a deleted topic are tombstoned, as Kafka does."""
        if self.groups is not None:
            gone = {(name, index) for index in range(partitions)}
            task = asyncio.ensure_future(self.groups.on_partitions_deleted(gone))
            self._tasks.append(task)
