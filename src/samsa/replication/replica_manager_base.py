"""The state every part of the ReplicaManager shares (see replica_manager.py).

Split from the manager so each file holds one concern: this base holds the
hosted partitions (loading, creating, deleting them), the parts they are
wired to (purgatory, fetchers, AlterPartition sender) and the callbacks a
Partition makes back into the manager; replica_background adds the ISR
expiry and checkpoint loops, replica_metadata the application of metadata,
and replica_manager.py the requests leaders answer and the fetches waiting
on them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import NO_LEADER
from samsa.errors import ErrorCode
from samsa.net import ChannelPool
from samsa.replication.broker_addresses import BrokerAddresses
from samsa.replication.config import ReplicationConfig
from samsa.replication.dir_moves.mover import LogDirMoves
from samsa.replication.fetcher.local_followers import LocalFollowers
from samsa.replication.fetcher.manager import ReplicaFetcherManager
from samsa.replication.hw_checkpoint import read_high_watermarks
from samsa.replication.leader.alter_partition_manager import (
    AlterPartitionManager,
    AlterPartitionSender,
)
from samsa.replication.leader.fetch_purgatory import FetchPurgatory
from samsa.replication.leader.fresh_leaderships import FreshLeaderships
from samsa.replication.leader.isr_state import LeaderAndIsr, PendingIsrChange
from samsa.replication.partition import Partition
from samsa.replication.partition_base import PartitionBase
from samsa.replication.session_partitions import SessionPartitions
from samsa.storage.log import Log
from samsa.storage.log_dirs import LogDirs
from samsa.storage.log_manager import LogManager
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.transaction_replay import load_producer_state
from samsa.storage.topic_config.log_config import LogConfig

log = logging.getLogger("samsa.replication.replica_manager")

TopicPartition = tuple[str, int]
APPLY_STEP = 200
"""Partitions made leader or follower per slice of a large metadata batch
(``apply_delta_in_steps``): a few milliseconds of the event loop each."""


class ReplicaManagerBase:
    """The partitions this broker hosts and the parts they are wired to."""

    def __init__(
        self,
        log_manager: LogManager | LogDirs,
        time_ms: Callable[[], int],
        *,
        node_id: int = NO_LEADER,
        config: ReplicationConfig | None = None,
        channels: ChannelPool | None = None,
        alter_partition: AlterPartitionSender | None = None,
        inter_broker_listener: str = "PLAINTEXT",
    ) -> None:
        self.log_manager = (
            log_manager if isinstance(log_manager, LogDirs) else LogDirs([log_manager])
        )
        self.node_id = node_id
        self.config = config or ReplicationConfig()
        self.inter_broker_listener = inter_broker_listener
        self._time_ms = time_ms
        self.fetcher_traffic = None if channels is None else channels.traffic
        self._partitions: dict[TopicPartition, Partition] = {}
        self._purgatory = FetchPurgatory()
        self.session_partitions = SessionPartitions(self._partitions, self._purgatory)
        """What the broker's fetch sessions watch (server/fetch_sessions/cache.py)."""
        self._fresh = FreshLeaderships()
        self._checkpointed: dict[TopicPartition, int] = {}
        for manager in self.log_manager.managers:  # each dir checkpoints its own
            self._checkpointed.update(read_high_watermarks(manager.data_dir))
        self._image: MetadataImage | None = None
        self._addresses = (
            None if channels is None else BrokerAddresses(channels, inter_broker_listener, node_id)
        )
        self._followers = LocalFollowers(self._partitions)
        self._fetchers = (
            None
            if channels is None
            else ReplicaFetcherManager(node_id, channels, self._followers, self.config, time_ms)
        )
        self.tiering: Any = None
        """The RemoteLogManager (``replication.tiering``) when tiered storage is on;
        None otherwise, and then no tiering code runs."""
        self._alter_partition = (
            None
            if alter_partition is None
            else AlterPartitionManager(
                node_id,
                self._broker_epoch,
                alter_partition,
                retry_backoff_ms=self.config.alter_partition_retry_backoff_ms,
            )
        )
        self._background: list[asyncio.Task[None]] = []
        self.dir_moves = LogDirMoves(
            self.log_manager,
            self._partitions,
            self._missing_code,
            pass_bytes=self.config.replica_fetch_max_bytes,
        )
        """Replicas moving between this broker's log dirs (AlterReplicaLogDirs)."""

    # ------------------------------------------------------------------ hosted partitions
    def load_existing(self) -> None:
        """Wrap every log the log manager recovered, rebuilding producer state."""
        for (topic, index), log_ in self.log_manager.all_logs().items():
            self._add(topic, index, log_)

    def _add(self, topic: str, index: int, log_: Log) -> Partition:
        partition = self._build(topic, index, log_)
        self._partitions[(topic, index)] = partition
        return partition

    def _build(self, topic: str, index: int, log_: Log) -> Partition:
        """A Partition over ``log_``, not yet hosted (see ``build_missing``)."""
        state = ProducerStateManager(log_.directory)
        load_producer_state(log_, state, log_.take_file_names_at_open())
        partition = Partition(
            topic,
            index,
            log_,
            state,
            self._time_ms,
            local_broker_id=self.node_id,
            high_watermark=self._checkpointed.get((topic, index), 0),
            replica_lag_time_max_ms=self.config.replica_lag_time_max_ms,
        )
        partition.on_append = self._purgatory.on_append
        partition.on_high_watermark = self._purgatory.on_high_watermark
        partition.on_role_change = self._wake_parked
        partition.alter_partition_sink = self._submit_alter_partition
        partition.is_replica_eligible = self._is_replica_eligible
        return partition

    def create(self, topic: str, index: int, config: dict[str, str]) -> Partition:
        existing = self._partitions.get((topic, index))
        if existing is not None:
            return existing
        log_ = self.log_manager.create_log(topic, index, LogConfig.from_dict(config))
        return self._add(topic, index, log_)

    def attach_tiering(self, tiering: Any) -> None:
        """Turn tiered storage on (before any metadata is applied)."""
        self.tiering = tiering
        self._followers.tiering = tiering

    def delete(self, topic: str, index: int) -> None:
        """Stop hosting the partition and delete its log."""
        key = (topic, index)
        if self._fetchers is not None:
            self._fetchers.remove_partitions([key])
        self.dir_moves.forget_deleted(key)
        partition = self._partitions.pop(key, None)
        if partition is not None:
            if self.tiering is not None:
                self.tiering.on_partition_deleted(partition)
            partition.stop()
            self.log_manager.delete_log(topic, index)
        self._purgatory.wake_all(key, forget=True)

    def get(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def partitions(self) -> Iterator[Partition]:
        return iter(list(self._partitions.values()))

    # ------------------------------------------------------------------ partitions' callbacks
    def _is_replica_eligible(self, broker_id: int) -> bool:
        image = self._image
        if image is None:
            return True
        registration = image.brokers.get(broker_id)
        return registration is not None and registration.is_active

    def _broker_epoch(self) -> int:
        image = self._image
        registration = None if image is None else image.brokers.get(self.node_id)
        return -1 if registration is None else registration.epoch

    def _missing_code(self, topic: str, index: int) -> ErrorCode:
        """Kafka's answer for a partition not hosted here: NOT_LEADER_OR_FOLLOWER
        when the metadata has it (it lives on other brokers), else unknown."""
        image = self._image
        if image is not None:
            known = image.topics.get(topic)
            if known is not None and index in known.partitions:
                return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    def _submit_alter_partition(self, partition: PartitionBase, change: PendingIsrChange) -> None:
        manager = self._alter_partition
        if not isinstance(partition, Partition):
            raise TypeError(f"not a Partition: {partition!r}")
        if manager is None or partition.topic_id is None:
            log.warning(
                "[%s] cannot send ISR change %s: no controller channel or topic id",
                partition.name,
                change,
            )
            return

        def on_result(result: LeaderAndIsr | ErrorCode) -> bool:
            return partition.handle_alter_partition_result(change, result, self._time_ms())

        manager.submit(partition.topic_id, partition.index, change.sent, on_result)

    @property
    def fetcher_manager(self) -> ReplicaFetcherManager | None:
        return self._fetchers

    def _wake_parked(self, partition: PartitionBase) -> None:
        self._purgatory.wake_all((partition.topic, partition.index))
