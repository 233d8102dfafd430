"""The task that carries one move through: copy passes, the controller, the swap.

One asyncio task per moving partition (Kafka runs the moves in
``num.replica.alter.log.dirs.threads`` fetcher threads; here at most as many
copy passes as the broker has log dirs run at once, each in a worker thread).
Between passes the task asks ``promotion.next_step`` what to do, on the event
loop, where every append happens:

* COPY: another pass, after the wait the byte-rate quota asks for
  (``replica.alter.log.dirs.io.max.bytes.per.second``);
* ASSIGN: send AssignReplicasToDirs for the target dir (QUEUED), passes going
  on; an answer makes the move ACCEPTED, a failure sends again later;
* SWAP: copy the last few batches on the loop (so no append can land between
  the check and the swap), and if the future log then holds exactly what the
  current one does, swap them (storage/moves/swap) and point the partition at
  the new log: its next append, read or truncation is the new log's.

A pass that fails (the current log truncated under it, an I/O error) is
retried after a backoff; a failed dir ends the move (the future log in it
went offline with the dir, or the current log did, and Kafka stops such a
move too).  The task ends with the swap, or when the partition is no longer
hosted here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from samsa.errors import KafkaError
from samsa.replication.dir_moves.copier import copy_batches, copy_pass, facts, needs_preparing
from samsa.replication.dir_moves.promotion import (
    Move,
    ReassignmentState,
    Step,
    caught_up,
    next_step,
)
from samsa.replication.partition import Partition, PartitionRole
from samsa.storage.files.atomic_file import fsync_dir
from samsa.storage.log import Log
from samsa.storage.log_dirs import LogDirs
from samsa.storage.moves.swap import SwapError, replace_current_with_future
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.transaction_replay import load_producer_state
from samsa.tiered.quota import UNLIMITED, RateQuota

log = logging.getLogger("samsa.replication.dir_moves")

__all__ = ["AssignDir", "MoveRunner"]

AssignDir = Callable[[bytes, int, str], Awaitable[bool]]
"""(topic id, partition, log dir) -> whether the controller recorded the dir."""

FINAL_COPY_BYTES = 256 * 1024
"""At most what the last step copies on the event loop before a swap."""
RETRY_BACKOFF_S = 0.5
MAX_BACKOFF_S = 5.0
ANSWER_WAIT_S = 1.0
TopicPartition = tuple[str, int]


def _monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def load_future_state(future: Log) -> ProducerStateManager:
    """The producer state of the future log's batches (blocking): what the
    copy replays each appended batch into, as a follower's append does."""
    state = ProducerStateManager(future.directory)
    load_producer_state(future, state, future.take_file_names_at_open())
    return state


