"""The moves of a broker's replicas between its log dirs, and AlterReplicaLogDirs's answers.

``alter`` is Kafka's ``ReplicaManager.alterReplicaLogDirs``, check for check
and error for error, for each partition asked:

1. a future dir name past 255 bytes: INVALID_TOPIC_EXCEPTION;
2. a dir that is not one of ``log.dirs``: LOG_DIR_NOT_FOUND; an offline one:
   KAFKA_STORAGE_ERROR;
3. a hosted partition already moving to another dir: that move is cancelled
   (its future log deleted); a partition whose log dir failed:
   KAFKA_STORAGE_ERROR;
4. the dir is remembered for the partition (Kafka's preferred log dir): one
   not hosted yet is created there when the metadata brings it;
5. a partition not hosted here: REPLICA_NOT_AVAILABLE (UNKNOWN_TOPIC_OR_PARTITION
   for a topic the metadata does not know);
6. already in that dir, or already moving there: nothing to do; else a future
   log is made there (KAFKA_STORAGE_ERROR while any dir is offline) and its
   copy task started (copy_task).

Start-up resumes every move whose future log a restart left (``resume``):
the copy goes on from the future log's end, recovered like any log.  A
partition deleted here takes its move with it; one stopped (a stray) stops
its task and keeps the files.  Runs on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.dir_moves.copy_task import MoveRunner
from samsa.replication.dir_moves.promotion import Move
from samsa.replication.partition import Partition, PartitionRole
from samsa.storage.log import Log
from samsa.storage.log_dirs import LogDirs
from samsa.storage.moves.names import future_name_too_long

log = logging.getLogger("samsa.replication.dir_moves")

__all__ = ["FutureReplica", "LogDirMoves"]

TopicPartition = tuple[str, int]
_NOT_HOSTED = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REPLICA_NOT_AVAILABLE)


class FutureReplica(NamedTuple):
    """A moving replica's future log, as DescribeLogDirs shows it."""

    log_dir: str
    topic: str
    partition: int
    size_bytes: int
    lag: int
    """Offsets the future log is behind the current one."""


