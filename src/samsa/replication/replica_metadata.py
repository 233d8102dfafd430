"""Applying metadata to the hosted partitions: roles, fetchers, new partitions.

Kafka's ``applyDelta``: ``apply_delta`` takes each committed metadata batch's
local changes: partitions no longer hosted are stopped and their logs
deleted, then leaders are made (their fetchers stopped first), then
followers, whose fetchers (re)start from the leader's address on
``inter_broker_listener`` whenever the leader or its epoch changes.
``apply_image`` does the same for a whole image (a node starting from a
snapshot).  Before any metadata, partitions are STANDALONE: today's
single-node broker, unchanged.  A large batch is applied in slices
(``apply_delta_in_steps``), its new partitions' files made off the loop
(``build_missing``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping

from samsa.controller.image.metadata_delta import LocalReplicaChanges, MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import NO_LEADER
from samsa.replication.fetcher.types import FetchStatus, InitialFetchState
from samsa.replication.image_changes import local_changes_from_image
from samsa.replication.partition import Partition, PartitionRole
from samsa.replication.replica_background import ReplicaBackground
from samsa.replication.replica_manager_base import TopicPartition
from samsa.replication.role_log import log_role_changes
from samsa.storage.log import Log
from samsa.storage.topic_config.log_config import LogConfig

log = logging.getLogger("samsa.replication.replica_manager")

APPLY_STEP = 200
"""Partitions made leader or follower per slice of a large metadata batch
(``apply_delta_in_steps``): a few milliseconds of the event loop each."""


class ReplicaMetadata(ReplicaBackground):
    """Role changes of the hosted partitions as the metadata commits them."""

    # ------------------------------------------------------------------ metadata
    def apply_delta(self, delta: MetadataDelta, image: MetadataImage, now_ms: int) -> None:
        """Apply one committed batch (``image`` is after it)."""
        for _ in self.apply_delta_in_steps(delta, image, now_ms):
            pass

    def apply_delta_in_steps(
        self,
        delta: MetadataDelta,
        image: MetadataImage,
        now_ms: int,
        built: Mapping[TopicPartition, Partition] | None = None,
        step: int = APPLY_STEP,
        changes: LocalReplicaChanges | None = None,
    ) -> Iterator[None]:
        """``apply_delta`` ``step`` partitions at a time, yielding between slices so
        the caller can let the event loop serve requests: making a thousand
        partitions leaders or followers at once held the loop ~100 ms.
        ``built`` holds partitions ``build_missing`` made, hosted slice by slice
        as their turn comes (until then requests for them are answered as for
        a partition not here yet, which clients retry).  Yields between slices
        only: a batch of one slice is applied by the first ``next``."""
        self._image = image
        if self._addresses is not None:
            self._addresses.update(image, delta.changed_brokers)
        if changes is None:
            changes = delta.local_changes(self.node_id)
        for i, part in enumerate(changes.slices(step)):
            if i:
                yield
            if built:
                self.adopt(built[key] for key in part.placed() if key in built)
            self.apply_local_changes(part, image, now_ms)

    def apply_image(self, image: MetadataImage, now_ms: int) -> None:
        """Take a whole image (the node caught up with the metadata at start) as if
        every partition naming this node had just changed.  A local log the image
        does not place here (its topic was deleted, or the replica moved, while
        this broker was down) is a stray: stopped -- it serves nothing -- but
        its files are kept for the operator, where Kafka renames them
        ``-stray``."""
        self._image = image
        if self._addresses is not None:
            self._addresses.update(image, image.brokers)
        changes = local_changes_from_image(image, self.node_id)
        for key, partition in list(self._partitions.items()):
            placed = key in changes.leaders or key in changes.followers
            if not placed and partition.role is not PartitionRole.STOPPED:
                log.warning("[%s-%d] not a replica here in the metadata: stopped", *key)
                if self._fetchers is not None:
                    self._fetchers.remove_partitions([key])
                partition.stop()
        self.apply_local_changes(changes, image, now_ms)

    def apply_local_changes(
        self, changes: LocalReplicaChanges, image: MetadataImage, now_ms: int
    ) -> None:
        """Kafka's ``applyDelta``: deletes, then leaders, then followers."""
        self._image = image
        self.start()
        fetchers = self._fetchers
        for topic, index in sorted(changes.deletes):
            log.info("[%s-%d] no longer hosted here: deleting", topic, index)
            self.delete(topic, index)
        if fetchers is not None and changes.leaders:
            fetchers.remove_partitions(changes.leaders)
        woken: set[int] = set()
        taken_over_at = self._time_ms()  # the clock follower_must_refetch reads
        new_leaders: list[Partition] = []
        for key, info in changes.leaders.items():
            partition = self._get_or_create(key, image)
            partition.topic_id = info.topic_id
            if partition.make_leader(info.registration, now_ms):
                new_leaders.append(partition)
                followers = [r for r in info.registration.replicas if r != self.node_id]
                self._fresh.record(key, followers, taken_over_at)
                woken.update(followers)
        log_role_changes("leader", new_leaders)
        for follower in woken:
            self._purgatory.wake_follower(follower)
        to_fetch: dict[TopicPartition, InitialFetchState] = {}
        new_followers: list[Partition] = []
        for key, info in changes.followers.items():
            partition = self._get_or_create(key, image)
            partition.topic_id = info.topic_id
            restart = partition.make_follower(info.registration, now_ms)
            if restart:
                new_followers.append(partition)
            leader = info.registration.leader
            if fetchers is None:
                continue
            if leader == NO_LEADER or self._addresses is None or not self._addresses.known(leader):
                fetchers.remove_partitions([key])
                continue
            if partition.log.offline:
                # Its dir failed: a fetch could only fail to append, and one that
                # found nothing new would look caught up and rejoin the ISR.
                fetchers.remove_partitions([key])
                continue
            if restart or self._needs_fetcher(key):
                to_fetch[key] = InitialFetchState(
                    leader, partition.leader_epoch, partition.high_watermark
                )
        log_role_changes("follower", new_followers)
        if fetchers is not None and to_fetch:
            fetchers.add_partitions(to_fetch)
        if self.tiering is not None:
            self.tiering.reconcile()

    def _get_or_create(self, key: TopicPartition, image: MetadataImage) -> Partition:
        partition = self._partitions.get(key)
        if partition is not None:
            return partition
        topic, index = key
        return self._add(topic, index, self._create_log(topic, index, image))

    def _create_log(self, topic: str, index: int, image: MetadataImage) -> Log:
        config = LogConfig.from_dict(
            image.topic_configs(topic), base=self.log_manager.default_config
        )
        return self.log_manager.create_log(topic, index, config)

    # ------------------------------------------------------------------ many new partitions
    def missing(self, changes: LocalReplicaChanges) -> dict[TopicPartition, int]:
        """Partitions ``changes`` place here that are not hosted yet: each with
        the leader epoch it starts with here, or -1 when it is followed."""
        out = {
            key: info.registration.leader_epoch
            for key, info in changes.leaders.items()
            if key not in self._partitions
        }
        out.update((key, -1) for key in changes.followers if key not in self._partitions)
        return out

    def build_missing(
        self, changes: LocalReplicaChanges, image: MetadataImage
    ) -> dict[TopicPartition, Partition]:
        """Create the logs of the partitions ``changes`` bring here, and their
        Partitions, without hosting them yet (``adopt`` does, on the loop).

        Made for a worker thread: the file work of a thousand new partitions
        (directories, segment files, the leader's epoch entry, which makes
        ``make_leader`` on the loop write nothing) stays off the event loop.
        The log manager creates logs under its lock; this only reads
        ``_partitions``."""
        built = {}
        for (topic, index), epoch in self.missing(changes).items():
            log_ = self._create_log(topic, index, image)
            if epoch >= 0:
                log_.maybe_assign_epoch_start_offset(epoch, log_.log_end_offset)
            built[(topic, index)] = self._build(topic, index, log_)
        return built

    def adopt(self, partitions: Iterable[Partition]) -> None:
        """Host partitions ``build_missing`` made (those hosted meanwhile are kept)."""
        for partition in partitions:
            self._partitions.setdefault((partition.topic, partition.index), partition)

    def _needs_fetcher(self, key: TopicPartition) -> bool:
        fetchers = self._fetchers
        if fetchers is None:
            return False
        fetcher = fetchers.fetcher_for(key)
        if fetcher is None:
            return True
        state = fetcher.state.state(key)
        return state is None or state.status is FetchStatus.FAILED