class MoveRunner:
    """What every move's task shares: the quota, the copy slots, the controller."""

    def __init__(
        self,
        log_dirs: LogDirs,
        partitions: Mapping[TopicPartition, Partition],
        *,
        pass_bytes: int,
        concurrent_passes: int,
    ) -> None:
        self._dirs = log_dirs
        self._partitions = partitions
        self.pass_bytes = pass_bytes
        self.quota = RateQuota(UNLIMITED)
        """``replica.alter.log.dirs.io.max.bytes.per.second``, over every move."""
        self._concurrent = max(1, concurrent_passes)
        self._slots: asyncio.Semaphore | None = None
        self._running: set[asyncio.Future[Any]] = set()
        self._answers: dict[TopicPartition, asyncio.Event] = {}
        self._sends: set[asyncio.Task[None]] = set()
        self.assign: AssignDir | None = None
        """Tells the controller a replica's new dir (AssignReplicasToDirs); None
        swaps without asking (no controller to tell)."""
        self.on_change: Callable[[], None] | None = None
        """Told when a replica's dir changed, or a move stopped half-assigned."""
        self.crash: Callable[[str], None] | None = None
        """Called at the swap's crash points (storage/moves/swap; tests only)."""

    # ------------------------------------------------------------------ the task
    async def run(self, move: Move, future: Log, is_current: Callable[[], bool]) -> None:
        """Carry ``move`` to its swap (see the module doc); ``is_current``: the
        move has not been cancelled or replaced."""
        key = (move.topic, move.partition)
        backoff = RETRY_BACKOFF_S
        state = await self._in_thread(load_future_state, future)
        while is_current():
            partition = self._partitions.get(key)
            if partition is None or partition.role is PartitionRole.STOPPED:
                log.info("[%s] no longer hosted here: the move stops", move.name)
                return
            if future.offline or partition.log.offline:
                log.warning("[%s] a log dir of the move failed: the move stops", move.name)
                return
            await self._throttle()
            try:
                copied = await self._pass(partition, future, state)
            except (KafkaError, OSError) as e:
                log.warning("[%s] copying to the future log failed (%s); retrying", move.name, e)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            backoff = RETRY_BACKOFF_S
            self.quota.record(copied, _monotonic_ms())
            move.copied_bytes += copied
            move.passes += 1
            if not is_current() or self._partitions.get(key) is not partition:
                return
            if copied < self._pass_size():
                # The pass reached the end: what was appended since, on the loop,
                # in the same turn as the decision and the swap, so a steady
                # stream of appends can neither keep the future log one pass
                # behind for ever nor land between the check and the swap.
                self._catch_up(move, partition.log, future, state)
            step = next_step(
                move, facts(partition.log), facts(future), assigns=self.assign is not None
            )
            if step is Step.ASSIGN:
                if not self._send_assignment(move, partition):
                    await asyncio.sleep(RETRY_BACKOFF_S)  # no topic id yet: the metadata brings it
            elif step is Step.WAIT:
                await self._wait_for_answer(key)
            elif step is Step.SWAP:
                if self._swap(move, partition, future):
                    return
            elif copied == 0:
                await asyncio.sleep(0.01)  # behind but nothing readable yet: do not spin

    async def _pass(self, partition: Partition, future: Log, state: ProducerStateManager) -> int:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._concurrent)
        async with self._slots:
            if not partition.producer_state.loaded:
                # Load a deferred producer state now, in the thread: after the swap
                # its snapshot's directory is gone (see _swap).
                await self._in_thread(partition.producer_state.active_producers)
            return int(
                await self._in_thread(copy_pass, partition.log, future, state, self._pass_size())
            )

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn`` in a worker thread; a cancelled task leaves it to finish,
        and ``wait_for_passes`` waits for it (the logs close after)."""
        running = asyncio.get_running_loop().run_in_executor(None, fn, *args)
        self._running.add(running)
        running.add_done_callback(self._running.discard)
        return await asyncio.shield(running)

    async def wait_for_passes(self) -> None:
        """Until every copy pass started has ended (before the logs close)."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    def _pass_size(self) -> int:
        quota = self.quota.max_bytes_per_second
        return max(1, min(self.pass_bytes, quota // 4 if quota < UNLIMITED else self.pass_bytes))

    async def _throttle(self) -> None:
        """Wait while the copies are over the quota; a quota raised meanwhile (a
        dynamic config) is seen within half a second."""
        while (delay_ms := self.quota.throttle_time_ms(_monotonic_ms())) > 0:
            await asyncio.sleep(min(delay_ms, 500) / 1000)

    # ------------------------------------------------------------------ the controller
    def _send_assignment(self, move: Move, partition: Partition) -> bool:
        """Send AssignReplicasToDirs for the move (False: not yet possible)."""
        assign = self.assign
        key = (move.topic, move.partition)
        topic_id = partition.topic_id
        answered = self._answers.setdefault(key, asyncio.Event())
        answered.clear()
        if assign is None or topic_id is None:
            return False
        move.state = ReassignmentState.QUEUED
        dir_ = self._dirs.manager_for_dir(move.target_dir)
        target = move.target_dir if dir_ is None else str(dir_.data_dir)

        async def send() -> None:
            accepted = False
            try:
                accepted = await assign(topic_id, move.partition, target)
            except Exception as e:
                log.info("[%s] AssignReplicasToDirs failed (%s); sending again", move.name, e)
            if move.state is not ReassignmentState.QUEUED:
                return  # cancelled meanwhile
            if accepted:
                move.state = ReassignmentState.ACCEPTED
                log.info("[%s] the controller recorded the replica in %s", move.name, target)
            else:
                await asyncio.sleep(RETRY_BACKOFF_S)
                move.state = ReassignmentState.NONE
            answered.set()

        task = asyncio.ensure_future(send())
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)
        return True

    async def _wait_for_answer(self, key: TopicPartition) -> None:
        answered = self._answers.setdefault(key, asyncio.Event())
        try:
            await asyncio.wait_for(answered.wait(), ANSWER_WAIT_S)
        except TimeoutError:
            pass  # copy on meanwhile

    def forget(self, key: TopicPartition) -> None:
        self._answers.pop(key, None)

    # ------------------------------------------------------------------ the swap
    def _catch_up(self, move: Move, source: Log, future: Log, state: ProducerStateManager) -> None:
        """Copy the few batches appended since the pass (on the loop)."""
        try:
            if not needs_preparing(source, future):
                limit = min(FINAL_COPY_BYTES, self._pass_size())
                copied = copy_batches(source, future, state, limit)
                self.quota.record(copied, _monotonic_ms())
                move.copied_bytes += copied
        except (KafkaError, OSError) as e:
            log.info("[%s] copying the last batches failed (%s); copying on", move.name, e)

    def _swap(self, move: Move, partition: Partition, future: Log) -> bool:
        """The swap, on the event loop, in the turn that found both logs alike."""
        source = partition.log
        if not caught_up(facts(source), facts(future)):
            return False
        from_dir = self._dirs.manager_of(move.topic, move.partition)
        to_dir = self._dirs.manager_for_dir(move.target_dir)
        if from_dir is None or to_dir is None:
            return False
        try:
            old, new = replace_current_with_future(
                from_dir, to_dir, move.topic, move.partition, self.crash
            )
        except SwapError as e:
            log.warning("[%s] the swap failed: %s", move.name, e)
            return False
        new.on_roll = old.on_roll
        partition.log = new
        partition.producer_state.partition_dir = new.directory
        move.state = ReassignmentState.EFFECTIVE
        log.info(
            "[%s] moved from %s to %s (%d bytes copied in %d passes)",
            move.name,
            from_dir.data_dir,
            to_dir.data_dir,
            move.copied_bytes,
            move.passes,
        )
        sync = asyncio.get_running_loop().run_in_executor(None, fsync_dir, to_dir.data_dir)
        self._running.add(sync)
        sync.add_done_callback(self._running.discard)
        if self.on_change is not None:
            self.on_change()
        return True
