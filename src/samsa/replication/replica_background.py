"""The ReplicaManager's background work: ISR expiry, checkpoints, start and stop.

Background work, started by ``start`` (or the first ``apply_delta``): ISR
shrinking every ``replica.lag.time.max.ms / 2`` and the
``replication-offset-checkpoint`` every
``replica.high.watermark.checkpoint.interval.ms``; ``stop`` ends it, stops
the fetchers and writes the checkpoint a last time.  The producer state
snapshots a clean shutdown writes are here too: what the node does with all
its partitions at once, on a timer or at the end, apart from what one request
or one metadata batch does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from samsa.errors import KafkaError
from samsa.eventloop.cancellation import cancel_and_wait
from samsa.eventloop.loop_slices import in_slices
from samsa.replication.hw_checkpoint import write_high_watermarks
from samsa.replication.partition import Partition
from samsa.replication.replica_manager_base import ReplicaManagerBase, TopicPartition
from samsa.storage.log_dir_failure import io_errors_fail_dir

log = logging.getLogger("samsa.replication.replica_manager")


class ReplicaBackground(ReplicaManagerBase):
    """Periodic and shutdown work over every hosted partition."""

    def maybe_shrink_isrs(self, now_ms: int, partitions: Iterable[Partition] | None = None) -> int:
        """Propose ISR shrinks for every led partition (of ``partitions``) with
        lagging followers."""
        changes = 0
        for partition in list(self._partitions.values()) if partitions is None else partitions:
            if partition.maybe_shrink_isr(now_ms) is not None:
                changes += 1
        return changes

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
        await self.dir_moves.stop()
        if self._fetchers is not None:
            await self._fetchers.stop()
        if self._alter_partition is not None:
            await self._alter_partition.close()
        try:
            self.checkpoint_high_watermarks()
        except (OSError, KafkaError):
            log.exception("final high watermark checkpoint failed")
