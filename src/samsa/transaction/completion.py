"""The second phase of a commit or abort: markers on every partition, retried until written.

Once ``PrepareCommit``/``PrepareAbort`` is in the log the outcome is decided, so
the markers must reach every partition of the transaction whatever happens:
a partition whose leader is moving or unreachable is retried (after a short
backoff, on whichever broker leads it then) until it takes its marker.  Only a
partition that is gone (its topic deleted) or that refuses the marker for good
(a newer producer epoch or coordinator already wrote there) is given up.  When
every marker is written the coordinator records the transaction complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from samsa.errors import ErrorCode
from samsa.transaction.metadata import TransactionMetadata, TxnState
from samsa.transaction.store import MarkerWriter

log = logging.getLogger("samsa.transaction")

__all__ = ["MarkerCompletion"]

TopicPartition = tuple[str, int]
OnDone = Callable[[TransactionMetadata], Awaitable[None]]
_GIVE_UP = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID})


class MarkerCompletion:
    def __init__(self, markers: MarkerWriter, on_done: OnDone, backoff_ms: int) -> None:
        self.markers = markers
        self.on_done = on_done
        self.backoff_s = backoff_ms / 1000
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def busy(self, transactional_id: str) -> bool:
        task = self._tasks.get(transactional_id)
        return task is not None and not task.done()

    def start(self, meta: TransactionMetadata, coordinator_epoch: int) -> None:
        """Write the markers in the background, then tell the coordinator."""
        if self.busy(meta.transactional_id):
            return

        async def complete() -> None:
            await self.write_all(meta, coordinator_epoch)
            await self.on_done(meta)

        task = asyncio.ensure_future(complete())
        self._tasks[meta.transactional_id] = task
        task.add_done_callback(lambda t: self._forget(meta.transactional_id, t))

    async def wait(self, transactional_id: str, timeout_s: float) -> None:
        """Wait a while for a started completion (a client reading right after its
        commit then finds the markers written); it goes on regardless."""
        task = self._tasks.get(transactional_id)
        if task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), timeout_s)

    async def write_all(self, meta: TransactionMetadata, coordinator_epoch: int) -> None:
        commit = meta.state is TxnState.PREPARE_COMMIT
        pending = set(meta.partitions)
        while pending:
            errors = await self.markers.write_markers(
                meta.producer_id, meta.producer_epoch, coordinator_epoch, commit, sorted(pending)
            )
            for tp, code in errors.items():
                if code is ErrorCode.NONE or code in _GIVE_UP:
                    pending.discard(tp)
                elif not code.retriable:
                    log.warning(
                        "%s marker for %r refused by %s-%d for good: %s",
                        "COMMIT" if commit else "ABORT",
                        meta.transactional_id,
                        *tp,
                        code.name,
                    )
                    pending.discard(tp)
            if pending:
                await asyncio.sleep(self.backoff_s)

    def cancel_partition(self, partition: int, partition_for: Callable[[str], int]) -> None:
        """This broker is no longer the coordinator: the new one finishes the work."""
        for transactional_id, task in list(self._tasks.items()):
            if partition_for(transactional_id) == partition:
                task.cancel()

    async def cancel_all(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _forget(self, transactional_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(transactional_id) is task:
            del self._tasks[transactional_id]
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "completing the transaction of %r failed: %r", transactional_id, task.exception()
            )
