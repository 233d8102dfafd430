"""The partitions this broker hosts, their roles, fetchers, and the fetches waiting on them.

Kafka's ReplicaManager, without the request handling (the server's handlers
call in):

* Metadata: ``apply_delta`` takes each committed metadata batch's local
  changes (Kafka's ``applyDelta``): partitions no longer hosted are stopped
  and their logs deleted, then leaders are made (their fetchers stopped
  first), then followers, whose fetchers (re)start from the leader's address
  on ``inter_broker_listener`` whenever the leader or its epoch changes.
  ``apply_image`` does the same for a whole image (a node starting from a
  snapshot).  Before any metadata, partitions are STANDALONE: today's
  single-node broker, unchanged.
* Waiting fetches: a fetch that cannot be answered yet parks a FetchWaiter on
  its partitions.  Appends wake followers' fetches and the standalone
  partition's consumers; on a replicated leader consumers wake when the high
  watermark moves, since they read only below it.  A role change wakes every
  fetch parked on the partition so it re-reads and gets the new error.
* Background work, started by ``start`` (or the first ``apply_delta``): ISR
  shrinking every ``replica.lag.time.max.ms / 2`` and the
  ``replication-offset-checkpoint`` every
  ``replica.high.watermark.checkpoint.interval.ms``; ``stop`` ends it, stops
  the fetchers and writes the checkpoint a last time.

Everything runs on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from samsa.cancellation import cancel_and_wait
from samsa.controller.metadata_delta import LocalReplicaChanges, MetadataDelta
from samsa.controller.metadata_image import MetadataImage
from samsa.controller.registrations import NO_LEADER
from samsa.errors import ErrorCode, KafkaError
from samsa.loop_slices import in_slices
from samsa.net import ChannelPool
from samsa.replication.alter_partition_manager import AlterPartitionManager, AlterPartitionSender
from samsa.replication.broker_addresses import BrokerAddresses
from samsa.replication.config import ReplicationConfig
from samsa.replication.fetch_purgatory import FetchPurgatory
from samsa.replication.fetch_responses import (
    epoch_end_offset_response,
    fetch_error,
    fetch_partition_response,
)
from samsa.replication.fetch_waiter import FetchWaiter
from samsa.replication.fetcher_manager import ReplicaFetcherManager
from samsa.replication.fetcher_types import FetchStatus, InitialFetchState
from samsa.replication.fresh_leaderships import FreshLeaderships
from samsa.replication.hw_checkpoint import read_high_watermarks, write_high_watermarks
from samsa.replication.image_changes import local_changes_from_image
from samsa.replication.isr_state import LeaderAndIsr, PendingIsrChange
from samsa.replication.local_followers import LocalFollowers
from samsa.replication.partition import Partition, PartitionRole
from samsa.replication.partition_base import PartitionBase
from samsa.replication.role_log import log_role_changes
from samsa.replication.session_partitions import SessionPartitions
from samsa.storage.log import Log
from samsa.storage.log_config import LogConfig
from samsa.storage.log_dir_failure import io_errors_fail_dir
from samsa.storage.log_dirs import LogDirs
from samsa.storage.log_manager import LogManager
from samsa.storage.producer_state import ProducerStateManager
from samsa.storage.transaction_replay import load_producer_state

log = logging.getLogger(__name__)

__all__ = ["FetchWaiter", "ReplicaManager", "TopicPartition"]

TopicPartition = tuple[str, int]
APPLY_STEP = 200
"""Partitions made leader or follower per slice of a large metadata batch
(``apply_delta_in_steps``): a few milliseconds of the event loop each."""


class ReplicaManager:
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
        """What the broker's fetch sessions watch (server/fetch_sessions.py)."""
        self._fresh = FreshLeaderships()
        self._checkpointed: dict[TopicPartition, int] = {}
        for manager in self.log_manager.managers:  # each dir checkpoints its own
            self._checkpointed.update(read_high_watermarks(manager.data_dir))
        self._image: MetadataImage | None = None
        self._addresses = (
            None if channels is None else BrokerAddresses(channels, inter_broker_listener, node_id)
        )
        self._fetchers = (
            None
            if channels is None
            else ReplicaFetcherManager(
                node_id, channels, LocalFollowers(self._partitions), self.config, time_ms
            )
        )
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

    def delete(self, topic: str, index: int) -> None:
        """Stop hosting the partition and delete its log."""
        key = (topic, index)
        if self._fetchers is not None:
            self._fetchers.remove_partitions([key])
        partition = self._partitions.pop(key, None)
        if partition is not None:
            partition.stop()
            self.log_manager.delete_log(topic, index)
        self._purgatory.wake_all(key, forget=True)

    def get(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def partitions(self) -> Iterator[Partition]:
        return iter(list(self._partitions.values()))

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

    # ------------------------------------------------------------------ leader-side requests
    def _missing_code(self, topic: str, index: int) -> ErrorCode:
        """Kafka's answer for a partition not hosted here: NOT_LEADER_OR_FOLLOWER
        when the metadata has it (it lives on other brokers), else unknown."""
        image = self._image
        if image is not None:
            known = image.topics.get(topic)
            if known is not None and index in known.partitions:
                return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    def leader_partition(self, topic: str, index: int, current_leader_epoch: int = -1) -> Partition:
        """The partition if this broker may serve clients for it at that epoch;
        raises KafkaError with the code to answer otherwise."""
        partition = self._partitions.get((topic, index))
        if partition is None:
            raise KafkaError(self._missing_code(topic, index), f"{topic}-{index} is not here")
        partition.check_leader_epoch(current_leader_epoch)
        return partition

    def read_fetch_partition(
        self,
        topic: str,
        request_partition: Mapping[str, Any],
        *,
        replica_id: int,
        max_bytes: int,
        min_one: bool,
        now_ms: int,
        update_fetch_state: bool = True,
        read_committed: bool = False,
    ) -> dict[str, Any]:
        """One partition's entry of a Fetch response (see fetch_responses)."""
        index = request_partition["partition"]
        partition = self._partitions.get((topic, index))
        if partition is None:
            return fetch_error(index, self._missing_code(topic, index))
        return fetch_partition_response(
            partition,
            request_partition,
            replica_id=replica_id,
            max_bytes=max_bytes,
            min_one=min_one,
            now_ms=now_ms,
            update_fetch_state=update_fetch_state,
            read_committed=read_committed,
        )

    def offset_for_leader_epoch(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A whole OffsetForLeaderEpoch response body (v2-4), for followers and clients."""
        topics = []
        for topic in request.get("topics") or ():
            name = topic["topic"]
            partitions = [
                epoch_end_offset_response(
                    self._partitions.get((name, p["partition"])),
                    p,
                    self._missing_code(name, p["partition"]),
                )
                for p in topic.get("partitions") or ()
            ]
            topics.append({"topic": name, "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    def maybe_shrink_isrs(self, now_ms: int, partitions: Iterable[Partition] | None = None) -> int:
        """Propose ISR shrinks for every led partition (of ``partitions``) with
        lagging followers."""
        changes = 0
        for partition in list(self._partitions.values()) if partitions is None else partitions:
            if partition.maybe_shrink_isr(now_ms) is not None:
                changes += 1
        return changes

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

    # ------------------------------------------------------------------ waiting fetches
    def park(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        self._purgatory.park(keys, waiter)

    def unpark(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        self._purgatory.unpark(keys, waiter)

    def follower_must_refetch(
        self, replica_id: int, keys: Iterable[TopicPartition], max_wait_ms: int
    ) -> bool:
        """Whether a follower's Fetch leaves out a partition it must now fetch from
        here, taken over within its max wait: answered at once, not parked, so the
        next Fetch names it (see fresh_leaderships)."""
        return self._fresh.omitted_by(replica_id, keys, self._time_ms(), max_wait_ms)

    def parked_fetches(self) -> int:
        """Fetches waiting for data (Kafka's fetch purgatory size)."""
        return self._purgatory.parked()

    # ------------------------------------------------------------------ lifecycle
    def _wake_parked(self, partition: PartitionBase) -> None:
        self._purgatory.wake_all((partition.topic, partition.index))

    def high_watermark_of(self, key: tuple[str, int]) -> int | None:
        """The partition's high watermark (retention's bound), if it is hosted here."""
        partition = self._partitions.get(key)
        return None if partition is None else partition.high_watermark

    def first_open_transaction_offset(self, key: tuple[str, int]) -> int | None:
        """Where the partition's oldest open transaction starts (the cleaner's bound);
        safe to call from the cleaner thread."""
        partition = self._partitions.get(key)
        return None if partition is None else partition.producer_state.first_open_offset()

    def snapshot_producer_state(self) -> None:
        """Snapshot each partition's producers at its log end, unless no snapshot
        would be newer than the last (Kafka's rule: an empty or idle partition's
        shutdown writes, and fsyncs, nothing)."""
        for partition in self._partitions.values():
            manager = self.log_manager.manager_of(partition.topic, partition.index)
            if manager is None or manager.offline:
                continue  # nothing more is written to a failed dir; recovery rebuilds it
            state, end = partition.producer_state, partition.log.log_end_offset
            if end > (state.latest_snapshot_offset() or 0):
                state.take_snapshot(end)

    def high_watermarks(self) -> dict[TopicPartition, int]:
        return {key: p.high_watermark for key, p in self._partitions.items()}

    def checkpoint_high_watermarks(self) -> None:
        """Write ``replication-offset-checkpoint`` now (blocking: fsync)."""
        self._write_high_watermarks(self.high_watermarks())

    def _write_high_watermarks(self, marks: dict[TopicPartition, int]) -> None:
        """Each dir's file holds the marks of its own partitions (as Kafka's); an
        I/O error takes that dir offline, as one of a log would."""
        for manager in self.log_manager.managers:
            if manager.offline:
                continue
            held = manager.all_logs()
            ours = {key: mark for key, mark in marks.items() if key in held}
            with io_errors_fail_dir(manager.report_io_error, "writing high watermarks"):
                write_high_watermarks(manager.data_dir, ours)

    def start(self) -> None:
        """Start the ISR expiry and checkpoint loops (idempotent).  Must run on the
        event loop, as ``apply_delta`` (which calls it) must."""
        if self._background:
            return
        self._background = [
            asyncio.ensure_future(self._isr_expiry_loop()),
            asyncio.ensure_future(self._checkpoint_loop()),
        ]

    async def _isr_expiry_loop(self) -> None:
        interval = max(self.config.replica_lag_time_max_ms // 2, 1) / 1000
        while True:
            await asyncio.sleep(interval)
            async for part in in_slices(list(self._partitions.values())):
                try:
                    self.maybe_shrink_isrs(self._time_ms(), part)
                except Exception:
                    log.exception("ISR expiry pass failed")

    async def _checkpoint_loop(self) -> None:
        interval = max(self.config.replica_high_watermark_checkpoint_interval_ms, 1) / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                marks: dict[TopicPartition, int] = {}
                async for part in in_slices(list(self._partitions.items())):
                    marks.update((key, p.high_watermark) for key, p in part)
                await asyncio.to_thread(self._write_high_watermarks, marks)
            except Exception:
                log.exception("high watermark checkpoint failed")

    async def stop(self) -> None:
        """Stop fetchers and background work, then checkpoint the watermarks."""
        tasks, self._background = self._background, []
        await cancel_and_wait(tasks)
        if self._fetchers is not None:
            await self._fetchers.stop()
        if self._alter_partition is not None:
            await self._alter_partition.close()
        try:
            self.checkpoint_high_watermarks()
        except (OSError, KafkaError):
            log.exception("final high watermark checkpoint failed")