class LogDirMoves:
    """The broker's moves between log dirs (see the module doc)."""

    def __init__(
        self,
        log_dirs: LogDirs,
        partitions: Mapping[TopicPartition, Partition],
        missing_code: Callable[[str, int], ErrorCode],
        *,
        pass_bytes: int = 1 << 20,
    ) -> None:
        self._dirs = log_dirs
        self._partitions = partitions
        self._missing_code = missing_code
        self._moves: dict[TopicPartition, Move] = {}
        self._tasks: dict[TopicPartition, asyncio.Task[None]] = {}
        self._lock: asyncio.Lock | None = None
        self.runner = MoveRunner(
            log_dirs,
            partitions,
            pass_bytes=pass_bytes,
            concurrent_passes=len(log_dirs.managers),
        )

    # ------------------------------------------------------------------ views
    def is_moving(self, topic: str, partition: int) -> bool:
        return (topic, partition) in self._moves

    def moving(self) -> frozenset[TopicPartition]:
        """The partitions being moved (the log cleaner leaves them alone)."""
        return frozenset(self._moves)

    def move_of(self, topic: str, partition: int) -> Move | None:
        return self._moves.get((topic, partition))

    def future_replicas(self) -> Iterator[FutureReplica]:
        """Every future log of the broker, with how far behind it is."""
        for manager in self._dirs.managers:
            for (topic, index), future in manager.futures.all().items():
                partition = self._partitions.get((topic, index))
                lag = -1 if partition is None else partition.log_end_offset - future.log_end_offset
                yield FutureReplica(str(manager.data_dir), topic, index, future.size_bytes, lag)

    def throttle(self, max_bytes_per_second: int) -> None:
        """``replica.alter.log.dirs.io.max.bytes.per.second`` (a dynamic broker
        config): what every move copies per second at most, together."""
        self.runner.quota.update(max(1, int(max_bytes_per_second)))

    # ------------------------------------------------------------------ AlterReplicaLogDirs
    async def alter(
        self, requested: Mapping[TopicPartition, str]
    ) -> dict[TopicPartition, ErrorCode]:
        """Each partition's answer to moving it to its dir (see the module doc)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        results: dict[TopicPartition, ErrorCode] = {}
        async with self._lock:  # Kafka's replicaStateChangeLock: one request at a time
            for key, path in requested.items():
                try:
                    await self._alter_one(key, path)
                    results[key] = ErrorCode.NONE
                except KafkaError as e:
                    code = ErrorCode.REPLICA_NOT_AVAILABLE if e.code in _NOT_HOSTED else e.code
                    log.warning("unable to alter the log dir of %s-%d: %s", *key, e)
                    results[key] = code
        return results

    async def _alter_one(self, key: TopicPartition, path: str) -> None:
        topic, index = key
        if future_name_too_long(topic, index):
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic name is too long.")
        target = self._dirs.manager_for_path(path)
        if target is None:
            raise KafkaError(
                ErrorCode.LOG_DIR_NOT_FOUND, f"Log dir {path} is not found in the config."
            )
        if target.offline:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"Log directory {path} is offline")
        partition = self._hosted(key)
        if partition is not None:
            if partition.log.offline:
                raise KafkaError(
                    ErrorCode.KAFKA_STORAGE_ERROR, f"Partition {topic}-{index} is offline"
                )
            found = self._dirs.future_log(topic, index)
            if found is not None and found[0] is not target:
                self.cancel(key, f"moving to {target.data_dir} instead")
        self._dirs.prefer_dir(topic, index, target)
        if partition is None:
            code = self._missing_code(topic, index)
            raise KafkaError(code, f"{topic}-{index} is not hosted on this broker")
        source = self._dirs.manager_of(topic, index)
        if source is None or source is target or key in self._tasks:
            return  # already there, or on its way
        config = partition.log.config
        future = await asyncio.to_thread(self._dirs.create_future_log, topic, index, target, config)
        if self._hosted(key) is not partition:  # deleted while the log was made
            self._dirs.remove_future_log(topic, index)
            raise KafkaError(self._missing_code(topic, index), f"{topic}-{index} went away")
        log.info("[%s-%d] moving from %s to %s", topic, index, source.data_dir, target.data_dir)
        self._start(Move(topic, index, str(target.data_dir), str(source.data_dir)), future)

    def _hosted(self, key: TopicPartition) -> Partition | None:
        partition = self._partitions.get(key)
        if partition is None or partition.role is PartitionRole.STOPPED:
            return None
        return partition

    # ------------------------------------------------------------------ tasks
    def _start(self, move: Move, future: Log) -> None:
        key = (move.topic, move.partition)
        self._moves[key] = move

        def is_current() -> bool:
            return self._moves.get(key) is move

        task = asyncio.ensure_future(self.runner.run(move, future, is_current))
        self._tasks[key] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self._tasks.get(key) is finished:
                del self._tasks[key]
            if self._moves.get(key) is move:
                del self._moves[key]
                self.runner.forget(key)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("[%s] the move failed", move.name, exc_info=finished.exception())

        task.add_done_callback(done)

    def resume(self) -> None:
        """Go on with every move a restart left a future log of (see the module doc)."""
        for manager in self._dirs.managers:
            for (topic, index), future in manager.futures.all().items():
                key = (topic, index)
                source = self._dirs.manager_of(topic, index)
                if key in self._tasks or source is None or self._hosted(key) is None:
                    continue
                log.info(
                    "[%s-%d] resuming the move from %s to %s at offset %d",
                    topic,
                    index,
                    source.data_dir,
                    manager.data_dir,
                    future.log_end_offset,
                )
                self._start(Move(topic, index, str(manager.data_dir), str(source.data_dir)), future)

    def cancel(
        self, key: TopicPartition, reason: str, *, keep_files: bool = False, notify: bool = True
    ) -> None:
        """Stop moving the partition; its future log is deleted unless ``keep_files``;
        ``notify``: a half-made assignment is put back (``on_change``)."""
        move = self._moves.pop(key, None)
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()
        self.runner.forget(key)
        if not keep_files:
            self._dirs.remove_future_log(*key)
        if move is not None:
            log.info("[%s] move to %s cancelled: %s", move.name, move.target_dir, reason)
            changed = self.runner.on_change
            if notify and move.state.maybe_inconsistent_metadata and changed is not None:
                changed()  # the metadata must name the current dir again

    def forget_deleted(self, key: TopicPartition) -> None:
        """The partition is deleted here (its future log goes with its log)."""
        if key in self._moves or key in self._tasks:
            self.cancel(key, "the partition is deleted here", keep_files=True)

    async def stop(self) -> None:
        """Stop every move (the files stay, to resume at the next start)."""
        tasks = list(self._tasks.values())
        for key in list(self._moves):
            self.cancel(key, "the broker is stopping", keep_files=True, notify=False)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.runner.wait_for_passes()
