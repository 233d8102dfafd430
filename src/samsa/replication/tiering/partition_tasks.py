"""What the remote log manager runs for one tiered partition, by its role here.

Kafka's RLMTask family, per partition:

* on every replica: the replay of its ``__remote_log_metadata`` partition
  (``MetadataTopic.load``) before anything reads the remote state;
* as leader: the copy task (``samsa.tiered.copy_task``, unless
  ``remote.log.copy.disable``) and the expiration task
  (``samsa.tiered.expiration_task``) followed by the orphan cleaner
  (``samsa.tiered.orphans``), each every
  ``remote.log.manager.task.interval.ms``;
* as follower: the highest offset the remote tier holds on its lineage,
  every interval, so its local retention may go on (Kafka's RLMFollowerTask).

``TieredPartition`` holds those tasks; a role change cancels the old ones
first (a copy in flight stops at its next await, its COPY_SEGMENT_STARTED
stays behind for the next leader, which continues from the last FINISHED
segment: no re-upload of what finished, no gap, and deletes the abandoned
copy once the orphan grace passed).

The replay runs before any of them, and is retried until it succeeds; one
that takes longer than the metadata's initialization timeout is logged as an
error saying where it is stuck and counted (``replay_timeouts``), and the
partition stays not ready (reads of its remote tier answer a retriable
error) meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from samsa.replication.tiering.metadata_topic import MetadataNotReadyError, MetadataTopic
from samsa.replication.tiering.tiered_log import PartitionTieredLog
from samsa.storage.log import wall_clock_ms
from samsa.tiered.copy_task import RemoteLogCopyTask
from samsa.tiered.expiration_task import RemoteLogExpirationTask
from samsa.tiered.lineage import highest_remote_offset
from samsa.tiered.metadata.model import RemoteLogSegmentId, TopicIdPartition
from samsa.tiered.orphans import OrphanCleaner
from samsa.tiered.quota import RateQuota
from samsa.tiered.segment_objects import RemoteStorageManager
from samsa.tiered.store.base import RetriableRemoteStorageError

__all__ = ["FOLLOWER", "LEADER", "TieredPartition"]

log = logging.getLogger(__name__)

LEADER, FOLLOWER = "leader", "follower"


class TieredPartition:
    """One tiered partition hosted here, and the tasks of its role."""

    def __init__(
        self,
        tiered_log: PartitionTieredLog,
        metadata: MetadataTopic,
        storage: RemoteStorageManager,
        *,
        broker_id: int,
        interval_s: Callable[[], float],
        copy_quota: RateQuota,
        orphan_grace_ms: Callable[[], int],
    ) -> None:
        self.log = tiered_log
        self.metadata = metadata
        self.storage = storage
        self.broker_id = broker_id
        self._interval_s = interval_s
        self._copy_quota = copy_quota
        self._orphan_grace_ms = orphan_grace_ms
        self.role: str | None = None
        self.copy_enabled = False
        self.copy: RemoteLogCopyTask | None = None
        self.expiration: RemoteLogExpirationTask | None = None
        self.orphans: OrphanCleaner | None = None
        self.replay_timeouts = 0
        """Loads of this partition's remote metadata that timed out."""
        self._tasks: list[asyncio.Task[None]] = []
        self._cancelled: list[asyncio.Task[None]] = []
        self.loaded = asyncio.ensure_future(self._load())

    @property
    def tip(self) -> TopicIdPartition:
        return self.log.topic_id_partition

    @property
    def ready(self) -> bool:
        return (
            self.loaded.done()
            and not self.loaded.cancelled()
            and self.metadata.manager.is_ready(self.tip)
        )

    async def _load(self) -> None:
        while True:
            try:
                await self.metadata.load(self.tip)
                return
            except asyncio.CancelledError:
                raise
            except MetadataNotReadyError as exc:
                self.replay_timeouts += 1
                log.error("[%s] %s; trying again", self.tip, exc)
            except Exception as exc:
                log.warning("[%s] replaying its remote log metadata failed: %s", self.tip, exc)
            await asyncio.sleep(self.metadata.settings.initialization_retry_ms / 1000)

    # ------------------------------------------------------------------ roles
    def become(self, role: str, *, copy_enabled: bool) -> None:
        """Run the tasks of ``role`` (no-op when they already run)."""
        if role == self.role and copy_enabled == self.copy_enabled:
            return
        self._cancel_tasks()
        self.role, self.copy_enabled = role, copy_enabled
        if role == LEADER:
            expiration_being_copied = self._being_copied
            if copy_enabled:
                self.copy = RemoteLogCopyTask(
                    self.log,
                    self.metadata.manager,
                    self.storage,
                    broker_id=self.broker_id,
                    wall_clock_ms=wall_clock_ms,
                    quota=self._copy_quota,
                )
                self._spawn(self._copy_loop(self.copy))
            self.expiration = RemoteLogExpirationTask(
                self.log,
                self.metadata.manager,
                self.storage,
                broker_id=self.broker_id,
                wall_clock_ms=wall_clock_ms,
                being_copied=expiration_being_copied,
            )
            self.orphans = OrphanCleaner(
                self.tip,
                self.metadata.manager,
                self.storage,
                delete_segment=self.expiration.delete_segment,
                being_copied=expiration_being_copied,
                grace_ms=self._orphan_grace_ms,
                monotonic_ms=_monotonic_ms,
                wall_clock_ms=wall_clock_ms,
            )
            self._spawn(self._periodic("expiration", self._expire))
        else:
            self._spawn(self._periodic("follower", self._follow))

    def _being_copied(self) -> frozenset[RemoteLogSegmentId]:
        copy = self.copy
        return frozenset(copy.being_copied) if copy is not None else frozenset()

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        self._tasks.append(asyncio.ensure_future(coroutine))

    def stop_role_tasks(self) -> None:
        """Cancel the copy, expiration or follower runs (the replay goes on)."""
        self._cancel_tasks()

    def _cancel_tasks(self) -> None:
        if self.copy is not None:
            self.copy.cancel()
        if self.expiration is not None:
            self.expiration.cancel()
        if self.orphans is not None:
            self.orphans.cancel()
        for task in self._tasks:
            task.cancel()
        self._cancelled = [t for t in (*self._cancelled, *self._tasks) if not t.done()]
        self._tasks = []
        self.copy = None
        self.expiration = None
        self.orphans = None
        self.role = None

    async def stop(self) -> None:
        """Cancel everything and wait for it (the partition left this broker)."""
        self._cancel_tasks()
        self.loaded.cancel()
        tasks = [*self._cancelled, self.loaded]
        self._cancelled = []
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ------------------------------------------------------------------ the runs
    async def _copy_loop(self, copy: RemoteLogCopyTask) -> None:
        await asyncio.shield(self.loaded)
        name = self.tip
        while not copy.cancelled:
            try:
                await copy.run_once()
            except RetriableRemoteStorageError as exc:
                log.info("[%s] copy will be retried: %s", name, exc)
            except asyncio.CancelledError:
                raise
            except Exception:
                if not copy.cancelled:
                    log.warning("[%s] copy failed; it runs again", name, exc_info=True)
            await asyncio.sleep(self._interval_s())

    async def _periodic(self, what: str, run: Callable[[], Awaitable[None]]) -> None:
        await asyncio.shield(self.loaded)
        while True:
            try:
                await run()
            except RetriableRemoteStorageError as exc:
                log.info("[%s] %s will be retried: %s", self.tip, what, exc)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("[%s] %s failed; it runs again", self.tip, what, exc_info=True)
            await asyncio.sleep(self._interval_s())

    async def _expire(self) -> None:
        expiration, orphans = self.expiration, self.orphans
        if expiration is not None:
            await expiration.run_once()
        if orphans is not None:
            await orphans.run_once()

    async def _follow(self) -> None:
        """Kafka's RLMFollowerTask: the highest remote offset on this replica's
        lineage lets its local retention delete what the leader copied."""
        cache = self.metadata.manager.cache(self.tip)
        if cache is None or not self.metadata.manager.is_ready(self.tip):
            return
        found = highest_remote_offset(
            cache, self.log.leader_epoch_entries(), self.log.log_end_offset()
        )
        if found.offset >= 0:
            self.log.update_highest_offset_in_remote_storage(found.offset)

    def copied_offset(self) -> int:
        """The highest offset in the remote tier as this replica knows it (-1: none)."""
        return self.log.partition.log.highest_offset_in_remote_storage


def _monotonic_ms() -> int:
    return int(time.monotonic() * 1000)
